// The object lifecycles end to end, shared by test/e2e-objects/ and by bench/: the real worker
// (runWorker), the real starter (createStarter, every kind, every namespace, as a deployment runs it) and the global
// setup workflow, on an embedded stack whose MidoNet emulator is seeded as a deployer would (the agents' hosts, the
// cluster router). Kubernetes objects are created from translation projections, with what a kubelet would report
// written through the status subresource. pusher-harness.ts serves the pusher alone (a Translation-only starter
// per namespace), which cannot drive Nodes, Pods, Services and Endpoints, hence this one.
import type { WaveSettings } from '../../model/deletion-guard';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import pino, { type Logger } from 'pino';
import { createMidonetClient, type MidonetClient } from '../../activities/midonet';
import { EmulatorAdmin, type StateDump } from '../../deploy/local/midonet';
import { startWorkerProcesses, type WorkerSettingValues } from '../../deploy/local/worker-process';
import { REFERRERS_ANNOTATION } from '../../activities/kubernetes';
import { loadKubeConfig } from '../../platform/kubernetes/kubeconfig';
import { MIDONET_USER, startTestStarter, terminateRunning, waitFor as waitUntilValue, workerSettingsOn } from './index';
import type { StackInfo } from '../../deploy/local/stack';
import type { LeaseOptions, Starter } from '../../starter/controller';
import { type RunningWorker } from '../../worker';
import { loadWorkerConfig, runWorker } from '../../cli/worker';
import { stateQuery, type LifecycleStateView } from '../../model/messages';
import { GLOBAL_MIDONET_WORKFLOW_ID, inCluster, TASK_QUEUE, workflowId, type ObjectRef } from '../../model/naming';
import { translate, translateGlobals } from '../../model/translation';
import { translateWithDependency } from '../../model/translation/dependency';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import {
  GLOBAL_LABEL,
  GLOBAL_NAMESPACE,
  type EndpointsProjection,
  type NodeProjection,
  type PodProjection,
  type ServiceProjection,
  type Translation,
} from '../../model/translation/types';
import { toProjection } from '../../model/translation/to-projection';
import type { EndpointsSource } from '../../platform/kubernetes/kinds';

export const TRANSLATIONS = { group: 'midonet.org', version: 'v1', plural: 'translations' } as const;
// The emulator accepts any well-formed credentials.

export const waitFor = <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 90_000,
  intervalMs = 250,
) => waitUntilValue(what, probe, timeoutMs, intervalMs);

export interface ObjectsHarness {
  info: StackInfo;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
  client: Client;
  admin: EmulatorAdmin;
  midonet: MidonetClient;
  /** One in this process, or the processes of `workerProcesses` (each with its `pid`), in start order. */
  workers: (Pick<RunningWorker, 'httpPort' | 'shutdown'> & { pid?: number })[];
  starter: Starter;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** MidoNet hosts the Nodes' `midonet.org/host-id` annotations name (their agents register them). */
  hosts: { id: string; name: string }[];
  /** Names the starter and its Lease. */
  identity: string;
  /** MidoNet tenant of the cluster (MIDONETKUBE_TENANT); the default one when absent. */
  tenant?: string;
  /** Take over the emulator as it is (what another controller left there) instead of resetting and seeding it. */
  keepEmulator?: boolean;
  /** The starter's re-list period (which restarts a workflow terminated by hand); its default when absent. */
  resyncMs?: number;
  /** The starter's coalescing window: 50 ms (tests react fast) unless given, e.g. the deployed default in the bench. */
  debounceMs?: number;
  /** The starter's Lease timings: short (tests take over fast) unless given, e.g. the deployed ones in the bench. */
  lease?: Pick<LeaseOptions, 'leaseDurationSeconds' | 'renewSeconds'>;
  /** The starter's guard against mass deletion (its defaults when absent). */
  massDeletion?: WaveSettings;
  /** Where the starter reads Endpoints from (STEWARD_ENDPOINTS_FROM); v1 Endpoints when absent. */
  endpointsFrom?: EndpointsSource;
  /**
   * Run the worker as `count` `steward worker` processes (their CPU and memory then measurable), each logging to
   * `logFile(index)`, all loading the workflow code from `workflowBundle` when given (as the image's workers do).
   */
  workerProcesses?: {
    count: number;
    logFile: (index: number) => string;
    workflowBundle?: string;
    /** A compiled tree to run them from (compileSteward), as the image does; this checkout through tsx when absent. */
    appRoot?: string;
  };
  /** Starts the workers some other way (the image's, in a container) with the settings and secrets the others get. */
  startWorkers?: (settings: WorkerSettingValues, secrets: Record<string, string>) => Promise<ObjectsHarness['workers']>;
  /** The worker's sticky cache (workflows kept in memory between tasks); the worker's default when absent. */
  maxCachedWorkflows?: number;
  /** How far the workers' heaps grow past their live objects between collections (STEWARD_HEAP_GROWTH_PERCENT). */
  heapGrowthPercent?: number;
  /** The installation's cluster ID (STEWARD_CLUSTER_ID): worker, starter and global setup under its prefix. */
  clusterId?: string;
  /** Where the workers write every thread's heap snapshot on SIGUSR2 (STEWARD_HEAP_SNAPSHOT_DIR). */
  heapSnapshotDir?: string;
  /** How long the global Translations may take to be Ready (longer when many objects start at once). */
  globalsTimeoutMs?: number;
  log?: Logger;
}

