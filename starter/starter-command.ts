import { hostname } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import pino, { type Logger } from 'pino';
import { z } from 'zod';
import type { CloudConfig } from '../activities/cloud';
import { backendResource, createMidonetClient } from '../activities/midonet';
import { stackFile, type StackInfo } from '../deploy/local';
import { defaultStateDir } from '../deploy/local/paths';
import { freePort } from '../worker/ports';
import { createLogger, runWorker, type RunningWorker } from '../worker';
import { loadTemporalConfig, loadWorkerConfig, logLevels, temporalSettings, workerSettings, type LogLevel, type TemporalConfig } from '../worker/config';
import { addSettingFlags, ConfigError, parseSettings, readableFile, whole, type Flags, type Setting } from '../worker/settings';
import { connectClient } from '../worker/connection';
import { GLOBAL_MIDONET_WORKFLOW_ID, TASK_QUEUE } from '../workflows/naming';
import type { SweepBackend } from '../workflows/sweep-report';
import { DEFAULT_TENANT, globalIds } from '../workflows/translation/ids';
import { createStarter, DEFAULT_LEASE, DEFAULT_PEERPOD_RUNTIME_CLASSES, type Starter } from './controller';
import { backendList, duration, ensureSweepSchedule } from './sweep-schedule';

/**
 * `steward starter`: the watcher that turns Kubernetes events into signal-with-start, configured from flags and
 * environment like the worker (the Temporal settings are the worker's own). Also what `steward up` runs in process,
 * with the worker, against the embedded stack (`runOnStack`).
 */

/** The starter's own settings; the Temporal ones come from worker/config.ts. */
export const starterSettings = {
  kubeconfig: workerSettings.kubeconfig,
  watchNamespace: {
    env: 'STEWARD_WATCH_NAMESPACE',
    arg: 'name',
    description: 'namespace whose Pods, Services, Endpoints and Translations are watched (Nodes always are); all namespaces when unset',
  },
  leaseNamespace: { env: 'STEWARD_LEASE_NAMESPACE', arg: 'name', default: DEFAULT_LEASE.namespace, description: 'namespace of the leader-election Lease' },
  leaseName: { env: 'STEWARD_LEASE_NAME', arg: 'name', default: DEFAULT_LEASE.name, description: 'leader-election Lease: of the starters sharing it, only the holder sends' },
  resyncSeconds: { env: 'STEWARD_RESYNC_SECONDS', arg: 'seconds', default: '600', description: 'period of the full re-list of every watched kind' },
  debounceMs: { env: 'STEWARD_DEBOUNCE_MS', arg: 'ms', default: '200', description: "window in which an object's changes are coalesced into one signal" },
  identity: { env: 'STEWARD_IDENTITY', arg: 'name', description: 'this starter in the Lease and the logs, unique per process (e.g. the pod name); default <hostname>-<pid>' },
  tenant: {
    env: 'MIDONETKUBE_TENANT',
    arg: 'name',
    default: DEFAULT_TENANT,
    description: "MidoNet tenant of the cluster's objects (midonet-kubernetes' MIDONETKUBE_TENANT), given to every object's workflow and the global setup workflow",
  },
  peerPodRuntimeClasses: {
    env: 'STEWARD_PEERPOD_RUNTIME_CLASSES',
    arg: 'names',
    default: DEFAULT_PEERPOD_RUNTIME_CLASSES.join(','),
    description: "comma-separated runtime classes whose Pods are peer pods (Steward makes their cloud VMs); 'none' for none",
  },
  sweepInterval: { env: 'STEWARD_SWEEP_INTERVAL', arg: 'duration', default: '10m', description: 'how often the orphan sweeper runs (Schedule gc/sweep), e.g. 10m or 1h' },
  sweepGrace: { env: 'STEWARD_SWEEP_GRACE', arg: 'duration', default: '10m', description: 'how long a resource must stay unrecorded before the sweeper deletes it' },
  sweepBackends: {
    env: 'STEWARD_SWEEP_BACKENDS',
    arg: 'list',
    default: 'cloud,midonet',
    description: 'what the scheduled sweep covers: cloud, midonet, both comma-separated, or none (removes the Schedule)',
  },
  sweepDryRun: { env: 'STEWARD_SWEEP_DRY_RUN', description: 'the scheduled sweep only reports what it would delete' },
  logLevel: workerSettings.logLevel,
} satisfies Record<string, Setting>;

export interface StarterConfig {
  temporal: TemporalConfig;
  kubeconfig?: string;
  /** Absent: all namespaces. */
  watchNamespace?: string;
  lease: { namespace: string; name: string };
  resyncMs: number;
  debounceMs: number;
  identity: string;
  tenant: string;
  peerPodRuntimeClasses: string[];
  sweep: { intervalMs: number; graceMs: number; backends: SweepBackend[]; dryRun: boolean };
  logLevel: LogLevel;
}

