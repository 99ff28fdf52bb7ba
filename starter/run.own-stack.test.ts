// The task queue is one setting: a worker and a starter given STEWARD_TASK_QUEUE (loaded and run as `steward worker`
// and `steward starter` do) drive a Node created in the real API server to Ready Translations in the MidoNet emulator,
// and every workflow and the sweeper's Schedule go to that queue, none to the default one. A stack of its own, so
// nothing another file left running is on either queue. Last, the same two processes of a peer-pods-only installation
// (STEWARD_BACKENDS=peerpods, no MidoNet setting) leave the MidoNet kinds alone and serve a PeerPod.
import * as k8s from '@kubernetes/client-node';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import pino from 'pino';
import { createMidonetClient } from '../activities/midonet';
import type { Stack } from '../deploy/local';
import { EmulatorAdmin } from '../deploy/local/midonet';
import { startPrivateStack } from '../deploy/local/jest/stack-info';
import { stackEnv } from '../test/support';
import { createNode, createPod, listTranslations, readyOf, waitFor } from '../test/support/objects-harness';
import { libvirtBackend } from '../test/support/cloud-backends';
import { writeAsCloudApiAdaptor, readPeerPod } from '../test/support/peerpods-harness';
import { stateQuery } from '../model/messages';
import { type RunningWorker } from '../worker';
import { runWorker } from '../cli/worker';
import { loadWorkerConfig } from '../cli/worker';
import { GLOBAL_MIDONET_WORKFLOW_ID, inCluster, SWEEP_SCHEDULE_ID, TASK_QUEUE, workflowId } from '../model/naming';
import { translate, translateGlobals } from '../model/translation';
import { sampleCluster } from '../model/translation/sample-cluster';
import { loadStarterConfig } from './config';
import { runStarter, type RunningStarter } from './run';
import { lifecycleStates } from '../workflows/machines';

const taskQueue = `steward-elsewhere-${Date.now().toString(36)}`;
const log = pino({ level: process.env.STEWARD_E2E_LOG ?? 'error' });
const cluster = sampleCluster();
const node = cluster.nodes[0]!;

const startedAt = Date.now();
let stack: Stack;
let worker: RunningWorker | undefined;
let starter: RunningStarter | undefined;
let client: Client;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;

beforeAll(async () => {
  stack = await startPrivateStack();
  const { info } = stack;
  // As a deployer would: the agents' hosts registered, the cluster router created.
  const admin = new EmulatorAdmin(info.midonet.adminUrl!);
  await admin.reset();
  for (const host of cluster.hosts) await admin.seedHost(host);
  const env: NodeJS.ProcessEnv = {
    ...stackEnv(info),
    STEWARD_TASK_QUEUE: taskQueue,
    STEWARD_HTTP_HOST: '127.0.0.1',
    STEWARD_HTTP_PORT: '0',
    STEWARD_STARTER_HTTP_HOST: '127.0.0.1',
    STEWARD_STARTER_HTTP_PORT: '0',
    STEWARD_LOG_LEVEL: 'error',
  };
  const workerConfig = loadWorkerConfig({}, env);
  await createMidonetClient(workerConfig.midonet!).ensure(clusterRouter());
  worker = await runWorker(workerConfig, { log });
  client = worker.client;
  starter = await runStarter(loadStarterConfig({}, env), log, { lifecycleStates, objectCountIntervalMs: 500 });
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
});

afterAll(async () => {
  await starter?.stop();
  await worker?.shutdown();
  await stack?.stop();
});

/** The deployer's cluster router: the body of the global Translation's, so the two never differ. */
function clusterRouter() {
  const result = translateGlobals({});
  if (!result.ok) throw new Error(`the globals do not translate: ${result.error.message}`);
  return result.translations.flatMap((t) => t.resources).find((r) => r.kind === 'Router')!;
}

/** Workflow ids on a task queue, as visibility lists them. */
async function idsOn(queue: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of client.workflow.list({ query: `TaskQueue = "${queue}"` })) ids.push(wf.workflowId);
  return ids.sort();
}