/** The deployer's cluster router (seed 001): the same body as the global Translation's, so the two never differ. */
const clusterRouter = (tenant?: string) => {
  const result = translateGlobals(tenant ? { tenant } : {});
  if (!result.ok) throw new Error(`the globals do not translate: ${result.error.message}`);
  return result.translations.flatMap((t) => t.resources).find((r) => r.kind === 'Router')!;
};

/** The emulator's admin endpoint and a client of its API. */
export function emulatorOf(info: StackInfo): { admin: EmulatorAdmin; midonet: MidonetClient } {
  if (!info.midonet.adminUrl) throw new Error('these tests need the MidoNet emulator (its admin endpoint)');
  return {
    admin: new EmulatorAdmin(info.midonet.adminUrl),
    midonet: createMidonetClient({ baseUrl: info.midonet.url, ...MIDONET_USER }),
  };
}

/** Resets the emulator and seeds it as a deployer would: the agents' hosts and the cluster router. */
export async function seedEmulator(
  info: StackInfo,
  hosts: { id: string; name: string }[],
  tenant?: string,
): Promise<{ admin: EmulatorAdmin; midonet: MidonetClient }> {
  const { admin, midonet } = emulatorOf(info);
  await admin.reset();
  for (const host of hosts) await admin.seedHost(host);
  await midonet.ensure(clusterRouter(tenant));
  return { admin, midonet };
}

/**
 * Resets and seeds the emulator, starts the worker, runs the global setup (default tenant) to completion, starts the
 * starter and waits until the global Translations are Ready: Nodes created afterwards find their parents there.
 */
