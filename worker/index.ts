/**
 * Worker: the process that polls Temporal and runs Steward's workflows and activities. `startWorker` takes a
 * validated configuration (config.ts: flags and environment) and a way to build the activities once Temporal is
 * reached (the command line composes them: cli/worker.ts), serves /healthz, /readyz and /metrics
 * (platform/http.ts) from the start, waits for Temporal through the project's one connection factory
 * (platform/temporal-connection.ts), times each activity for Prometheus (metrics.ts), traces when OTLP is configured
 * (platform/tracing.ts) and stops gracefully on SIGINT or SIGTERM.
 */
import type { Client } from '@temporalio/client';
import type { UntypedActivities } from '@temporalio/common';
import { NativeConnection, Runtime, Worker, type State, type WorkerOptions } from '@temporalio/worker';
import type { Logger } from 'pino';
import { setFlagsFromString } from 'node:v8';
import { peerPodTaskQueue } from '../model/naming';
import { createLogger } from '../platform/log';
import { stewardVersion } from '../platform/version';
import { heapSnapshotsOnSignal } from '../platform/heap-snapshots';
import { startHttpServer, type Check } from '../platform/http';
import { acquireTracing, type Tracing } from '../platform/tracing';
import {
  connectClientWhenReachable,
  connectWorker,
  StoppedWaitingError,
  temporalReadiness,
  type TemporalReach,
} from '../platform/temporal-connection';
import { redactedProcess, type WorkerProcessConfig } from './config';
import { livenessProblems, readinessProblems } from './probes';
import { activityMetricsInterceptor, createMetrics, metricsText, type WorkerMetrics } from './metrics';
import { installRuntime } from './runtime';
import { bundleWorkflows } from './bundle';
import { defaultBuildId, STEWARD_DEPLOYMENT } from './build-id';

export { loadWorkerProcessConfig, redactedProcess, workerProcessSettings, type WorkerProcessConfig } from './config';

/** Activities by backend: the `backend` label of the metrics. */
export type ActivityGroups = Record<string, UntypedActivities | undefined>;

export interface StartWorkerOptions {
  /** Builds the activities once the Temporal client is connected; stopped with the worker. */
  activities: (temporal: Client, log: Logger) => { groups: ActivityGroups; stop(): Promise<void> };
  /** The workflow module; defaults to workflows/index.ts, the project's only one. Tests give their own. */
  workflowsPath?: string;
  log?: Logger;
  /** Readiness checks beside Temporal's: what else the activities reach (the cluster). */
  checks?: Check[];
}

export interface RunningWorker {
  client: Client;
  /** Where /healthz, /readyz and /metrics answer (useful with port 0). */
  httpPort: number;
  /** The build ID its workflow code is versioned by, as its pollers report it (`steward version`). */
  buildId: string;
  /** Resolves once the worker stopped and every connection and server is closed; rejects if the worker failed. */
  done: Promise<void>;
  /** Graceful stop, as on SIGTERM. */
  shutdown(): Promise<void>;
}

/** One flat activity object for the Worker and, for the metrics, the backend of each activity name. */
function flatten(groups: ActivityGroups) {
  const activities: UntypedActivities = {};
  const backends = new Map<string, string>();
  for (const [backend, group] of Object.entries(groups)) {
    for (const [name, fn] of Object.entries(group ?? {})) {
      const other = backends.get(name);
      if (other) throw new Error(`activity ${name} is registered by both ${other} and ${backend}`);
      backends.set(name, backend);
      activities[name] = fn;
    }
  }
  return { activities, backendOf: (name: string) => backends.get(name) ?? 'unknown' };
}

/**
 * The workflow code: the bundle written ahead (STEWARD_WORKFLOW_BUNDLE) if any, else bundled now. Tracing needs its
 * interceptors in the bundle, which one written ahead has not: then the worker bundles too.
 */
async function workflowBundle(
  config: WorkerProcessConfig,
  options: StartWorkerOptions,
  tracing: Tracing | undefined,
  log: Logger,
): Promise<{ code: string } | { codePath: string }> {
  const written = options.workflowsPath ? undefined : config.workflowBundle;
  if (written && !tracing) return { codePath: written };
  if (written)
    log.info('tracing is on: bundling the workflows with its interceptors, not using STEWARD_WORKFLOW_BUNDLE');
  return bundleWorkflows(options.workflowsPath, Runtime.instance().logger, tracing?.worker.workflowModules);
}

