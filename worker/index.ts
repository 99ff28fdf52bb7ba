/**
 * Worker: the process that polls Temporal and runs Steward's workflows and activities. `runWorker` takes a validated
 * configuration (config.ts: flags and environment), connects through the project's one connection factory
 * (connection.ts), builds the activities from their factories, times each one for Prometheus (metrics.ts), serves
 * /healthz, /readyz and /metrics (http.ts) and stops gracefully on SIGINT or SIGTERM.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { UntypedActivities } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import pino, { type Logger } from 'pino';
import * as k8s from '@kubernetes/client-node';
import {
  createCloudActivities,
  createCloudProvider,
  createPodVmActivities,
  type CloudActivities,
  type PodVmActivities,
} from '../activities/cloud';
import { createKubernetesActivities, type KubernetesActivities } from '../activities/kubernetes';
import { createMidonetActivities, createMidonetClient, type MidonetActivities } from '../activities/midonet';
import { createPushActivities, type Neighbours, type PushActivities } from '../activities/midonet/push';
import { createTranslationIndex, provenanceOf } from '../activities/kubernetes/translation-index';
import { createTranslationRecords } from '../activities/kubernetes/translation-record';
import { createEventRecorder } from '../activities/kubernetes/events';
import { createObjects } from '../activities/kubernetes/objects';
import { loadKubeConfig } from '../activities/kubernetes/kubeconfig';
import { createSource, informerFactory, kubernetesListWatch } from '../starter/controller/source';
import { backendChangedSignal, type BackendChanged } from '../workflows/messages';
import type { ObjectRef } from '../workflows/naming';
import { redacted, type LogLevel, type WorkerConfig } from './config';
import { checkTemporal, connectClient, connectWorker } from './connection';
import { startHttpServer } from './http';
import { activityMetricsInterceptor, countObjectsByState, createMetrics, metricsText } from './metrics';
import { installRuntime } from './runtime';
import { workflowBundlerOptions, WORKFLOWS_PATH } from './bundle';

export { loadTemporalConfig, loadWorkerConfig, type TemporalConfig, type WorkerConfig } from './config';
export { ConfigError } from './settings';
export { connectClient, connectWorker, TemporalUnreachableError } from './connection';

/** Activities by backend (the `backend` label of the metrics). */
export interface ActivityGroups {
  midonet?: MidonetActivities & PushActivities;
  kubernetes?: KubernetesActivities;
  cloud?: CloudActivities;
  /** A peer pod's VM made and recorded in one call: built from the cloud and Kubernetes groups when both are there. */
  peerpod?: PodVmActivities;
  [backend: string]: UntypedActivities | undefined;
}

export interface RunWorkerOptions {
  /** Replace or add groups; the rest are built from the configuration. */
  activities?: ActivityGroups;
  /** The workflow module; defaults to workflows/index.ts, the project's only one. Tests give their own. */
  workflowsPath?: string;
  log?: Logger;
  /** Period of the objects-per-state count; 30 s by default. */
  objectCountIntervalMs?: number;
}

export interface RunningWorker {
  worker: Worker;
  client: Client;
  /** Where /healthz, /readyz and /metrics answer (useful with port 0). */
  httpPort: number;
  /** Resolves once the worker stopped and every connection and server is closed; rejects if the worker failed. */
  done: Promise<void>;
  /** Graceful stop, as on SIGTERM. */
  shutdown(): Promise<void>;
}

// The SDK puts errors under `error`; without a serializer an Error logs as {}.
export const createLogger = (level: LogLevel) => pino({ level, serializers: { error: pino.stdSerializers.err } });

/** The Translation of a pusher workflow id, `translation/<namespace>/<name>`. */
function translationRef(workflowId: string): ObjectRef {
  const [, namespace = '', name = ''] = workflowId.split('/');
  return { kind: 'Translation', namespace, name };
}

/**
 * The pushers' view of each other: a watch of every Translation (who owns which resource, who names which ID) and
 * the signal that tells one that resources it names changed. Stopped with the worker.
 */
function watchNeighbours(
  kubeConfig: k8s.KubeConfig,
  temporal: Client,
  log: Logger,
): Neighbours & { stop(): Promise<void> } {
  const index = createTranslationIndex();
  const source = createSource({
    kinds: ['Translation'],
    listWatch: kubernetesListWatch(kubeConfig),
    makeInformer: informerFactory(kubeConfig),
    resyncMs: 10 * 60_000,
    backoff: { initialMs: 500, maxMs: 30_000 },
    logger: log.child({ component: 'translation-index' }),
    onEvent: (event) => index.apply(event),
  });
  source.start();
  const signal = (workflowId: string, notice: BackendChanged) =>
    temporal.workflow
      .getHandle(workflowId)
      .signal(backendChangedSignal, notice)
      // A Translation without a running pusher has nothing to repair: its next one starts from a fresh push. Any
      // other failure fails the activity, which retries the notice.
      .catch((error: unknown) => {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        log.debug({ workflowId }, 'backendChanged: no running pusher');
      });
  const objects = createObjects(kubeConfig, 'steward');
  const recordEvent = createEventRecorder(objects, () => new Date());
  return {
    index,
    records: createTranslationRecords(kubeConfig),
    async announce(owner, event) {
      const ref = translationRef(owner);
      const translation = await objects.accessor(ref).read();
      if (translation) await recordEvent(ref, translation, event);
    },
    async provenance(owner) {
      const translation = await objects.accessor(translationRef(owner)).read();
      return translation && provenanceOf(translation);
    },
    synced: () => source.synced(),
    notify: async (workflowIds, notice) => {
      for (let i = 0; i < workflowIds.length; i += 20)
        await Promise.all(workflowIds.slice(i, i + 20).map((id) => signal(id, notice)));
    },
    stop: () => source.stop(),
  };
}