export async function startObjectsHarness(
  info: StackInfo,
  {
    hosts,
    identity,
    tenant,
    keepEmulator,
    resyncMs,
    debounceMs = 50,
    lease,
    massDeletion,
    endpointsFrom,
    workerProcesses,
    startWorkers,
    maxCachedWorkflows,
    heapGrowthPercent,
    clusterId,
    heapSnapshotDir,
    globalsTimeoutMs = 90_000,
    log = pino({ level: process.env.STEWARD_E2E_LOG ?? 'error' }),
  }: HarnessOptions,
): Promise<ObjectsHarness> {
  const { admin, midonet } = keepEmulator ? emulatorOf(info) : await seedEmulator(info, hosts, tenant);

  const kubeConfig = loadKubeConfig(info.kubernetes.kubeconfig)!;
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const connection = await Connection.connect({ address: info.temporal.address });
  const client = new Client({ connection, namespace: info.temporal.namespace });

  const settings: WorkerSettingValues = {
    ...workerSettingsOn(info),
    ...(maxCachedWorkflows !== undefined ? { maxCachedWorkflows: String(maxCachedWorkflows) } : {}),
    ...(heapGrowthPercent !== undefined ? { heapGrowthPercent: String(heapGrowthPercent) } : {}),
    ...(clusterId ? { clusterId } : {}),
    ...(heapSnapshotDir ? { heapSnapshotDir } : {}),
  };
  // Secrets have no flag.
  const secrets = { MIDONET_PASSWORD: MIDONET_USER.password };
  const workers = startWorkers
    ? await startWorkers(settings, secrets)
    : workerProcesses
      ? await startWorkerProcesses(workerProcesses.count, (index) => ({
          settings,
          secrets,
          logFile: workerProcesses.logFile(index),
          ...(workerProcesses.appRoot ? { appRoot: workerProcesses.appRoot } : {}),
          ...(workerProcesses.workflowBundle
            ? { env: { STEWARD_WORKFLOW_BUNDLE: workerProcesses.workflowBundle } }
            : {}),
        })).then((children) =>
          children.map((child) => ({ httpPort: child.httpPort, pid: child.process.pid, shutdown: () => child.stop() })),
        )
      : [await runWorker(loadWorkerConfig(settings, secrets), { log })];
  await client.workflow.execute('globalMidonet', {
    workflowId: inCluster(GLOBAL_MIDONET_WORKFLOW_ID, clusterId),
    taskQueue: inCluster(TASK_QUEUE, clusterId),
    args: [tenant ? { tenant } : {}],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  const starter = startTestStarter({
    kubeConfig,
    temporalClient: client,
    identity,
    ...(tenant ? { tenant } : {}),
    ...(clusterId ? { clusterId, taskQueue: inCluster(TASK_QUEUE, clusterId) } : {}),
    ...(resyncMs ? { resyncMs } : {}),
    ...(lease ? { lease } : {}),
    ...(massDeletion ? { massDeletion } : {}),
    ...(endpointsFrom ? { endpointsFrom } : {}),
    debounceMs,
    logger: log,
  });
  const harness: ObjectsHarness = {
    info,
    core,
    custom,
    client,
    admin,
    midonet,
    workers,
    starter,
    async stop() {
      await starter.stop();
      await terminateRunning(client, 'end-to-end run done');
      await Promise.all(workers.map((worker) => worker.shutdown()));
      await connection.close();
    },
  };
  const globals = await listTranslations(harness, GLOBAL_NAMESPACE, GLOBAL_LABEL);
  await waitForReady(
    harness,
    'the global Translations',
    globals.map(({ metadata }) => metadata),
    globalsTimeoutMs,
  );
  return harness;
}

/**
 * A private stack and an objects harness on it for this test file, both stopped after the file. The harness is
 * returned before it starts (hooks run later) and filled in by beforeAll, so read its fields inside hooks and tests.
 */
export function objectsHarnessForFile(options: HarnessOptions): ObjectsHarness {
  const h = {} as ObjectsHarness;
  let stack: Stack | undefined;
  beforeAll(async () => {
    stack = await startPrivateStack();
    Object.assign(h, await startObjectsHarness(stack.info, options));
  });
  afterAll(async () => {
    // Not started: startObjectsHarness failed before there was anything to stop.
    if (Object.keys(h).length > 0) await h.stop();
    await stack?.stop();
  });
  return h;
}

export interface TranslationObject {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation?: number;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string }[];
    deletionTimestamp?: string;
  };
  resources: Translation['resources'];
  status?: {
    conditions?: { type: string; status: string; reason: string; message: string; observedGeneration?: number }[];
    childResources?: { kind: string; id: string; state: string }[];
  };
}

/** Translations of one namespace (every namespace when absent), optionally by label selector. */
export async function listTranslations(
  h: Pick<ObjectsHarness, 'custom'>,
  namespace?: string,
  labelSelector?: string,
): Promise<TranslationObject[]> {
  const list = (
    namespace
      ? await h.custom.listNamespacedCustomObject({
          ...TRANSLATIONS,
          namespace,
          ...(labelSelector ? { labelSelector } : {}),
        })
      : await h.custom.listClusterCustomObject({ ...TRANSLATIONS, ...(labelSelector ? { labelSelector } : {}) })
  ) as { items: TranslationObject[] };
  return list.items;
}

