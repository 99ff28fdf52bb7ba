// An installation's own settings end to end. MIDONETKUBE_TENANT: with a tenant other than the default, a Node and a
// Pod go into MidoNet in that tenant (its `tenantId`, and IDs seeded with it, as midonet-kubernetes does), from the
// starter's setting through the object workflows, their Translations and the pusher. STEWARD_CLUSTER_ID: every
// workflow, the task queue included, carries the cluster's prefix, a lifecycle signals its referrers under it, the
// commands find an object by its name, and another cluster's starter in the same Temporal namespace leaves it alone.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { startTestStarter } from '../support';
import { dependencyChangedSignal, stateQuery } from '../../model/messages';
import { workflowId } from '../../model/naming';
import { loadKubeConfig } from '../../platform/kubernetes/kubeconfig';
import { DEFAULT_TENANT, nodeIds, podPortId } from '../../model/translation/ids';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createNode,
  createPod,
  objectsHarnessForFile,
  podTranslationNames,
  readTranslation,
  waitFor,
  waitForReady,
} from '../support/objects-harness';

const TENANT = 'team-a';
const CLUSTER = 'east';
const cluster = sampleCluster();
const node = cluster.nodes[0]!;
const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
const podRef = { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name } as const;

// Its own stack: its global setup and cluster router are the other tenant's, its workflows another cluster's.
const h = objectsHarnessForFile({
  hosts: cluster.hosts,
  identity: 'e2e-installation',
  tenant: TENANT,
  clusterId: CLUSTER,
});

const runningIds = async () => {
  const ids: string[] = [];
  for await (const w of h.client.workflow.list({ query: 'ExecutionStatus = "Running"' })) ids.push(w.workflowId);
  return ids.sort();
};

it("puts a Node's bridge and a Pod's port in the configured tenant, with that tenant's IDs", async () => {
  await createNode(h, node);
  await createPod(h, pod);
  await waitForReady(h, 'the Node and Pod Translations', podTranslationNames(pod, node, TENANT));

  const dump = await h.admin.dump();
  const bridge = dump.Bridge.find((b) => b.id === nodeIds(TENANT, node.metadata.name).bridge);
  expect(bridge).toMatchObject({ tenantId: TENANT });
  expect(dump.Bridge.some((b) => b.id === nodeIds(DEFAULT_TENANT, node.metadata.name).bridge)).toBe(false);
  expect(dump.Port.map((p) => p.id)).toContain(podPortId(TENANT, pod.metadata.namespace, pod.metadata.name));
});

it("runs every workflow under the cluster's prefix, on its own task queue", async () => {
  const ids = await runningIds();
  expect(ids).toEqual(expect.arrayContaining([`${CLUSTER}/node/${node.metadata.name}`, workflowId(podRef, CLUSTER)]));
  expect(ids.filter((id) => !id.startsWith(`${CLUSTER}/`))).toEqual([]);
  for (const id of [workflowId(podRef, CLUSTER), `${CLUSTER}/global/midonet`])
    expect((await h.client.workflow.getHandle(id).describe()).taskQueue).toBe(`${CLUSTER}/steward`);
});

it('finds the object by its name in the commands, under the same cluster ID', async () => {
  const run = promisify(execFile);
  const bin = join(__dirname, '..', '..', 'bin', 'steward.cjs');
  const target = `pod/${pod.metadata.namespace}/${pod.metadata.name}`;
  const address = ['--address', h.info.temporal.address];
  const status = await run(process.execPath, [bin, 'status', target, ...address, '--cluster-id', CLUSTER]);
  expect(status.stdout).toMatch(/state: +\w+/);
  const list = await run(process.execPath, [bin, 'list', '-A', '-o', 'name', ...address], {
    env: { ...process.env, STEWARD_CLUSTER_ID: CLUSTER },
  });
  expect(list.stdout).toContain(`pod/${pod.metadata.namespace}/${pod.metadata.name}`);
  // Without it the object is another cluster's, which has no such workflow.
  const elsewhere = await run(process.execPath, [bin, 'status', target, ...address]).then(
    () => undefined,
    (error: { code: number; stderr: string }) => error,
  );
  expect(elsewhere?.code).toBe(1);
});

it("leaves the workflows of one cluster alone when another cluster's starter shares the namespace", async () => {
  const eastPod = h.client.workflow.getHandle(workflowId(podRef, CLUSTER));
  const before = (await eastPod.query(stateQuery)).state;
  const west = startTestStarter({
    kubeConfig: loadKubeConfig(h.info.kubernetes.kubeconfig)!,
    temporalClient: h.client,
    identity: 'e2e-installation-west',
    clusterId: 'west',
    taskQueue: 'west/steward',
    debounceMs: 50,
    logger: pino({ level: 'error' }),
  });
  try {
    // It starts lifecycles of its own (no worker polls west/steward: they wait) and, leading, repairs against the
    // running workflows it lists; a second later it has told whatever it took for gone.
    await waitFor('the west starter to start its lifecycles', async () => {
      const stats = west.stats();
      return (
        stats.isLeader &&
        stats.synced &&
        stats.pending === 0 &&
        (await runningIds()).includes(workflowId(podRef, 'west'))
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(west.stats().repaired).toBe(0);
  } finally {
    await west.stop();
  }
  expect((await eastPod.query(stateQuery)).state).toBe(before);
  await waitForReady(h, 'the Node and Pod Translations', podTranslationNames(pod, node, TENANT), 5_000);
});

it('tells a Pod its Node is gone under the same prefix', async () => {
  await h.core.deleteNode({ name: node.metadata.name });
  const [portTranslation] = podTranslationNames(pod, node, TENANT).slice(-1);
  const waiting = await waitFor("the Pod's Translation waiting for its Node", async () => {
    const t = await readTranslation(h, portTranslation!.namespace, portTranslation!.name);
    const ready = t?.status?.conditions?.find((c) => c.type === 'Ready');
    return ready?.status === 'False' ? ready : undefined;
  });
  expect([waiting.reason, waiting.message.includes(node.metadata.name)]).toEqual(['WaitingForDependency', true]);
  // From the Node's workflow itself, not only from the pushers' notices: it found its referrer's workflow.
  const history = await h.client.workflow.getHandle(workflowId(podRef, CLUSTER)).fetchHistory();
  const signals = (history.events ?? []).map((e) => e.workflowExecutionSignaledEventAttributes?.signalName);
  expect(signals).toContain(dependencyChangedSignal.name);
});