/**
 * A workflow task that fails on nondeterminism fails its run instead of being retried for ever: a run wedged so holds
 * its object's finalizers for good (chaos seed 82: the SDK adopted a timed-out task's local activity result and lost
 * two signals, which no replay can then match). Every lifecycle is derived again from what the API server holds: the
 * starter's repair starts a live object's workflow again, and Translations a failed run left held get workflows of
 * their own that let them go.
 */
export const WORKFLOW_FAILURE_ERROR_TYPES = {
  '*': ['NondeterminismError'],
} satisfies WorkerOptions['workflowFailureErrorTypes'];

/**
 * The Workers of the process, on one connection: Steward's task queue with every workflow (the one workflow thread and
 * bundle), and the peer pods' VM creations beside it (`peerPodTaskQueue`), activities only, so a burst of Pods never
 * queues a VM behind it.
 */
async function createWorkers(
  config: WorkerProcessConfig,
  options: StartWorkerOptions,
  shared: Pick<WorkerOptions, 'connection' | 'activities' | 'interceptors' | 'sinks'>,
  tracing: Tracing | undefined,
  log: Logger,
): Promise<{ workers: Worker[]; buildId: string }> {
  const { taskQueue, namespace } = config.temporal;
  const bundle = await workflowBundle(config, options, tracing, log);
  const buildId = config.buildId ?? defaultBuildId(bundle);
  // Sinks carry the workflows' tracing: the peer pods' Worker runs none.
  const { sinks, ...forActivities } = shared;
  const common = {
    ...forActivities,
    namespace,
    // Reported, not used for routing: every worker takes every task (workflows stay replay-compatible by patches).
    workerDeploymentOptions: { version: { deploymentName: STEWARD_DEPLOYMENT, buildId }, useWorkerVersioning: false },
    // Backend calls time out after 10 s; let in-flight ones finish rather than cancel and retry them.
    shutdownGraceTime: '10s',
  } satisfies Partial<WorkerOptions>;
  const workers = [
    await Worker.create({
      ...common,
      ...config.concurrency,
      taskQueue,
      workflowBundle: bundle,
      sinks,
      workflowFailureErrorTypes: WORKFLOW_FAILURE_ERROR_TYPES,
      // Server side, so the cap holds across every worker replica: the backend sees their sum. It limits the task
      // queue's regular activities, MidoNet's (Kubernetes calls are local activities, never limited; VMs are made on
      // the peer pods' queue, limited by the cloud activities themselves).
      maxTaskQueueActivitiesPerSecond: config.rateLimits.midonetActivitiesPerSecond,
    }),
    await Worker.create({
      ...common,
      taskQueue: peerPodTaskQueue(taskQueue),
      maxConcurrentActivityTaskExecutions: config.concurrency.maxConcurrentActivityTaskExecutions,
    }),
  ];
  return { workers, buildId };
}

/** What the probes read while the process starts and runs: the Workers once made, the client once connected. */
interface Live extends TemporalReach {
  workers: Worker[];
}

const stateOf = ({ workers }: Live): State =>
  workers.length === 0 ? 'INITIALIZED' : (workers.map((w) => w.getState()).find((s) => s !== 'RUNNING') ?? 'RUNNING');

/** /healthz, /readyz and /metrics, served from the start: a worker waiting for Temporal says so, not ready. */
function serve(
  config: WorkerProcessConfig,
  options: StartWorkerOptions,
  live: Live,
  metrics: WorkerMetrics,
  log: Logger,
) {
  const temporal = temporalReadiness(config.temporal, live);
  return installRuntime(log).then((sdkMetricsUrl) =>
    startHttpServer(
      config.http.host,
      config.http.port,
      {
        liveness: () => livenessProblems(stateOf(live)),
        readiness: () => readinessProblems(stateOf(live), [temporal, ...(options.checks ?? [])]),
        metrics: () => metricsText(metrics, sdkMetricsUrl, log),
      },
      log,
    ),
  );
}