export async function readTranslation(
  h: Pick<ObjectsHarness, 'custom'>,
  namespace: string,
  name: string,
): Promise<TranslationObject | undefined> {
  try {
    return (await h.custom.getNamespacedCustomObject({ ...TRANSLATIONS, namespace, name })) as TranslationObject;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

export const readyOf = (t: TranslationObject) =>
  t.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

export async function isReady(h: Pick<ObjectsHarness, 'custom'>, namespace: string, name: string): Promise<boolean> {
  const t = await readTranslation(h, namespace, name);
  return t !== undefined && readyOf(t) && !t.metadata.deletionTimestamp;
}

/** Waits until every one of `translations` is Ready. */
export const waitForReady = (
  h: Pick<ObjectsHarness, 'custom'>,
  what: string,
  translations: { namespace: string; name: string }[],
  timeoutMs?: number,
) =>
  waitFor(
    `${what} Ready`,
    async () => (await Promise.all(translations.map((t) => isReady(h, t.namespace, t.name)))).every(Boolean),
    timeoutMs,
  );

/** The names of the Translations a Pod on `node` makes, its dependency's (the Node's) first. */
export function podTranslationNames(
  pod: PodProjection,
  node: NodeProjection,
  tenant: string,
): { namespace: string; name: string }[] {
  const translated = translateWithDependency(pod, node, tenant);
  if (translated.outcome !== 'translated')
    throw new Error(`Pod ${pod.metadata.name} does not translate: ${JSON.stringify(translated)}`);
  return [...translated.dependencyTranslations, ...translated.translations].map(({ namespace, name }) => ({
    namespace,
    name,
  }));
}

export const stateOf = (h: Pick<ObjectsHarness, 'client'>, ref: ObjectRef): Promise<LifecycleStateView> =>
  h.client.workflow.getHandle(workflowId(ref)).query(stateQuery);

/** What the object's page in the Temporal UI shows as its current details (markdown), through the SDK's own query. */
export const uiDetailsOf = async (h: Pick<ObjectsHarness, 'client'>, ref: ObjectRef): Promise<string> =>
  (
    await h.client.workflow
      .getHandle(workflowId(ref))
      .query<{ currentDetails?: string }>('__temporal_workflow_metadata')
  ).currentDetails ?? '';

/** Waits until the object's workflow answers `state` to the state query. */
export const waitForState = (h: Pick<ObjectsHarness, 'client'>, ref: ObjectRef, state: string, timeoutMs = 90_000) =>
  waitFor(
    `${workflowId(ref)} in state ${state}`,
    async () => {
      const view = await stateOf(h, ref);
      return view.state === state ? view : undefined;
    },
    timeoutMs,
  );

// Kubernetes objects from translation projections. What no controller of the embedded stack writes (a kubelet's
// Pod status) goes through the status subresource, as the kubelet would.

const withoutAnnotations = (annotations: Record<string, string>) =>
  Object.keys(annotations).length ? { annotations } : {};

export async function createNode(h: Pick<ObjectsHarness, 'core'>, node: NodeProjection): Promise<k8s.V1Node> {
  return h.core.createNode({
    body: {
      metadata: { name: node.metadata.name, ...withoutAnnotations(node.metadata.annotations) },
      spec: { podCIDR: node.spec.podCIDR },
      status: { addresses: node.status.addresses },
    },
  });
}

/** `runtimeClassName` makes it a peer pod (`kata-remote`) when the starter's runtime classes name it. */
export async function createPod(
  h: Pick<ObjectsHarness, 'core'>,
  pod: PodProjection,
  runtimeClassName?: string,
): Promise<k8s.V1Pod> {
  const { name, namespace, annotations } = pod.metadata;
  const created = await h.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name, ...withoutAnnotations(annotations) },
      spec: {
        nodeName: pod.spec.nodeName,
        ...(runtimeClassName ? { runtimeClassName } : {}),
        containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
      },
    },
  });
  if (!pod.status.podIP && !pod.status.phase) return created;
  return h.core.patchNamespacedPodStatus(
    {
      name,
      namespace,
      body: {
        status: {
          phase: pod.status.phase,
          ...(pod.status.podIP ? { podIP: pod.status.podIP, podIPs: [{ ip: pod.status.podIP }] } : {}),
        },
      },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

/** Without a selector, so no controller writes its Endpoints: the test does. */
export async function createService(
  h: Pick<ObjectsHarness, 'core'>,
  service: ServiceProjection,
): Promise<k8s.V1Service> {
  const { name, namespace } = service.metadata;
  return h.core.createNamespacedService({
    namespace,
    body: {
      metadata: { name },
      spec: { type: service.spec.type, clusterIP: service.spec.clusterIP, ports: service.spec.ports },
    },
  });
}

export async function createEndpoints(
  h: Pick<ObjectsHarness, 'core'>,
  endpoints: EndpointsProjection,
): Promise<k8s.V1Endpoints> {
  const { name, namespace } = endpoints.metadata;
  return h.core.createNamespacedEndpoints({ namespace, body: { metadata: { name }, subsets: endpoints.subsets } });
}

/** A Pod deleted at once: no kubelet confirms a graceful deletion here. */
export const deletePod = (h: Pick<ObjectsHarness, 'core'>, namespace: string, name: string) =>
  h.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });

/**
 * Translations of the live Services and Endpoints that a test did not create (the API server's own `kubernetes`
 * Service): the starter watches every namespace, so they are pushed too and belong to what the emulator holds.
 */
