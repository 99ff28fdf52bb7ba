// Object scenarios (burst, churn) run twice on one stack: first Steward (the real worker and starter of the objects
// harness), then, once Steward is stopped, the direct reconciler (bench/direct/), each in a fresh namespace with
// fresh Nodes. A model of what the scenario wrote says what MidoNet must hold and no longer hold; convergence is
// read in the emulator and in the Translations' Ready conditions, never inferred. Costs are measured around the
// scenario's window and given per Pod (or per change).
import { DEFAULT_WAVE } from '../model/deletion-guard';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import type { StackInfo } from '../deploy/local';
import { loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { DEFAULT_LEASE } from '../starter/controller';
import { starterSettings } from '../starter/config';
import { duration } from '../platform/settings';
import { workerSettings } from '../cli/worker';
import type { EmulatorAdmin } from '../deploy/local/midonet';
import type { MidonetClient } from '../activities/midonet';
import {
  createNode,
  emulatorIds,
  expectedIds,
  listTranslations,
  readyOf,
  startObjectsHarness,
  waitFor,
  type ObjectsHarness,
} from '../test/support/objects-harness';
import { translate } from '../model/translation';
import { type KubernetesProjection, type NodeProjection, type Translation } from '../model/translation/types';
import { toProjection } from '../model/translation/to-projection';
import { startDirectReconciler, type DirectReconciler } from './direct/reconciler';
import {
  counted,
  sharedProcesses,
  startMeter,
  temporalProcesses,
  workerActivities,
  workerCache,
  type CpuShares,
  type Usage,
} from './measure';
import { heapSection, snapshotWorkers, type WorkerHeapAtPeak } from './heap-peak';
import type { Report, Row } from './report';
import { compiledWorkerApp } from './support';

export type Side = 'steward' | 'direct';

/** Keys of the report rows a summary across runs picks (bench/profiles.ts). */
export const METRIC = {
  events: 'events',
  sideCpu: 'sideCpu',
  workerCpu: 'workerCpu',
  workerPeakRss: 'workerPeakRss',
  temporalCpu: 'temporalCpu',
  databaseCpu: 'databaseCpu',
} as const;

/** An object as the API server returned it, projected for the translation. */
export const projected = (kind: KubernetesProjection['kind'], object: unknown): KubernetesProjection => {
  const result = toProjection({ ...(JSON.parse(JSON.stringify(object)) as object), kind });
  if (!result.ok) throw new Error(`${kind} does not project: ${result.error.message}`);
  return result.projection;
};

const modelKey = (p: KubernetesProjection) =>
  `${p.kind}/${'namespace' in p.metadata ? p.metadata.namespace : ''}/${p.metadata.name}`;
const identity = (t: Translation) => `${t.namespace}/${t.name}:${JSON.stringify(t.resources)}`;
/** What a set of Translations leaves in the emulator, as `<kind>:<id or key>` (emulatorIds' form). */
const emulatorKeys = (translations: Translation[]) =>
  new Set(
    Object.entries(expectedIds(translations, [])).flatMap(([kind, ids]) =>
      kind === 'Host' ? [] : ids.map((id) => `${kind}:${id}`),
    ),
  );

/**
 * What the scenario wrote, translated as both sides must: the live objects, every Translation ever wanted (so what
 * is no longer wanted must be gone), and the least work any reconciler must do for it (the ledger). The ledger
 * counts from checkpoint to checkpoint (each state the scenario waits for): a level-based reconciler may skip the
 * states in between, so they are not part of the minimum.
 */
export class Model {
  readonly objects = new Map<string, KubernetesProjection>();
  private readonly ever = new Map<string, Translation>();
  /** At the last checkpoint, by object key: its JSON and its Translations by identity. */
  private readonly last = {
    objects: new Map<string, string>(),
    translations: new Map<string, Map<string, Translation>>(),
  };
  /** Objects written since the last checkpoint. */
  private readonly written = new Set<string>();
  readonly ledger = {
    applies: 0,
    translationsCreated: 0,
    translationsDeleted: 0,
    resourcesCreated: 0,
    resourcesDeleted: 0,
  };

  constructor(readonly tenant?: string) {}

  translationsOf(p: KubernetesProjection | undefined): Translation[] {
    if (!p) return [];
    const node = p.kind === 'Pod' ? this.objects.get(`Node//${p.spec.nodeName ?? ''}`) : undefined;
    const service =
      p.kind === 'Endpoints' ? this.objects.get(`Service/${p.metadata.namespace}/${p.metadata.name}`) : undefined;
    const result = translate(p, {
      ...(this.tenant ? { tenant: this.tenant } : {}),
      node: node?.kind === 'Node' ? node : null,
      service: service?.kind === 'Service' ? service : null,
    });
    if (!result.ok)
      throw new Error(`the bench's ${p.kind} ${p.metadata.name} does not translate: ${result.error.message}`);
    return result.translations;
  }

  /** Records a write (`after` undefined: a deletion); gives the emulator keys it adds and removes. */
  write(
    before: KubernetesProjection | undefined,
    after: KubernetesProjection | undefined,
  ): { added: Set<string>; removed: Set<string> } {
    const key = modelKey((after ?? before)!);
    const old = this.translationsOf(before);
    if (after) this.objects.set(key, after);
    else this.objects.delete(key);
    this.written.add(key);
    const now = this.translationsOf(after);
    for (const t of now) this.ever.set(identity(t), t);
    const [oldKeys, nowKeys] = [emulatorKeys(old), emulatorKeys(now)];
    return {
      added: new Set([...nowKeys].filter((k) => !oldKeys.has(k))),
      removed: new Set([...oldKeys].filter((k) => !nowKeys.has(k))),
    };
  }

  /**
   * A state the scenario waits for: what changed since the last one goes to the ledger. Only the objects written since
   * are looked at (churn checkpoints after every change, among thousands of objects), all of them when a Node or a
   * Service was, as what its Pods or Endpoints translate to depends on it.
   */
  checkpoint(): void {
    const dependencyWritten = [...this.written].some((key) => key.startsWith('Node/') || key.startsWith('Service/'));
    const keys = dependencyWritten
      ? new Set([...this.objects.keys(), ...this.last.objects.keys()])
      : new Set(this.written);
    this.written.clear();
    for (const key of keys) {
      const p = this.objects.get(key);
      const text = p && JSON.stringify(p);
      if (text !== undefined && this.last.objects.get(key) !== text) this.ledger.applies++;
      const before = this.last.translations.get(key) ?? new Map<string, Translation>();
      const now = new Map(this.translationsOf(p).map((t) => [identity(t), t]));
      for (const [id, t] of now) {
        if (before.has(id)) continue;
        this.ledger.translationsCreated++;
        this.ledger.resourcesCreated += t.resources.length;
      }
      for (const [id, t] of before) {
        if (now.has(id)) continue;
        this.ledger.translationsDeleted++;
        this.ledger.resourcesDeleted += t.resources.length;
      }
      if (text === undefined) {
        this.last.objects.delete(key);
        this.last.translations.delete(key);
      } else {
        this.last.objects.set(key, text);
        this.last.translations.set(key, now);
      }
    }
  }

  get(kind: string, namespace: string, name: string) {
    return this.objects.get(`${kind}/${namespace}/${name}`);
  }

  live(): Translation[] {
    return [...this.objects.values()].flatMap((p) => this.translationsOf(p));
  }

  /** What MidoNet must hold (every live Translation's resources) and must not (any other one's ever wanted). */
  expectation(): { present: Set<string>; absent: Set<string> } {
    const present = emulatorKeys(this.live());
    return { present, absent: new Set([...emulatorKeys([...this.ever.values()])].filter((k) => !present.has(k))) };
  }
}

type Ledger = Model['ledger'];

/**
 * The least work for what the ledger counts: activities (one apply per changed object, a push and a status per
 * Translation made, a delete and a release per one removed) and MidoNet requests (one per resource made or removed).
 */
function minimum(since: Ledger, now: Ledger) {
  const d = (key: keyof Ledger) => now[key] - since[key];
  return {
    activities: d('applies') + 2 * (d('translationsCreated') + d('translationsDeleted')),
    midonet: d('resourcesCreated') + d('resourcesDeleted'),
  };
}

export const emulatorState = async (admin: EmulatorAdmin) =>
  new Set(Object.entries(await emulatorIds({ admin })).flatMap(([kind, ids]) => ids.map((id) => `${kind}:${id}`)));

/** What a scenario gets for one side. */
export interface PhaseContext {
  side: Side;
  namespace: string;
  nodes: NodeProjection[];
  /** The bench's own API clients: their requests are counted and left out of the side's. */
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
  admin: EmulatorAdmin;
  model: Model;
  /**
   * Runs the part of the scenario whose costs are measured (once); `mark(label)` takes each process's CPU so far, for
   * a window inside it (the create's).
   */
  measured<T>(run: (mark: (label: string) => void) => Promise<T>): Promise<T>;
  /** Waits until the emulator holds exactly what the model says and every Translation of the namespace is Ready. */
  converged(what: string, timeoutMs?: number): Promise<void>;
  /** The scenario's peak (every object live and converged): a run with heap snapshots takes them here. */
  atPeak(): Promise<void>;
}

export interface PhaseResult {
  /** Timing rows (label, seconds or rate, decimals shown: 2 by default), in order. */
  timings: [string, number, number?][];
  /** What costs are divided by: the Pods of a burst, the changes of a churn. */
  per: { count: number; unit: string };
  notes?: string[];
  /** False when the side was left behind (a churn's backlog); a scenario that waits for convergence throws instead. */
  converged?: boolean;
}

export interface ObjectsScenario<R extends PhaseResult = PhaseResult> {
  name: string;
  title: string;
  nodes: number;
  run(ctx: PhaseContext): Promise<R>;
}

export interface PhaseCosts {
  usage: Usage;
  activities: number;
  /** Activities by operation (the workers' backend calls, the reconciler's calls). */
  activitiesBy: Map<string, number>;
  /** The workers' sticky caches: runs evicted to make room, and workflow tasks that found theirs evicted. */
  cache?: { evictions: number; misses: number };
  /** History events in the window, by group (historyEvents). */
  events?: Map<string, number>;
  minimum: ReturnType<typeof minimum>;
}

const TENANT = undefined;
const sideHosts = (side: Side, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `b${side === 'steward' ? '0' : '1'}000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`,
    name: `bench-${side}-host-${i + 1}`,
  }));

