// Golden translations of the sample cluster: every Translation's name, namespace and owner, and every
// resource's kind, parent and exact body bytes, in order, as midonet-kubernetes writes them (the data, derived
// independently of this code, is in test/support/midonet-kubernetes.ts).
import { sampleClusterAsWritten as expected } from '../../test/support/midonet-kubernetes';
import { SAMPLE_CLUSTER_RESOURCE_COUNTS, sampleCluster, sampleClusterTranslations } from './sample-cluster';
import type { Translation } from './types';

describe('sample cluster, golden', () => {
  const actual = sampleClusterTranslations();

  test('yields exactly the expected Translations, in push order', () => {
    expect(actual.map((t) => t.name)).toEqual(expected.map((t) => t.name));
  });

  test.each(expected.map((e, i) => [e.name, e, i] as const))(
    '%s: namespace, owner, and each resource (kind, parent, body bytes) in order',
    (_name, want, index) => {
      const got = actual[index]!;
      expect(got.namespace).toBe(want.namespace);
      expect(got.ownerReferences.map((o) => `${o.kind}/${o.name}`)).toEqual(want.owner === null ? [] : [want.owner]);
      // JSON.stringify of the expected literal keeps its key order, so this pins Go's field order too.
      expect(got.resources).toEqual(
        want.resources.map(([kind, parent, body]) => ({ kind, parent, body: JSON.stringify(body) })),
      );
    },
  );

  test('owned Translations carry the owner reference, owner-uid label and deleter finalizer; globals carry the global label', () => {
    const cluster = sampleCluster();
    const owners = [...cluster.nodes, ...cluster.pods, cluster.service, cluster.endpoints];
    const check = (t: Translation) => {
      expect(t.finalizers).toEqual(['midonet.org/deleter']);
      if (t.namespace === 'kube-system') {
        expect(t).toMatchObject({ labels: { 'midonet.org/global': '' }, ownerReferences: [] });
        return;
      }
      const [ref] = t.ownerReferences;
      const owner = owners.find((o) => o.kind === ref!.kind && o.metadata.name === ref!.name)!;
      expect(t.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid },
      ]);
      expect(t.labels).toEqual({ 'midonet.org/owner-uid': owner.metadata.uid });
    };
    actual.forEach(check);
  });

  test('counts per MidoNet kind, for the end-to-end push', () => {
    const counts: Record<string, number> = {};
    for (const r of actual.flatMap((t) => t.resources)) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
    expect(counts).toEqual(SAMPLE_CLUSTER_RESOURCE_COUNTS);
  });
});
