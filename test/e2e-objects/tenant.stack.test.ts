// MIDONETKUBE_TENANT end to end: with a tenant other than the default, a Node and a Pod go into MidoNet in that
// tenant (its `tenantId`, and IDs seeded with it, as midonet-kubernetes does), from the starter's setting through the
// object workflows, their Translations and the pusher.
import { DEFAULT_TENANT, nodeIds, podPortId } from '../../model/translation/ids';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createNode,
  createPod,
  objectsHarnessForFile,
  podTranslationNames,
  waitForReady,
} from '../support/objects-harness';

const TENANT = 'team-a';
const cluster = sampleCluster();

// Its own stack: its global setup and cluster router are the other tenant's.
const h = objectsHarnessForFile({ hosts: cluster.hosts, identity: 'e2e-tenant', tenant: TENANT });

it("puts a Node's bridge and a Pod's port in the configured tenant, with that tenant's IDs", async () => {
  const node = cluster.nodes[0]!;
  const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
  await createNode(h, node);
  await createPod(h, pod);
  await waitForReady(h, 'the Node and Pod Translations', podTranslationNames(pod, node, TENANT));

  const dump = await h.admin.dump();
  const bridge = dump.Bridge.find((b) => b.id === nodeIds(TENANT, node.metadata.name).bridge);
  expect(bridge).toMatchObject({ tenantId: TENANT });
  expect(dump.Bridge.some((b) => b.id === nodeIds(DEFAULT_TENANT, node.metadata.name).bridge)).toBe(false);
  expect(dump.Port.map((p) => p.id)).toContain(podPortId(TENANT, pod.metadata.namespace, pod.metadata.name));
});