function nodesOf(side: Side, hosts: { id: string }[]): NodeProjection[] {
  return hosts.map((host, i) => ({
    kind: 'Node',
    metadata: {
      name: `bench-${side}-${i + 1}`,
      uid: '',
      annotations: {
        'midonet.org/host-id': host.id,
        'midonet.org/tunnel-zone-id': '',
        'midonet.org/tunnel-endpoint-ip': `192.0.${side === 'steward' ? 2 : 3}.${20 + i}`,
      },
    },
    // A /16 per Node: room for 5,000 Pods on few Nodes.
    spec: { podCIDR: `10.${i + 1}.0.0/16` },
    status: { addresses: [{ type: 'InternalIP', address: `192.0.${side === 'steward' ? 2 : 3}.${20 + i}` }] },
  }));
}

/**
 * History events of the workflows `select` picks, closed runs included (running ones read afresh: visibility lags),
 * by group: the workflow's kind, and for a Translation its owner's (`translation/pod`, `translation/endpoints-port`).
 */
async function historyEvents(client: Client, select: (workflowId: string) => boolean): Promise<Map<string, number>> {
  const events = new Map<string, number>();
  for await (const wf of client.workflow.list()) {
    if (!select(wf.workflowId)) continue;
    const [kind, , name = ''] = wf.workflowId.split('/');
    const group =
      kind === 'translation' ? `translation/${name.slice(0, name.indexOf('.')).toLowerCase()}` : `${kind ?? ''}`;
    const length =
      wf.status.name === 'RUNNING'
        ? (await client.workflow.getHandle(wf.workflowId, wf.runId).describe()).historyLength
        : wf.historyLength;
    events.set(group, (events.get(group) ?? 0) + length);
  }
  return events;
}