function activitiesFromConfig(
  config: WorkerConfig,
  log: Logger,
  temporal: Client,
): { groups: ActivityGroups; stop(): Promise<void> } {
  const groups: ActivityGroups = {};
  const kubeConfig = loadKubeConfig(config.kubeconfig);
  const neighbours = kubeConfig ? watchNeighbours(kubeConfig, temporal, log) : undefined;
  if (config.midonet) {
    const client = createMidonetClient(config.midonet);
    groups.midonet = { ...createMidonetActivities({ client }), ...createPushActivities({ client, neighbours }) };
  } else log.warn('no MidoNet activities: MIDONET_API_URL is not set');
  if (config.cloud) groups.cloud = createCloudActivities({ provider: createCloudProvider(config.cloud) });
  else log.warn('no cloud activities (peer-pod VMs): no --cloud-provider / STEWARD_CLOUD_PROVIDER');
  if (kubeConfig) groups.kubernetes = createKubernetesActivities({ kubeConfig });
  else log.warn('no Kubernetes activities: no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster');
  return { groups, stop: async () => neighbours?.stop() };
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

export async function runWorker(config: WorkerConfig, options: RunWorkerOptions = {}): Promise<RunningWorker> {
  const log = options.log ?? createLogger(config.logLevel);
  const sdkMetricsUrl = await installRuntime(log);
  const client = await connectClient(config.temporal);
  const closing: (() => Promise<void>)[] = [() => client.connection.close()];
  const closeAll = async () => {
    for (const close of closing.reverse())
      await close().catch((error: unknown) => log.warn({ err: error }, 'close failed'));
  };
  try {
    const fromConfig = activitiesFromConfig(config, log, client);
    closing.push(() => fromConfig.stop());
    const groups: ActivityGroups = { ...fromConfig.groups, ...options.activities };
    // From the groups in use (a test's fakes included), so it calls exactly what the separate activities call.
    if (!groups.peerpod && groups.cloud && groups.kubernetes)
      groups.peerpod = createPodVmActivities({ cloud: groups.cloud, kubernetes: groups.kubernetes });
    const { activities, backendOf } = flatten(groups);
    log.info({ config: redacted(config), backends: Object.keys(groups) }, 'starting the worker');
    const connection: NativeConnection = await connectWorker(config.temporal);
    closing.push(() => connection.close());
    const metrics = createMetrics();
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      ...(config.workflowBundle && !options.workflowsPath
        ? { workflowBundle: { codePath: config.workflowBundle } }
        : { workflowsPath: options.workflowsPath ?? WORKFLOWS_PATH, bundlerOptions: workflowBundlerOptions }),
      activities,
      interceptors: { activity: [activityMetricsInterceptor(metrics, backendOf)] },
      ...config.concurrency,
      // Server side, so the cap holds across every worker replica: the backend sees their sum. It limits the task
      // queue's regular activities: MidoNet's and the cloud's (Kubernetes calls are local activities, never limited).
      maxTaskQueueActivitiesPerSecond: config.rateLimits.midonetActivitiesPerSecond,
      // Backend calls time out after 10 s; let in-flight ones finish rather than cancel and retry them.
      shutdownGraceTime: '10s',
    });
    const counter = countObjectsByState({ client, metrics, log, intervalMs: options.objectCountIntervalMs });
    closing.push(() => Promise.resolve(counter.stop()));
    const http = await startHttpServer(
      config.http.host,
      config.http.port,
      {
        problems: async () => {
          const problems = worker.getState() === 'RUNNING' ? [] : [`worker is ${worker.getState()}`];
          await checkTemporal(client.connection, config.temporal, 2_000).catch((error: Error) =>
            problems.push(error.message),
          );
          return problems;
        },
        ready: () => worker.getState() === 'RUNNING',
        metrics: () => metricsText(metrics, sdkMetricsUrl, log),
      },
      log,
    );
    closing.push(() => http.close());
    log.info(
      { taskQueue: config.temporal.taskQueue, namespace: config.temporal.namespace, httpPort: http.port },
      'worker running',
    );
    void counter.refresh();
    const done = worker.run().finally(async () => {
      log.info('worker stopped');
      await closeAll();
    });
    return {
      worker,
      client,
      httpPort: http.port,
      done,
      shutdown: async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await done;
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