const name = z.string().min(1, 'must not be empty');
// Kubernetes object names (RFC 1123 subdomain): caught here rather than as a 422 on the first Lease request.
const objectName = name.regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: (issue) => `must be a Kubernetes name (lower case, digits, '-', '.'), got "${String(issue.input)}"` });

const starterSchema = z.object({
  kubeconfig: readableFile.optional(),
  watchNamespace: objectName.optional(),
  leaseNamespace: objectName,
  leaseName: objectName,
  resyncSeconds: whole(1),
  debounceMs: whole(0),
  identity: name.optional(),
  tenant: name,
  peerPodRuntimeClasses: z
    .string()
    .transform((list) => (list.trim() === 'none' ? [] : list.split(',').map((s) => s.trim()).filter(Boolean)))
    .pipe(z.array(objectName)),
  sweepInterval: duration.pipe(z.number().min(60_000, 'must be at least 1m')),
  sweepGrace: duration,
  sweepBackends: backendList,
  sweepDryRun: z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).optional(),
  logLevel: z.enum(logLevels, { error: `must be one of ${logLevels.join(', ')}` }),
});

/** Flag, else environment variable, else default; every problem (Temporal's too) named by its flag and variable. */
export function loadStarterConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): StarterConfig {
  const issues: string[] = [];
  const collect = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues.push(...error.issues);
      return undefined;
    }
  };
  const temporal = collect(() => loadTemporalConfig(flags, env));
  const v = collect(() => parseSettings(starterSettings, starterSchema, flags, env));
  if (!temporal || !v) throw new ConfigError(issues);
  return {
    temporal,
    kubeconfig: v.kubeconfig,
    watchNamespace: v.watchNamespace,
    lease: { namespace: v.leaseNamespace, name: v.leaseName },
    resyncMs: v.resyncSeconds * 1000,
    debounceMs: v.debounceMs,
    identity: v.identity ?? `${hostname()}-${process.pid}`,
    tenant: v.tenant,
    peerPodRuntimeClasses: v.peerPodRuntimeClasses,
    sweep: { intervalMs: v.sweepInterval, graceMs: v.sweepGrace, backends: v.sweepBackends, dryRun: v.sweepDryRun === 'true' || v.sweepDryRun === '1' },
    logLevel: v.logLevel,
  };
}

/** Starts the global setup workflow unless it runs already: every starter asks, the first one wins. */
async function ensureGlobalSetup(client: Client, tenant: string, log: Logger): Promise<void> {
  const handle = await client.workflow.start('globalMidonet', {
    workflowId: GLOBAL_MIDONET_WORKFLOW_ID,
    taskQueue: TASK_QUEUE,
    args: [{ tenant }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: 'MidoNet global setup',
  });
  log.info({ workflowId: handle.workflowId, runId: handle.firstExecutionRunId, tenant }, 'global setup workflow running');
}

export interface RunningStarter {
  starter: Starter;
  /** Stops sending (releasing the Lease), then closes the Temporal connection. */
  stop(): Promise<void>;
}

export async function runStarter(config: StarterConfig, log: Logger): Promise<RunningStarter> {
  const kubeConfig = new k8s.KubeConfig();
  if (config.kubeconfig) kubeConfig.loadFromFile(config.kubeconfig);
  else kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster()) throw new Error('no Kubernetes cluster: give --kubeconfig / KUBECONFIG, or run the starter in a cluster');
  const client = await connectClient(config.temporal);
  try {
    await ensureGlobalSetup(client, config.tenant, log);
    const { intervalMs, graceMs, backends, dryRun } = config.sweep;
    const schedule = await ensureSweepSchedule(client, { intervalMs, input: { graceMs, backends, dryRun, tenant: config.tenant } });
    log.info({ schedule, intervalMs, graceMs, backends, dryRun }, 'orphan sweeper Schedule gc/sweep');
    const starter = createStarter({
      kubeConfig,
      temporalClient: client,
      namespace: config.watchNamespace,
      identity: config.identity,
      resyncMs: config.resyncMs,
      debounceMs: config.debounceMs,
      lease: config.lease,
      logger: log,
      peerPodRuntimeClasses: config.peerPodRuntimeClasses,
      tenant: config.tenant,
    });
    starter.start();
    return {
      starter,
      stop: async () => {
        await starter.stop();
        await client.connection.close();
      },
    };
  } catch (error) {
    await client.connection.close();
    throw error;
  }
}

