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

describe('translateWithDependency: a dependency that cannot be translated yet', () => {
  const { nodes, pods } = sampleCluster();
  const node = nodes[0]!;
  const pod = pods.find((p) => p.spec.nodeName === node.metadata.name)!;
  const without = (...keys: string[]) => ({
    ...node,
    metadata: {
      ...node.metadata,
      annotations: Object.fromEntries(Object.entries(node.metadata.annotations).filter(([k]) => !keys.includes(k))),
    },
  });

  it.each([
    ['no host-id (the node annotator has not filled it yet)', without('midonet.org/host-id')],
    ['no tunnel-endpoint-ip', without('midonet.org/tunnel-endpoint-ip')],
    [
      'a host-id that is not a UUID',
      {
        ...node,
        metadata: { ...node.metadata, annotations: { ...node.metadata.annotations, 'midonet.org/host-id': 'x' } },
      },
    ],
  ])("makes its Pod wait, not fail (the Node's own workflow shows its error): %s", (_, unready) => {
    const result = translateWithDependency(pod, unready);
    expect(result.outcome).toBe('wait');
    expect(result.outcome === 'wait' && result.reason).toMatch(
      new RegExp(`^Node ${node.metadata.name}: field metadata`),
    );
  });

  it('still refuses a Pod for its own error', () => {
    const bad = { ...pod, status: { ...pod.status, podIP: 'not-an-ip' } };
    expect(translateWithDependency(bad, node).outcome).toBe('invalid');
  });
});