/**
 * The client, once Temporal answers. Until then SIGINT and SIGTERM end the wait (the Runtime's own handlers stop
 * only Workers, and there are none yet).
 */
async function clientWhenReachable(config: WorkerProcessConfig, live: Live, log: Logger): Promise<Client> {
  const stop = new AbortController();
  const abort = () => stop.abort();
  const signals = ['SIGINT', 'SIGTERM'] as const;
  for (const signal of signals) process.once(signal, abort);
  try {
    return await connectClientWhenReachable(config.temporal, {
      log,
      signal: stop.signal,
      onUnreachable: (error) => (live.unreachable = error),
    });
  } catch (error) {
    // Told to stop: the Runtime, which would keep the process alive, goes too (a signal already began its shutdown).
    if (error instanceof StoppedWaitingError) await Runtime.instance().shutdown();
    throw error;
  } finally {
    for (const signal of signals) process.off(signal, abort);
  }
}

/** SIGUSR2's heap snapshots, when a directory is set; what stops listening for them. */
function heapSnapshotsWhenAsked(config: WorkerProcessConfig, log: Logger): (() => Promise<void>)[] {
  if (!config.heapSnapshotDir) return [];
  const stop = heapSnapshotsOnSignal(config.heapSnapshotDir, log);
  return [() => Promise.resolve(stop())];
}

/**
 * With memory to spare V8 lets a heap grow to four times what it last held alive before collecting it again, so a
 * worker's RSS follows its garbage rather than its objects (docs/benchmarks.md). The factor is process-wide and read
 * at each collection: set before the Workers start, their workflow threads take it too.
 */
function boundHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * Serves the probes at once, waits for Temporal (see `clientWhenReachable`), then runs the Workers. Rejects with
 * StoppedWaitingError when stopped before Temporal answered.
 */
export async function startWorker(config: WorkerProcessConfig, options: StartWorkerOptions): Promise<RunningWorker> {
  boundHeapGrowth(config.heapGrowthPercent);
  const log = options.log ?? createLogger(config.logLevel);
  const live: Live = { workers: [] };
  const metrics = createMetrics();
  const http = await serve(config, options, live, metrics, log);
  // Released last, once the Workers stopped: the spans of their last tasks are sent then.
  const { tracing, release } = acquireTracing('steward-worker');
  const closing: (() => Promise<void>)[] = [release, () => http.close(), ...heapSnapshotsWhenAsked(config, log)];
  const closeAll = async () => {
    for (const close of closing.reverse())
      await close().catch((error: unknown) => log.warn({ err: error }, 'close failed'));
  };
  try {
    const client = await clientWhenReachable(config, live, log);
    live.client = client;
    closing.push(() => client.connection.close());
    const { groups, ...built } = options.activities(client, log);
    closing.push(() => built.stop());
    const { activities, backendOf } = flatten(groups);
    log.info({ config: redactedProcess(config), backends: Object.keys(groups) }, 'starting the worker');
    const connection: NativeConnection = await connectWorker(config.temporal);
    closing.push(() => connection.close());
    const { workers, buildId } = await createWorkers(
      config,
      options,
      {
        connection,
        activities,
        interceptors: {
          activity: [activityMetricsInterceptor(metrics, backendOf), ...(tracing?.worker.activity ?? [])],
        },
        sinks: tracing?.worker.sinks,
      },
      tracing,
      log,
    );
    live.workers = workers;
    metrics.buildInfo.set({ build_id: buildId, version: stewardVersion() }, 1);
    log.info(
      {
        taskQueues: workers.map((w) => w.options.taskQueue),
        namespace: config.temporal.namespace,
        buildId,
        httpPort: http.port,
      },
      'worker running',
    );
    // One stopping (a shutdown, a fatal error) stops the other: the process serves both queues or none.
    const stopOthers = () => workers.forEach((w) => w.getState() === 'RUNNING' && w.shutdown());
    const done = Promise.allSettled(workers.map((w) => w.run().finally(stopOthers))).then(async (runs) => {
      log.info('worker stopped');
      await closeAll();
      const failed = runs.find((run) => run.status === 'rejected');
      if (failed) throw failed.reason;
    });
    return {
      client,
      httpPort: http.port,
      buildId,
      done,
      shutdown: async () => {
        stopOthers();
        await done;
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