const difference = (after: Map<string, number>, before: Map<string, number>) =>
  new Map([...after].map(([group, n]) => [group, n - (before.get(group) ?? 0)]));

const sumValues = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

interface SideRunner {
  /** The worker processes, when the worker runs in processes of its own. */
  workerPids?: number[];
  /** Activities so far, by operation. */
  activities(): Promise<Map<string, number>>;
  cache?(): Promise<{ evictions: number; misses: number }>;
  events?(): Promise<Map<string, number>>;
  atPeak?(): Promise<void>;
  stop(): Promise<void>;
}

async function runPhase<R extends PhaseResult>(
  side: Side,
  h: ObjectsHarness,
  info: StackInfo,
  scenario: ObjectsScenario<R>,
  runner: (ctx: { namespace: string; nodePrefix: string }) => Promise<SideRunner>,
): Promise<{ result: R; costs: PhaseCosts }> {
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  const driver = { requests: 0 };
  const core = counted(h.core, driver);
  const custom = counted(h.custom, driver);
  const namespace = `bench-${scenario.name}-${side}-${Date.now().toString(36)}`;
  const nodePrefix = `bench-${side}-`;
  const model = new Model(TENANT);
  const sideRunner = await runner({ namespace, nodePrefix });

  // Generous (2 minutes and a second per object, counting those just deleted), yet a side that never converges fails
  // the run in bounded time.
  let objectsBefore = 0;
  const converged = async (what: string, timeoutMs = 120_000 + 1_000 * Math.max(model.objects.size, objectsBefore)) => {
    objectsBefore = model.objects.size;
    model.checkpoint();
    const { present, absent } = model.expectation();
    const wanted = model.live().filter((t) => t.namespace === namespace).length;
    await waitFor(
      `${side}: ${what}: the emulator holds what the model says`,
      async () => {
        const state = await emulatorState(h.admin);
        return [...present].every((k) => state.has(k)) && ![...absent].some((k) => state.has(k));
      },
      timeoutMs,
      250,
    );
    await waitFor(
      `${side}: ${what}: the namespace's Translations Ready`,
      async () => {
        const live = await listTranslations({ custom }, namespace);
        return live.length === wanted && live.every((t) => readyOf(t) && !t.metadata.deletionTimestamp);
      },
      timeoutMs,
      250,
    );
  };

  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const nodes: NodeProjection[] = [];
  for (const node of nodesOf(side, sideHosts(side, scenario.nodes))) {
    const created = projected('Node', await createNode({ core }, node));
    model.write(undefined, created);
    if (created.kind === 'Node') nodes.push(created);
  }
  await converged('the Nodes pushed');
  // Let the Nodes' workflows settle (notifications, status writes) before their extra events count.
  await new Promise((resolve) => setTimeout(resolve, 2_000));

  let costs: PhaseCosts | undefined;
  const measured = async <T>(run: (mark: (label: string) => void) => Promise<T>): Promise<T> => {
    const meter = await startMeter({
      kubeConfig,
      admin: h.admin,
      temporal: temporalProcesses(info),
      shared: sharedProcesses(info),
      ...(sideRunner.workerPids ? { workerPids: sideRunner.workerPids } : {}),
      driver,
    });
    const [activities, events, cache] = [
      await sideRunner.activities(),
      await sideRunner.events?.(),
      await sideRunner.cache?.(),
    ];
    const ledger = { ...model.ledger };
    const value = await run((label) => meter.mark(label));
    const usage = await meter.stop();
    // Visibility is eventually consistent: let closed runs' final history lengths land.
    if (sideRunner.events) await new Promise((resolve) => setTimeout(resolve, 3_000));
    const eventsAfter = await sideRunner.events?.();
    const cacheAfter = await sideRunner.cache?.();
    const activitiesBy = difference(await sideRunner.activities(), activities);
    costs = {
      usage,
      activities: sumValues(activitiesBy.values()),
      activitiesBy,
      ...(cache && cacheAfter
        ? {
            cache: { evictions: cacheAfter.evictions - cache.evictions, misses: cacheAfter.misses - cache.misses },
          }
        : {}),
      ...(events !== undefined && eventsAfter !== undefined ? { events: difference(eventsAfter, events) } : {}),
      minimum: minimum(ledger, model.ledger),
    };
    return value;
  };
  const result = await scenario.run({
    side,
    namespace,
    nodes,
    core,
    custom,
    admin: h.admin,
    model,
    measured,
    converged,
    atPeak: () => sideRunner.atPeak?.() ?? Promise.resolve(),
  });
  if (!costs) throw new Error(`scenario ${scenario.name} measured nothing`);

  // Clean up, outside the measured window: what the scenario left, the Nodes (and their backend state), the namespace.
  const remove = {
    Pod: (name: string) => core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 }),
    Endpoints: (name: string) => core.deleteNamespacedEndpoints({ namespace, name }),
    Service: (name: string) => core.deleteNamespacedService({ namespace, name }),
  };
  for (const object of [...model.objects.values()]) {
    if (object.kind === 'Node') continue;
    await remove[object.kind](object.metadata.name).catch((error: { code?: number }) => {
      if (error.code !== 404) throw error;
    });
    model.write(object, undefined);
  }
  await converged('what the scenario left gone');
  for (const node of nodes) {
    await core.deleteNode({ name: node.metadata.name });
    model.write(node, undefined);
  }
  await converged('the Nodes gone');
  await core.deleteNamespace({ name: namespace });
  await sideRunner.stop();
  return { result, costs };
}