function peerPodSummary(cloud: CloudConfig | undefined, runtimeClasses: string[]): string {
  if (!cloud) return 'none (no --cloud-provider / STEWARD_CLOUD_PROVIDER)';
  const where = cloud.provider === 'libvirt' ? `libvirt ${cloud.libvirt.uri}` : `aws ${cloud.aws.region}${cloud.aws.endpoint ? ` at ${cloud.aws.endpoint}` : ''}`;
  return `${where}, for Pods of runtime class ${runtimeClasses.join(', ') || '(none)'}`;
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

export function registerStarterCommand(program: Command): void {
  const command = program
    .command('starter')
    .description('run the starter: watch Nodes, Pods, Services, Endpoints and Translations and signal their workflows (one leader per Lease)');
  addSettingFlags(addSettingFlags(command, temporalSettings), starterSettings).action(async (options: Flags) => {
    const config = loadStarterConfig(options);
    const log = createLogger(config.logLevel);
    const running = await runStarter(config, log);
    const signal = await untilStopSignal();
    log.info({ signal }, 'stopping the starter');
    await running.stop();
  });
}

/** What `steward up` runs beside the stack. */
export interface StewardOnStack {
  /** Summary lines, in the style of the stack's. */
  summary: string[];
  /** Settles when the worker stops: on its own (rejected with why) or after `stop`. */
  done: Promise<void>;
  /** Starter first (no more signals), then the worker. */
  stop(): Promise<void>;
}

/**
 * Runs the worker and the starter in this process against the stack, after creating the cluster router in the
 * MidoNet emulator as a deployer would (seed 001: the deployer creates it, the global setup only checks it). Their
 * logs go to `<stateDir>/logs/steward.log`, so the terminal keeps the summary.
 */
export async function runOnStack(info: StackInfo, options: { freePorts: boolean }, env: NodeJS.ProcessEnv = process.env): Promise<StewardOnStack> {
  const stackEnv: NodeJS.ProcessEnv = {
    ...env,
    TEMPORAL_ADDRESS: info.temporal.address,
    TEMPORAL_NAMESPACE: info.temporal.namespace,
    KUBECONFIG: info.kubernetes.kubeconfig,
    MIDONET_API_URL: info.midonet.url,
    // The emulator takes any credentials; a real MidoNet needs the user's.
    ...(info.midonet.external ? {} : { MIDONET_USERNAME: env.MIDONET_USERNAME || 'admin', MIDONET_PASSWORD: env.MIDONET_PASSWORD || 'admin' }),
    // Peer-pod VMs go to the stack's libvirt unless another cloud is configured.
    ...(env.STEWARD_CLOUD_PROVIDER ? {} : { STEWARD_CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: info.libvirt.uri }),
    STEWARD_HTTP_HOST: env.STEWARD_HTTP_HOST || '127.0.0.1',
    STEWARD_HTTP_PORT: env.STEWARD_HTTP_PORT || String(options.freePorts ? 0 : await freePort(Number(workerSettings.httpPort.default))),
  };
  const workerConfig = loadWorkerConfig({}, stackEnv);
  const starterConfig = loadStarterConfig({}, stackEnv);
  const logFile = join(info.stateDir, 'logs', 'steward.log');
  const log = pino({ level: workerConfig.logLevel, serializers: { error: pino.stdSerializers.err } }, pino.destination({ dest: logFile, mkdir: true }));

  const { tenant } = starterConfig;
  if (info.midonet.adminUrl && workerConfig.midonet) {
    // The same body as the global Translation's router (workflows/translation/global.ts), so the two never differ.
    const router = backendResource('Router', '', { id: globalIds(tenant).clusterRouter, tenantId: tenant, name: 'ClusterRouter' });
    const { outcome } = await createMidonetClient(workerConfig.midonet).ensure(router);
    log.info({ outcome, id: globalIds(tenant).clusterRouter, tenant }, 'cluster router (as the deployer)');
  }

  const worker: RunningWorker = await runWorker(workerConfig, { log });
  let starter: RunningStarter;
  try {
    starter = await runStarter(starterConfig, log);
  } catch (error) {
    await worker.shutdown();
    throw error;
  }
  return {
    summary: [
      `  Worker metrics:    http://${workerConfig.http.host}:${worker.httpPort}/metrics (health: /healthz, /readyz)`,
      `  Starter:           ${starterConfig.identity} (Lease ${starterConfig.lease.namespace}/${starterConfig.lease.name})`,
      `  Peer-pod VMs:      ${peerPodSummary(workerConfig.cloud, starterConfig.peerPodRuntimeClasses)}`,
      `  Steward log:       ${logFile}`,
      `  Try it:            npx steward demo${info.stateDir === defaultStateDir ? '' : ` --stack ${stackFile(info.stateDir)}`} (in a second terminal)`,
    ],
    done: worker.done,
    stop: async () => {
      await starter.stop();
      await worker.shutdown();
    },
  };
}