describe('worker and starter on a task queue other than the default', () => {
  it('bring a Node created in the API server to Ready Translations, every workflow and the Schedule on that queue, none on the default one', async () => {
    const created = await createNode({ core }, node);
    const translation = translate(node, {});
    if (!translation.ok) throw new Error(`the sample Node does not translate: ${translation.error.message}`);
    const owned = await waitFor(
      `the ${translation.translations.length} Translations of Node ${node.metadata.name} Ready`,
      async () => {
        const mine = (await listTranslations({ custom })).filter((t) =>
          t.metadata.ownerReferences?.some((o) => o.uid === created.metadata!.uid),
        );
        return mine.length === translation.translations.length && mine.every(readyOf) && mine;
      },
    );
    expect(owned.map((t) => t.metadata.name).sort()).toEqual(translation.translations.map((t) => t.name).sort());

    const started = [GLOBAL_MIDONET_WORKFLOW_ID, workflowId({ kind: 'Node', name: node.metadata.name })];
    const onQueue = await waitFor('the workflows listed on the task queue', async () => {
      const ids = await idsOn(taskQueue);
      return started.every((id) => ids.includes(id)) && ids;
    });
    // The Node's workflow pushed its Translations itself: none has a workflow of its own.
    for (const t of owned)
      expect(onQueue).not.toContain(
        workflowId({ kind: 'Translation', namespace: t.metadata.namespace, name: t.metadata.name }),
      );
    expect((await client.workflow.getHandle(started[1]!).describe()).taskQueue).toBe(taskQueue);
    expect((await client.schedule.getHandle(SWEEP_SCHEDULE_ID).describe()).action).toMatchObject({
      type: 'startWorkflow',
      taskQueue,
    });
    expect(await idsOn(TASK_QUEUE)).toEqual([]);
  });

  it("serves the starter's /healthz, /readyz (every kind listed, the Lease known) and /metrics: it leads, what it sent, the last re-list", async () => {
    const url = (path: string) => `http://127.0.0.1:${starter!.httpPort}${path}`;
    const health = await fetch(url('/healthz'));
    expect([health.status, await health.json()]).toEqual([200, { ok: true, problems: [] }]);
    const ready = await waitFor('the starter ready', async () => {
      const reply = await fetch(url('/readyz'));
      return reply.status === 200 && (await reply.json());
    });
    expect(ready).toEqual({ ready: true, problems: [] });

    const metrics = await (await fetch(url('/metrics'))).text();
    const value = (sample: string) => {
      const found = new RegExp(`^${sample.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics);
      if (!found) throw new Error(`no ${sample} in the starter's /metrics:\n${metrics}`);
      return Number(found[1]);
    };
    expect(value('steward_starter_leader')).toBe(1);
    expect(value('steward_starter_queue_depth')).toBeGreaterThanOrEqual(0);
    // The Node's Observation at least, counted as the Node workflow's; every attempt timed.
    const sent = value('steward_starter_sends_total{kind="Node",result="sent"}');
    expect(sent).toBeGreaterThanOrEqual(1);
    expect(value('steward_starter_send_duration_seconds_count{kind="Node",result="sent"}')).toBe(sent);
    expect(value('steward_starter_sends_total{kind="Node",result="permanent_error"}')).toBe(0);
    expect(value('steward_starter_informer_restarts_total{kind="Pod"}')).toBe(0);
    const relist = value('steward_starter_last_relist_timestamp_seconds');
    expect(relist).toBeGreaterThanOrEqual(Math.floor(startedAt / 1000));
    expect(relist).toBeLessThanOrEqual(Date.now() / 1000);
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(0);
    // The leader counts the running lifecycle workflows in Temporal's visibility store: the Node's among them.
    await waitFor('steward_objects for the Node', async () => {
      const page = await (await fetch(url('/metrics'))).text();
      return /^steward_objects\{kind="Node",state="[\w.]+"\} [1-9]/m.test(page) || undefined;
    });
  });
});

// Last: it stops the starter above, whose installation (both backends) would serve the same PeerPod.
describe('a peer-pods-only installation (STEWARD_BACKENDS=peerpods), as `steward worker` and `steward starter` load it', () => {
  const clusterId = 'pp';
  const queue = `steward-peerpods-${Date.now().toString(36)}`;
  const marker = `steward-run-pp-${Date.now().toString(36)}`;

  it("starts no global setup and gives a Node, a Service and a plain Pod no workflow, while cloud-api-adaptor's PeerPod is served to its release; its Schedule sweeps the cloud alone", async () => {
    await starter?.stop();
    starter = undefined;
    const { info } = stack;
    // No MidoNet setting at all: the worker needs none.
    const env: NodeJS.ProcessEnv = {
      TEMPORAL_ADDRESS: info.temporal.address,
      TEMPORAL_NAMESPACE: info.temporal.namespace,
      KUBECONFIG: info.kubernetes.kubeconfig,
      STEWARD_BACKENDS: 'peerpods',
      STEWARD_CLUSTER_ID: clusterId,
      STEWARD_TASK_QUEUE: queue,
      STEWARD_LEASE_NAME: 'steward-peerpods-only',
      STEWARD_CLOUD_PROVIDER: 'libvirt',
      LIBVIRT_URI: info.libvirt.uri,
      STEWARD_CLOUD_MARKER: marker,
      STEWARD_HTTP_HOST: '127.0.0.1',
      STEWARD_HTTP_PORT: '0',
      STEWARD_STARTER_HTTP_HOST: '127.0.0.1',
      STEWARD_STARTER_HTTP_PORT: '0',
      STEWARD_LOG_LEVEL: 'error',
    };
    const ppWorker = await runWorker(loadWorkerConfig({}, env), { log });
    const ppStarter = await runStarter(loadStarterConfig({}, env), log, { lifecycleStates });
    try {
      const [plainPod] = cluster.pods;
      await createNode({ core }, cluster.nodes[1]!);
      const service = { namespace: 'default', name: 'web-pp' };
      await core.createNamespacedService({
        namespace: service.namespace,
        body: { metadata: { name: service.name }, spec: { ports: [{ port: 80 }] } },
      });
      await createPod({ core }, plainPod!);
      // cloud-api-adaptor's peer pod: a Pod of no runtime class Steward serves, its VM, and the PeerPod it writes.
      const owner = await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'caa-pp' },
          spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
        },
      });
      const instanceId = await libvirtBackend(info, marker).createUnmarked(`podvm-caa-pp-${marker.slice(-8)}`);
      const peerPod = await writeAsCloudApiAdaptor(
        { custom },
        { name: 'caa-pp', uid: owner.metadata!.uid! },
        'libvirt',
        instanceId,
        {
          suffix: 'b4ck3',
        },
      );
      const peerPodId = inCluster(workflowId({ kind: 'PeerPod', namespace: 'default', name: peerPod }), clusterId);
      await waitFor('the PeerPod tracked', async () => {
        const view = await client.workflow
          .getHandle(peerPodId)
          .query(stateQuery)
          .catch(() => undefined);
        return view?.state === 'tracked.tracking';
      });
      await core.deleteNamespacedPod({ namespace: 'default', name: 'caa-pp' });
      await waitFor(
        'the PeerPod released and gone',
        async () => (await readPeerPod({ custom }, peerPod)) === undefined,
        60_000,
      );

      // The starter sent everything it watches by now (the PeerPod came after the rest); give a stray start a moment.
      // Asked of each workflow by id: visibility lags, a description does not.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const exists = (id: string) =>
        client.workflow
          .getHandle(id)
          .describe()
          .then(
            () => true,
            (error: unknown) => {
              if (error instanceof WorkflowNotFoundError) return false;
              throw error;
            },
          );
      expect(await exists(peerPodId)).toBe(true);
      const unwanted = [
        GLOBAL_MIDONET_WORKFLOW_ID,
        workflowId({ kind: 'Node', name: cluster.nodes[1]!.metadata.name }),
        workflowId({ kind: 'Service', ...service }),
        workflowId({ kind: 'Pod', namespace: plainPod!.metadata.namespace, name: plainPod!.metadata.name }),
        workflowId({ kind: 'Pod', namespace: 'default', name: 'caa-pp' }),
      ].map((id) => inCluster(id, clusterId));
      const started = await Promise.all(unwanted.map(async (id) => [id, await exists(id)] as const));
      expect(started.filter(([, found]) => found).map(([id]) => id)).toEqual([]);
      const schedule = await client.schedule.getHandle(inCluster(SWEEP_SCHEDULE_ID, clusterId)).describe();
      expect(schedule.action).toMatchObject({
        type: 'startWorkflow',
        // The cluster ID prefixes the task queue too.
        taskQueue: inCluster(queue, clusterId),
        args: [{ backends: ['cloud'] }],
      });
    } finally {
      await ppStarter.stop();
      await ppWorker.shutdown();
    }
  });
});
