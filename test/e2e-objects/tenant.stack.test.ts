// MIDONETKUBE_TENANT end to end: with a tenant other than the default, a Node and a Pod go into MidoNet in that
// tenant (its `tenantId`, and IDs seeded with it, as midonet-kubernetes does), from the starter's setting through the
// object workflows, their Translations and the pusher.
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { translateWithDependency } from '../../model/translation/dependency';
import { DEFAULT_TENANT, nodeIds, podPortId } from '../../model/translation/ids';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createNode,
  createPod,
  isReady,
  startObjectsHarness,
  waitFor,
  type ObjectsHarness,
} from '../support/objects-harness';

const TENANT = 'team-a';
const cluster = sampleCluster();

let stack: Stack;
let h: ObjectsHarness;
beforeAll(async () => {
  // Its own stack: its global setup and cluster router are the other tenant's.
  stack = await startPrivateStack();
  h = await startObjectsHarness(stack.info, { hosts: cluster.hosts, identity: 'e2e-tenant', tenant: TENANT });
});
afterAll(async () => {
  await h?.stop();
  await stack?.stop();
});

it("puts a Node's bridge and a Pod's port in the configured tenant, with that tenant's IDs", async () => {
  const node = cluster.nodes[0]!;
  const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
  await createNode(h, node);
  await createPod(h, pod);
  const translated = translateWithDependency(pod, node, TENANT);
  if (translated.outcome !== 'translated')
    throw new Error(`the sample Pod does not translate: ${JSON.stringify(translated)}`);
  const names = [...translated.dependencyTranslations, ...translated.translations].map(({ namespace, name }) => ({
    namespace,
    name,
  }));
  await waitFor('the Node and Pod Translations Ready', async () =>
    (await Promise.all(names.map((t) => isReady(h, t.namespace, t.name)))).every(Boolean),
  );

  const dump = await h.admin.dump();
  const bridge = dump.Bridge.find((b) => b.id === nodeIds(TENANT, node.metadata.name).bridge);
  expect(bridge).toMatchObject({ tenantId: TENANT });
  expect(dump.Bridge.some((b) => b.id === nodeIds(DEFAULT_TENANT, node.metadata.name).bridge)).toBe(false);
  expect(dump.Port.map((p) => p.id)).toContain(podPortId(TENANT, pod.metadata.namespace, pod.metadata.name));
});