/**
 * Steward's side: the objects harness's workers and starter; its activities from the workers' /metrics. With `heap`,
 * each worker's heap snapshots at the peak go to `heap.peaks`.
 */
const stewardSide =
  (h: ObjectsHarness, heap?: { dir: string; peaks: WorkerHeapAtPeak[] }) =>
  ({ namespace, nodePrefix }: { namespace: string; nodePrefix: string }): Promise<SideRunner> => {
    const workerPids = h.workers.flatMap((w) => (w.pid ? [w.pid] : []));
    return Promise.resolve({
      workerPids,
      ...(heap && {
        atPeak: async () => {
          heap.peaks.push(...(await snapshotWorkers(workerPids, heap.dir)));
        },
      }),
      activities: async () => {
        const all = new Map<string, number>();
        for (const w of h.workers)
          for (const [operation, n] of await workerActivities(w.httpPort))
            all.set(operation, (all.get(operation) ?? 0) + n);
        return all;
      },
      cache: async () => {
        const each = await Promise.all(h.workers.map((w) => workerCache(w.httpPort)));
        return { evictions: sumValues(each.map((c) => c.evictions)), misses: sumValues(each.map((c) => c.misses)) };
      },
      events: () =>
        // The namespace's workflows, the Nodes' and the Translations they own (in the cluster-scoped namespace, named after the Node).
        historyEvents(
          h.client,
          (id) =>
            id.includes(`/${namespace}/`) ||
            id.startsWith(`node/${nodePrefix}`) ||
            (id.startsWith('translation/default/') && id.includes(nodePrefix)),
        ),
      stop: () => Promise.resolve(),
    });
  };

