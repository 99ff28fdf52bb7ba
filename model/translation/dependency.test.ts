import { translateWithDependency } from './dependency';
import { translate } from './index';
import { sampleCluster } from './sample-cluster';

describe('translateWithDependency', () => {
  const { nodes, pods } = sampleCluster();
  const pod = pods.find((p) => p.spec.nodeName === nodes[0]!.metadata.name)!;
  const bodies = (tenant?: string) => {
    const result = translateWithDependency(pod, nodes[0], tenant);
    if (result.outcome !== 'translated') throw new Error(`not translated: ${JSON.stringify(result)}`);
    return {
      bodies: result.translations.flatMap((t) => t.resources.map((r) => r.body)),
      dependency: result.dependencyTranslations,
    };
  };

  it("uses the workflow's tenant for IDs (MK seeds every ID with it), the default tenant when none is given", () => {
    const byDefault = bodies();
    expect(bodies('midonetkube')).toEqual(byDefault);
    const other = bodies('team-a');
    expect(other.bodies).not.toEqual(byDefault.bodies);
    // The Node's Translations the Pod waits for are the ones the Node's workflow writes in the same tenant.
    const nodeResult = translate(nodes[0]!, { tenant: 'team-a' });
    expect(other.dependency).toEqual(
      nodeResult.ok
        ? nodeResult.translations.map(({ namespace, name }) => ({ namespace, name }))
        : 'the Node translates',
    );
    expect(other.dependency).not.toEqual(byDefault.dependency);
  });
});
