import type { KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { failedChecks, startHttpServer, type HttpServer } from '../platform/http';
import { loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { endpointsSourceServed } from '../platform/kubernetes/kinds';
import { connectClientWhenReachable, temporalReadiness, type TemporalReach } from '../platform/temporal-connection';
import { acquireTracing } from '../platform/tracing';
import { GLOBAL_MIDONET_WORKFLOW_ID, inCluster } from '../model/naming';
import { installation } from '../platform/backends';
import type { StarterConfig } from './config';
import { createStarter, type Starter } from './controller';
import { starterLiveness, starterReadiness } from './probes';
import { ensureSweepSchedule } from './sweep-schedule';
import { countObjectsByState } from './object-counts';
import type { LifecycleKind } from '../model/naming';

/**
 * The starter as a process runs it (`steward starter`, `steward up`): /healthz, /readyz and /metrics served, Temporal
 * waited for, the global setup workflow and the sweeper's Schedule ensured, then the controller started, every start
 * on the configured task queue, traced when OTLP is configured (platform/tracing.ts).
 */

/** Starts the global setup workflow unless it runs already: every starter asks, the first one wins. */
async function ensureGlobalSetup(client: Client, { tenant, temporal }: StarterConfig, log: Logger): Promise<void> {
  const handle = await client.workflow.start('globalMidonet', {
    workflowId: inCluster(GLOBAL_MIDONET_WORKFLOW_ID, temporal.clusterId),
    taskQueue: temporal.taskQueue,
    args: [{ tenant }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: 'MidoNet global setup',
  });
  log.info(
    { workflowId: handle.workflowId, runId: handle.firstExecutionRunId, tenant },
    'global setup workflow running',
  );
}

/** What the command line composes into the starter from the other rooms. */
export interface StarterOptions {
  /** A kind's top-level machine states (workflows/machines), one `steward_objects` count each. */
  lifecycleStates: (kind: LifecycleKind) => readonly string[];
  /** Period of the objects-per-state count; 30 s by default. */
  objectCountIntervalMs?: number;
}

export interface RunningStarter {
  starter: Starter;
  /** Where /healthz, /readyz and /metrics answer (useful with port 0). */
  httpPort: number;
  /** Stops sending (releasing the Lease), then closes the Temporal connection and the HTTP server. */
  stop(): Promise<void>;
}

/** What the probes read while the process starts and runs. */
interface Live extends TemporalReach {
  controller?: { starter: Starter; startedAt: number };
}

/** /healthz, /readyz and /metrics, served from the start: a starter waiting for Temporal says so, not ready. */
function serve(config: StarterConfig, live: Live, registry: Registry, log: Logger): Promise<HttpServer> {
  const temporal = temporalReadiness(config.temporal, live);
  return startHttpServer(
    config.http.host,
    config.http.port,
    {
      liveness: () => {
        const { controller } = live;
        return controller ? starterLiveness(controller.starter.stats(), controller.startedAt, Date.now()) : [];
      },
      readiness: async () => [
        ...(await failedChecks([temporal])),
        ...(live.controller ? starterReadiness(live.controller.starter.stats()) : ['the controller has not started']),
      ],
      metrics: () => registry.metrics(),
    },
    log,
  );
}

/** The global setup workflow (with MidoNet) and the sweeper's Schedule ensured, then the controller started. */
async function startController(
  client: Client,
  kubeConfig: KubeConfig,
  registry: Registry,
  config: StarterConfig,
  log: Logger,
) {
  const { taskQueue, clusterId } = config.temporal;
  if (installation(config.backends).globalSetup) await ensureGlobalSetup(client, config, log);
  const { intervalMs, graceMs, backends, dryRun, caaLeaks } = config.sweep;
  const schedule = await ensureSweepSchedule(client, {
    intervalMs,
    taskQueue,
    clusterId,
    input: { graceMs, backends, dryRun, tenant: config.tenant, caaLeaks },
  });
  log.info({ schedule, intervalMs, graceMs, backends, dryRun, caaLeaks, taskQueue }, 'orphan sweeper Schedule');
  const endpointsFrom = await endpointsSourceServed(kubeConfig, config.endpointsFrom);
  log.info({ endpointsFrom, setting: config.endpointsFrom }, `Services' endpoints read from ${endpointsFrom}`);
  const starter = createStarter({
    kubeConfig,
    temporalClient: client,
    taskQueue,
    clusterId,
    namespace: config.watchNamespace,
    endpointsFrom,
    identity: config.identity,
    resyncMs: config.resyncMs,
    debounceMs: config.debounceMs,
    lease: config.lease,
    logger: log,
    peerPodRuntimeClasses: config.peerPodRuntimeClasses,
    peerPodClouds: config.peerPodClouds,
    tenant: config.tenant,
    registry,
    massDeletion: config.massDeletion,
    backends: config.backends,
  });
  starter.start();
  return starter;
}

/**
 * Serves the probes and metrics at once, waits for Temporal (with backoff, each attempt logged: a starter started
 * during an outage waits rather than exits), then runs the controller.
 */
export async function runStarter(config: StarterConfig, log: Logger, options: StarterOptions): Promise<RunningStarter> {
  const kubeConfig = loadKubeConfig(config.kubeconfig);
  if (!kubeConfig)
    throw new Error('no Kubernetes cluster: give --kubeconfig / KUBECONFIG, or run the starter in a cluster');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const live: Live = {};
  const http = await serve(config, live, registry, log);
  // Before the client, which it traces (StartWorkflow, SignalWithStartWorkflow …); released last.
  const { release } = acquireTracing('steward-starter');
  const closing: (() => Promise<void>)[] = [release, () => http.close()];
  const closeAll = async () => {
    for (const close of closing.reverse()) await close();
  };
  try {
    const client = await connectClientWhenReachable(config.temporal, {
      log,
      onUnreachable: (error) => (live.unreachable = error),
    });
    live.client = client;
    closing.push(() => client.connection.close());
    const starter = await startController(client, kubeConfig, registry, config, log);
    live.controller = { starter, startedAt: Date.now() };
    const counter = countObjectsByState({
      client,
      registry,
      log,
      isLeader: () => starter.stats().isLeader,
      clusterId: config.temporal.clusterId,
      intervalMs: options.objectCountIntervalMs,
      states: options.lifecycleStates,
    });
    closing.push(() => counter.stop());
    log.info({ httpPort: http.port }, 'starter running');
    return {
      starter,
      httpPort: http.port,
      stop: async () => {
        await starter.stop();
        await closeAll();
      },
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** Resolves with the name of the first SIGINT or SIGTERM. */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