/** The direct side: the reconciler started for the phase's namespace and Nodes. */
const directSide =
  (kubeConfig: k8s.KubeConfig, midonet: MidonetClient) =>
  ({ namespace, nodePrefix }: { namespace: string; nodePrefix: string }): Promise<SideRunner> => {
    const reconciler: DirectReconciler = startDirectReconciler({
      kubeConfig,
      midonet,
      namespace,
      nodePrefix,
      logger: pino({ level: 'error' }),
    });
    return Promise.resolve({
      activities: () => Promise.resolve(new Map(Object.entries(reconciler.stats().calls))),
      stop: () => reconciler.stop(),
    });
  };

export interface ObjectsScenarioOptions {
  /** Each worker's sticky cache; the worker's default when absent. */
  maxCachedWorkflows?: number;
  /** Steward worker processes (1 when absent). */
  workers?: number;
  /** Each worker's heap growth between collections, in percent; the worker's default when absent. */
  heapGrowthPercent?: number;
  /** Each worker's heap snapshots at the peak, in the report (the run's timings then include their pauses). */
  heapSnapshots?: boolean;
}

/**
 * Steward's workers and starter for a scenario's phases, with the stack's hosts for its Nodes (and the direct side's,
 * when it runs after). What the report says of the run's settings comes back with it.
 */