export async function translationsOfOthers(h: Pick<ObjectsHarness, 'core'>, skip: ObjectRef[]): Promise<Translation[]> {
  const skipped = (kind: string, namespace: string | undefined, name: string | undefined) =>
    skip.some((r) => r.kind === kind && r.namespace === namespace && r.name === name);
  const services = (await h.core.listServiceForAllNamespaces()).items.filter(
    (s) => !skipped('Service', s.metadata?.namespace, s.metadata?.name),
  );
  const endpoints = (await h.core.listEndpointsForAllNamespaces()).items.filter(
    (e) => !skipped('Endpoints', e.metadata?.namespace, e.metadata?.name),
  );
  const out: Translation[] = [];
  for (const object of [
    ...services.map((s) => ({ ...s, kind: 'Service' })),
    ...endpoints.map((e) => ({ ...e, kind: 'Endpoints' })),
  ]) {
    const projection = toProjection(object);
    if (!projection.ok)
      throw new Error(`${object.kind} ${object.metadata?.name} does not project: ${projection.error.message}`);
    const service =
      projection.projection.kind === 'Endpoints'
        ? services.find(
            (s) => s.metadata?.namespace === object.metadata?.namespace && s.metadata?.name === object.metadata?.name,
          )
        : undefined;
    const serviceProjection = service ? toProjection({ ...service, kind: 'Service' }) : undefined;
    const result = translate(
      projection.projection,
      serviceProjection?.ok && serviceProjection.projection.kind === 'Service'
        ? { service: serviceProjection.projection }
        : {},
    );
    if (!result.ok)
      throw new Error(`${object.kind} ${object.metadata?.name} does not translate: ${result.error.message}`);
    out.push(...result.translations);
  }
  return out;
}

/** IDs per kind in the emulator, sorted; Routes MidoNet adds itself (`Local`) are left out. */
export async function emulatorIds(h: Pick<ObjectsHarness, 'admin'>): Promise<Record<string, string[]>> {
  return idsOfDump(await h.admin.dump());
}

/** `emulatorIds` of a dump already read: duplicates stay (each entry gives one key). */
export function idsOfDump(dump: StateDump): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [kind, entries] of Object.entries(dump)) {
    const kept = kind === 'Route' ? entries.filter((e) => e.type !== 'Local') : entries;
    if (kept.length) out[kind] = kept.map((e) => (typeof e.id === 'string' ? e.id : keyOf(kind, e))).sort();
  }
  return out;
}

/**
 * What `translations` must leave in the emulator, in the form of `emulatorIds`: IDs for kinds that have one, a key
 * of the fields that identify an entry for the others (links, bindings, table entries), plus the seeded hosts.
 */
export function expectedIds(translations: Translation[], hosts: { id: string }[]): Record<string, string[]> {
  const out: Record<string, string[]> = { Host: hosts.map((h) => h.id) };
  for (const r of translations.flatMap((t) => t.resources)) {
    const body = JSON.parse(r.body) as Record<string, unknown>;
    (out[r.kind] ??= []).push(
      typeof body.id === 'string' ? body.id : keyOf(r.kind, { ...body, ...parentField(r.kind, r.parent) }),
    );
  }
  for (const [kind, ids] of Object.entries(out)) out[kind] = [...new Set(ids)].sort();
  return out;
}

// The fields that identify an entry of a kind without an ID, as the emulator dumps it; the parent named as it names it.
const parentFields: Record<string, string> = {
  PortLink: 'portId',
  TunnelZoneHost: 'tunnelZoneId',
  HostInterfacePort: 'hostId',
  MACPort: 'bridgeId',
  IPv4MACPair: 'bridgeId',
};
const keyFields: Record<string, string[]> = {
  PortLink: ['portId', 'peerId'],
  TunnelZoneHost: ['tunnelZoneId', 'hostId', 'ipAddress'],
  HostInterfacePort: ['hostId', 'portId', 'interfaceName'],
  MACPort: ['bridgeId', 'macAddr', 'portId'],
  IPv4MACPair: ['bridgeId', 'ip', 'mac'],
};
const parentField = (kind: string, parent: string) => (parentFields[kind] ? { [parentFields[kind]]: parent } : {});
function keyOf(kind: string, entry: Record<string, unknown>): string {
  const fields = (keyFields[kind] ?? Object.keys(entry).sort()).map((f) => String(entry[f]));
  // A link is symmetric: the dump may list it from either end.
  return kind === 'PortLink' ? fields.sort().join('↔') : fields.join('/');
}

export async function eventsAbout(
  h: Pick<ObjectsHarness, 'core'>,
  kind: string,
  name: string,
): Promise<k8s.CoreV1Event[]> {
  return (
    await h.core.listEventForAllNamespaces({ fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name}` })
  ).items;
}

/** The referrers annotation of a Node, as `<kind> <namespace>/<name>` strings. */
export async function referrersOf(h: Pick<ObjectsHarness, 'core'>, nodeName: string): Promise<string[]> {
  const node = await h.core.readNode({ name: nodeName });
  const text = node.metadata?.annotations?.[REFERRERS_ANNOTATION];
  return text ? (JSON.parse(text) as ObjectRef[]).map((r) => `${r.kind} ${r.namespace ?? ''}/${r.name}`) : [];
}