async function startStewardHarness(
  info: StackInfo,
  scenario: Pick<ObjectsScenario, 'name' | 'nodes'>,
  baseline: 'direct' | 'none',
  { maxCachedWorkflows, workers = 1, heapGrowthPercent, heapSnapshots = false }: ObjectsScenarioOptions,
) {
  const hosts = [
    ...sideHosts('steward', scenario.nodes),
    ...(baseline === 'direct' ? sideHosts('direct', scenario.nodes) : []),
  ];
  const cache = maxCachedWorkflows ?? Number(workerSettings.maxCachedWorkflows.default);
  const heapGrowth = heapGrowthPercent ?? Number(workerSettings.heapGrowthPercent.default);
  // The starter as deployed: its default coalescing window and Lease timings.
  const { leaseDurationSeconds, renewSeconds } = DEFAULT_LEASE;
  // The workers in processes of their own, as deployed: their CPU and memory are their own.
  const { appRoot, workflowBundle } = await compiledWorkerApp(info);
  const workerProcesses = {
    count: workers,
    logFile: (i: number) => join(info.stateDir, 'logs', `bench-${scenario.name}-worker-${i + 1}.log`),
    workflowBundle,
    appRoot,
  };
  const heap = heapSnapshots
    ? { dir: join(info.stateDir, 'bench', `heap-${Date.now().toString(36)}`), peaks: [] as WorkerHeapAtPeak[] }
    : undefined;
  const h = await startObjectsHarness(info, {
    ...(heap && { heapSnapshotDir: heap.dir }),
    hosts,
    identity: `bench-${scenario.name}`,
    debounceMs: duration.parse(starterSettings.debounceWindow.default),
    lease: { leaseDurationSeconds, renewSeconds },
    // The burst deletes every Pod at once, the wave Steward's guard against mass deletion holds for an operator's
    // go-ahead (docs/operations.md): measured with the wave trigger off (a share of 1 is never exceeded).
    massDeletion: { ...DEFAULT_WAVE, share: 1 },
    workerProcesses,
    maxCachedWorkflows: cache,
    heapGrowthPercent: heapGrowth,
  });
  return { h, heap, settings: { cache, workers, heapGrowth } };
}

/** Both sides of an object scenario on one stack, Steward first; the report has both columns and the ratio. */
export async function runObjectsScenario(
  info: StackInfo,
  scenario: ObjectsScenario,
  options: ObjectsScenarioOptions = {},
): Promise<Report> {
  const { h, heap, settings } = await startStewardHarness(info, scenario, 'direct', options);
  let steward: Awaited<ReturnType<typeof runPhase>>;
  try {
    steward = await runPhase('steward', h, info, scenario, stewardSide(h, heap));
  } finally {
    // Steward stops before the direct side starts: its starter watches every namespace.
    await h.stop();
  }
  // Pooled as the worker's: both sides make their Kubernetes calls over kept connections.
  const direct = await runPhase(
    'direct',
    h,
    info,
    scenario,
    directSide(loadKubeConfig(info.kubernetes.kubeconfig)!, h.midonet),
  );
  const report = objectsReport(info, scenario, steward, direct, settings);
  return heap ? { ...report, sections: heapSection(heap.peaks) } : report;
}

/**
 * Steward alone, for several phases on one harness started once (the churn's rate search, one probe a phase): each
 * phase in a fresh namespace with fresh Nodes, as in a scenario's run, and no baseline.
 */
export async function withStewardPhases<T>(
  info: StackInfo,
  scenario: Pick<ObjectsScenario, 'name' | 'nodes'>,
  options: ObjectsScenarioOptions,
  body: (
    phase: <R extends PhaseResult>(scenario: ObjectsScenario<R>) => Promise<{ result: R; costs: PhaseCosts }>,
  ) => Promise<T>,
): Promise<T> {
  const { h } = await startStewardHarness(info, scenario, 'none', options);
  try {
    return await body((phaseScenario) => runPhase('steward', h, info, phaseScenario, stewardSide(h)));
  } finally {
    await h.stop();
  }
}

/** The kinds of request that make up at least a tenth of one per object, most first: `patch translations/status 2.0, …`. */
const perKind = (requests: Map<string, number>, count: number) =>
  [...requests]
    .map(([kind, n]) => [kind, n / count] as const)
    .filter(([, each]) => each >= 0.1)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, each]) => `${kind} ${each.toFixed(1)}`)
    .join(', ');

/** Milliseconds of `cpuSeconds` per history event of the side's workflows; undefined without events. */
export function perEvent(cpuSeconds: number | undefined, events: Map<string, number> | undefined): number | undefined {
  const total = events ? sumValues(events.values()) : 0;
  return cpuSeconds === undefined || total === 0 ? undefined : (cpuSeconds * 1000) / total;
}

type MeasuredSide = { result: PhaseResult; costs: PhaseCosts };

/**
 * Per mark (the create's convergence), each process's CPU from the window's start to it, and the share of the
 * machine's cores they kept busy: where the time of a window went, which the whole window's rows blur with the delete.
 */
function markRows(
  steward: MeasuredSide,
  direct: MeasuredSide,
  {
    plural,
    cluster,
    both,
  }: {
    plural: string;
    cluster: boolean;
    both: (metric: string, of: (side: MeasuredSide) => number | undefined, digits?: number) => Row;
  },
): Row[] {
  const cores = availableParallelism();
  return steward.costs.usage.marks.flatMap(({ label }) => {
    const at = (side: MeasuredSide) => side.costs.usage.marks.find((m) => m.label === label);
    const share = (key: keyof CpuShares) => (side: MeasuredSide) => at(side)?.cpu[key];
    const busy = (side: MeasuredSide) => {
      const mark = at(side);
      if (!mark || mark.seconds === 0) return undefined;
      const { side: own, temporal = 0, database = 0, apiServer = 0, emulator = 0 } = mark.cpu;
      return (100 * (own + temporal + database + apiServer + emulator)) / (cores * mark.seconds);
    };
    return [
      both(`${label}: CPU of the side s`, share('side')),
      both(`${label}: worker process${plural} CPU s`, share('worker')),
      both(`${label}: Temporal server CPU s`, share('temporal')),
      ...(cluster ? [both(`${label}: Temporal's PostgreSQL CPU s`, share('database'))] : []),
      both(`${label}: API server and etcd CPU s`, share('apiServer')),
      both(`${label}: MidoNet emulator CPU s`, share('emulator')),
      both(`${label}: these processes' share of the ${cores} cores, busy %`, busy, 0),
    ];
  });
}

function objectsReport(
  info: StackInfo,
  scenario: ObjectsScenario,
  steward: MeasuredSide,
  direct: MeasuredSide,
  { cache, workers, heapGrowth }: { cache: number; workers: number; heapGrowth: number },
): Report {
  const { count, unit } = steward.result.per;
  const per = (value: number | undefined, side: { result: PhaseResult }) =>
    value === undefined ? undefined : value / side.result.per.count;
  const both = (
    metric: string,
    of: (side: MeasuredSide) => number | undefined,
    digits?: number,
    key?: string,
  ): Row => ({
    metric,
    ...(key ? { key } : {}),
    steward: of(steward),
    baseline: of(direct),
    ...(digits === undefined ? {} : { digits }),
  });
  const timings = steward.result.timings.map(
    ([label, , digits = 2], i): Row => ({
      metric: label,
      steward: steward.result.timings[i]?.[1],
      baseline: direct.result.timings[i]?.[1],
      digits,
    }),
  );
  const minimum = steward.costs.minimum;
  const plural = workers === 1 ? '' : 'es';
  const cluster = info.temporal.profile === 'cluster';
  const each = steward.costs.usage.worker?.each;
  return {
    scenario: scenario.name,
    title: scenario.title,
    baseline: 'direct',
    converged: { steward: steward.result.converged ?? true, baseline: direct.result.converged ?? true },
    rows: [
      ...timings,
      both(
        `history events per ${unit} (all workflows)`,
        (s) => per(s.costs.events && sumValues(s.costs.events.values()), s),
        undefined,
        METRIC.events,
      ),
      both(`activities per ${unit} (minimum ${(minimum.activities / count).toFixed(1)})`, (s) =>
        per(s.costs.activities, s),
      ),
      both(`MidoNet requests per ${unit} (minimum ${(minimum.midonet / count).toFixed(1)})`, (s) =>
        per(s.costs.usage.midonetRequests, s),
      ),
      both(`API server requests per ${unit}`, (s) => per(s.costs.usage.apiRequests, s)),
      both(`workflow runs evicted from the sticky cache per ${unit} (each replays its history when it wakes)`, (s) =>
        per(s.costs.cache?.evictions, s),
      ),
      both(`workflow tasks that found their run evicted per ${unit}`, (s) => per(s.costs.cache?.misses, s)),
      both(
        'CPU of the side s (Steward: workers + starter, direct: reconciler; the driver in both)',
        (s) => s.costs.usage.processCpuSeconds + (s.costs.usage.worker?.cpuSeconds ?? 0),
        undefined,
        METRIC.sideCpu,
      ),
      both(`worker process${plural} CPU s`, (s) => s.costs.usage.worker?.cpuSeconds, undefined, METRIC.workerCpu),
      both(`worker process${plural} CPU ms per ${unit}`, (s) =>
        per(s.costs.usage.worker && s.costs.usage.worker.cpuSeconds * 1000, s),
      ),
      both(`worker process${plural} peak RSS MB`, (s) => s.costs.usage.worker?.peakRssMb, 0, METRIC.workerPeakRss),
      both(`worker process${plural} RSS growth in the window MB`, (s) => s.costs.usage.worker?.rssGrowthMb, 0),
      both('bench process peak RSS MB (starter or reconciler, and the driver)', (s) => s.costs.usage.peakRssMb, 0),
      both(
        cluster ? 'Temporal server CPU s (the 3 hosts)' : 'Temporal server CPU s',
        (s) => s.costs.usage.temporalCpuSeconds,
        undefined,
        METRIC.temporalCpu,
      ),
      both(
        `Temporal server CPU ms per history event${cluster ? ' (the 3 hosts)' : ''}`,
        (s) => perEvent(s.costs.usage.temporalCpuSeconds, s.costs.events),
        2,
      ),
      both(
        "API server and etcd CPU s (the bench's own requests included, the same on both sides)",
        (s) => s.costs.usage.apiServerCpuSeconds,
      ),
      both('MidoNet emulator CPU s', (s) => s.costs.usage.emulatorCpuSeconds),
      ...(cluster
        ? [
            both(
              "Temporal's PostgreSQL CPU s (server and backends)",
              (s) => s.costs.usage.databaseCpuSeconds,
              undefined,
              METRIC.databaseCpu,
            ),
          ]
        : []),
      ...markRows(steward, direct, { plural, cluster, both }),
    ],
    ...(each ? { workers: each } : {}),
    notes: [
      `${count} ${unit}s on ${scenario.nodes} Nodes, each side in its own namespace and Nodes on the same stack, Steward first (${workers} worker process${plural}, each caching ${cache} workflows, its heaps growing ${heapGrowth ? `${heapGrowth}%` : 'as V8 decides'} past their live objects between collections); converged = the emulator holds exactly what the model says and every Translation is Ready.`,
      `Temporal: ${cluster ? 'the cluster profile (PostgreSQL, 3 server hosts; the UI server not counted)' : 'the dev server'}.`,
      `Steward's workers run as \`steward worker\` in processes of their own, as the image runs them (compiled to JavaScript, the workflow code bundled once); its starter, the direct reconciler and the bench's driver run in the bench process. activities = worker activity executions (retries included); direct counts its calls to the same functions under the same names.`,
      ...(each && each.length > 1
        ? [
            `Each worker, in start order: CPU ${each.map((w) => w.cpuSeconds.toFixed(1)).join(' / ')} s, peak RSS ${each.map((w) => w.peakRssMb.toFixed(0)).join(' / ')} MB (the table's peak is the peak of their sum).`,
          ]
        : []),
      `Steward's history events per ${unit} by workflow: ${[...(steward.costs.events ?? new Map<string, number>())]
        .filter(([, n]) => n > 0)
        .map(([group, n]) => `${group} ${(n / count).toFixed(1)}`)
        .join(', ')}.`,
      `Activities per ${unit} by operation: Steward ${perKind(steward.costs.activitiesBy, count)}; direct ${perKind(direct.costs.activitiesBy, count)}.`,
      `API server requests per ${unit} by verb and resource, the bench's own included: Steward ${perKind(steward.costs.usage.apiRequestsBy, count)}; direct ${perKind(direct.costs.usage.apiRequestsBy, count)}.`,
      ...(steward.result.notes ?? []).map((n) => `Steward: ${n}`),
      ...(direct.result.notes ?? []).map((n) => `direct: ${n}`),
    ],
  };
}
