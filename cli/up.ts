import { join } from 'node:path';
import { Option, type Command } from 'commander';
import pino from 'pino';
import type { CloudConfig } from '../activities/cloud';
import { backendResource, createMidonetClient, type MidonetConnection } from '../activities/midonet';
import type { AnyStackInfo, ManagedProcess, SupervisionEvents, TemporalProfile } from '../deploy/local';
import { type RunningWorker } from '../worker';
import { runWorker } from './worker';
import { loadWorkerConfig, workerSettings } from './worker';
import { temporalSettings } from '../platform/temporal-config';
import { freePort } from '../worker/ports';
import { addSettingFlags, countArgument, settingLabel, type Flags } from '../platform/settings';
import { backendsSchema, backendsSetting, type Backend } from '../platform/backends';
import { globalIds } from '../model/translation/ids';
import { loadStarterConfig, starterSettings } from '../starter/config';
import { KATA_REMOTE } from '../starter/controller';
import { runStarter, untilStopSignal, type RunningStarter } from '../starter/run';
import { loadDevStack } from './dev-stack';
import { UsageError } from './errors';
import { lifecycleStates } from '../workflows/machines';

/**
 * `steward up` (`npm start`): the embedded stack, and the worker and the starter in this process against it, until
 * Ctrl-C. Every server it started is supervised: one that exits is reported and started again, as the kubelet would.
 * The stack is loaded only here (dev-stack.ts).
 */

function peerPodSummary(cloud: CloudConfig | undefined, runtimeClasses: string[]): string {
  if (!cloud) return 'none (no --cloud-provider / STEWARD_CLOUD_PROVIDER)';
  const where =
    cloud.provider === 'libvirt'
      ? `libvirt ${cloud.libvirt.uri}`
      : `aws ${cloud.aws.region}${cloud.aws.endpoint ? ` at ${cloud.aws.endpoint}` : ''}`;
  return `${where}, for Pods of runtime class ${runtimeClasses.join(', ') || '(none)'}`;
}

/**
 * The deployer's cluster router (seed 001: the global setup workflow only checks it), with the same body as the global
 * Translation's router (model/translation/global.ts), so the two never differ.
 */
async function ensureClusterRouter(midonet: MidonetConnection, tenant: string): Promise<string> {
  const router = backendResource('Router', '', {
    id: globalIds(tenant).clusterRouter,
    tenantId: tenant,
    name: 'ClusterRouter',
  });
  return (await createMidonetClient(midonet).ensure(router)).outcome;
}

/** What `steward up` runs beside the stack. */
interface StewardOnStack {
  /** What runs, for the first summary line ("the worker and the starter"). */
  what: string;
  /** Summary lines, in the style of the stack's. */
  summary: string[];
  /** In this process: settles when the worker stops, on its own (rejected with why) or after `stop`. */
  done?: Promise<void>;
  /** As processes: the worker and starter processes, supervised as the stack's servers are. */
  processes: ManagedProcess[];
  /** Starter first (no more signals), then the worker. */
  stop(): Promise<void>;
}

/** The stack's MidoNet for the worker: none without it; the emulator takes any credentials, a real MidoNet the user's. */
function midonetEnv({ midonet }: AnyStackInfo, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!midonet) return {};
  return {
    MIDONET_API_URL: midonet.url,
    ...(midonet.external
      ? {}
      : { MIDONET_USERNAME: env.MIDONET_USERNAME || 'admin', MIDONET_PASSWORD: env.MIDONET_PASSWORD || 'admin' }),
  };
}

/**
 * Runs the worker and the starter in this process against the stack, after creating the cluster router in the
 * MidoNet emulator as a deployer would (seed 001: the deployer creates it, the global setup only checks it). Their
 * logs go to `<stateDir>/logs/steward.log`, so the terminal keeps the summary.
 */
async function runOnStack(
  info: AnyStackInfo,
  options: { freePorts: boolean; flags: Flags },
  env: NodeJS.ProcessEnv = process.env,
): Promise<StewardOnStack> {
  const stackEnv: NodeJS.ProcessEnv = {
    ...env,
    ...loadDevStack().temporalEnv(info.temporal, env),
    ...loadDevStack().STACK_STEWARD_SETTINGS,
    KUBECONFIG: info.kubernetes.kubeconfig,
    ...midonetEnv(info, env),
    // Peer-pod VMs go to the stack's libvirt unless another cloud is configured.
    ...(env.STEWARD_CLOUD_PROVIDER ? {} : { STEWARD_CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: info.libvirt.uri }),
    // The embedded stack has no cloud-api-adaptor: Steward makes the VMs of kata-remote Pods unless told otherwise.
    STEWARD_PEERPOD_RUNTIME_CLASSES: env.STEWARD_PEERPOD_RUNTIME_CLASSES || KATA_REMOTE,
    // The objects Steward writes link to the stack's own UI.
    ...(info.temporal.uiUrl && !env.STEWARD_TEMPORAL_UI_URL ? { STEWARD_TEMPORAL_UI_URL: info.temporal.uiUrl } : {}),
    STEWARD_HTTP_HOST: env.STEWARD_HTTP_HOST || '127.0.0.1',
    STEWARD_HTTP_PORT:
      env.STEWARD_HTTP_PORT || String(options.freePorts ? 0 : await freePort(Number(workerSettings.httpPort.default))),
    STEWARD_STARTER_HTTP_HOST: env.STEWARD_STARTER_HTTP_HOST || '127.0.0.1',
    STEWARD_STARTER_HTTP_PORT:
      env.STEWARD_STARTER_HTTP_PORT ||
      String(options.freePorts ? 0 : await freePort(Number(starterSettings.httpPort.default))),
  };
  const workerConfig = loadWorkerConfig(options.flags, stackEnv);
  const starterConfig = loadStarterConfig(options.flags, stackEnv);
  const logFile = join(info.stateDir, 'logs', 'steward.log');
  const log = pino(
    { level: workerConfig.logLevel, serializers: { error: pino.stdSerializers.err } },
    pino.destination({ dest: logFile, mkdir: true }),
  );

  const { tenant } = starterConfig;
  if (info.midonet?.adminUrl && workerConfig.midonet) {
    const outcome = await ensureClusterRouter(workerConfig.midonet, tenant);
    log.info({ outcome, id: globalIds(tenant).clusterRouter, tenant }, 'cluster router (as the deployer)');
  }

  const worker: RunningWorker = await runWorker(workerConfig, { log });
  let starter: RunningStarter;
  try {
    starter = await runStarter(starterConfig, log, { lifecycleStates });
  } catch (error) {
    await worker.shutdown();
    throw error;
  }
  return {
    what: 'the worker and the starter',
    summary: [
      `  Worker metrics:    http://${workerConfig.http.host}:${worker.httpPort}/metrics (health: /healthz, /readyz)`,
      `  Starter:           ${starterConfig.identity} (Lease ${starterConfig.lease.namespace}/${starterConfig.lease.name})`,
      `  Starter metrics:   http://${starterConfig.http.host}:${starter.httpPort}/metrics (health: /healthz, /readyz)`,
      `  Peer-pod VMs:      ${peerPodSummary(workerConfig.cloud, starterConfig.peerPodRuntimeClasses)}`,
      `  Steward log:       ${logFile}`,
      tryIt(info),
    ],
    done: worker.done,
    processes: [],
    stop: async () => {
      await starter.stop();
      await worker.shutdown();
    },
  };
}

function tryIt(info: AnyStackInfo): string {
  const { defaultStateDir, stackFile } = loadDevStack();
  return `  Try it:            npx steward demo${info.stateDir === defaultStateDir ? '' : ` --stack ${stackFile(info.stateDir)}`} (in a second terminal)`;
}

/**
 * Steward as a user deploys it (deploy/local/steward-processes.ts): `workers` worker and `starters` starter processes,
 * each with the manifest's settings and a ServiceAccount token of its own. As under runOnStack, the cluster router is
 * created as a deployer would, and Pods of runtime class kata-remote get VMs (the stack has no cloud-api-adaptor).
 */
async function runProcessesOnStack(
  info: AnyStackInfo,
  options: { workers: number; starters: number; taskQueue?: string; backends?: readonly Backend[] },
  env: NodeJS.ProcessEnv = process.env,
): Promise<StewardOnStack> {
  const { startStewardProcesses } = loadDevStack();
  // The emulator takes any credentials; a real MidoNet needs the user's.
  const secrets: Record<string, string> = !info.midonet
    ? {}
    : info.midonet.external
      ? env.MIDONET_PASSWORD
        ? { MIDONET_PASSWORD: env.MIDONET_PASSWORD }
        : {}
      : { MIDONET_PASSWORD: env.MIDONET_PASSWORD || 'admin' };
  const overrides: Record<string, string> = {
    STEWARD_PEERPOD_RUNTIME_CLASSES: env.STEWARD_PEERPOD_RUNTIME_CLASSES || KATA_REMOTE,
    ...(options.backends ? { [backendsSetting.env]: options.backends.join(',') } : {}),
    ...(options.taskQueue ? { [temporalSettings.taskQueue.env]: options.taskQueue } : {}),
  };
  const processes = await startStewardProcesses({
    info,
    workers: options.workers,
    starters: options.starters,
    overrides,
    secrets,
  });
  try {
    // Read as the processes read them, so a bad value fails here with its variable named.
    const workerConfig = loadWorkerConfig({}, { ...processes.settings, ...secrets });
    const starterConfig = loadStarterConfig({}, processes.settings);
    if (info.midonet?.adminUrl && workerConfig.midonet)
      await ensureClusterRouter(workerConfig.midonet, starterConfig.tenant);
    const holder = await processes.leaseHolder();
    const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 'es'}`;
    return {
      what: `${plural(options.workers, 'worker process')} and ${plural(options.starters, 'starter process')}`,
      summary: [
        ...column(
          'Workers:',
          processes.workers.map(
            (w) =>
              `${w.process.name} (pid ${w.process.pid}): http://127.0.0.1:${w.httpPort}/metrics, log ${w.process.logFile}`,
          ),
        ),
        ...column(
          'Starters:',
          processes.starters.map(
            (s) =>
              `${s.process.name} (pid ${s.process.pid})${s.process.name === holder ? ', holds' : ', waits for'} Lease ${processes.lease.namespace}/${processes.lease.name}, log ${s.process.logFile}`,
          ),
        ),
        `  Identities:        the manifests' ServiceAccount, a token each: ${join(info.stateDir, 'steward')}/<process>.kubeconfig`,
        `  Peer-pod VMs:      ${peerPodSummary(workerConfig.cloud, starterConfig.peerPodRuntimeClasses)}`,
        tryIt(info),
      ],
      processes: [...processes.workers, ...processes.starters].map((p) => p.process),
      stop: () => processes.stop(),
    };
  } catch (error) {
    await processes.stop();
    throw error;
  }
}

/** Summary lines under one label, in the style of the stack's. */
const column = (label: string, lines: string[]) =>
  lines.map((line, i) => `  ${(i === 0 ? label : '').padEnd(19)}${line}`);

/** What `--temporal` offers: the profile, and what it starts. */
const temporalProfiles: Record<TemporalProfile, string> = {
  dev: 'the Temporal dev server (one process, SQLite)',
  cluster: 'PostgreSQL and three Temporal server hosts (frontend, matching and worker; history twice)',
};

/** The flags of `steward up`. */
interface UpOptions {
  stateDir?: string;
  freePorts?: boolean;
  steward: boolean;
  taskQueue?: string;
  temporal: TemporalProfile;
  workers?: number;
  starters?: number;
  /** STEWARD_BACKENDS's flag: `peerpods` starts no MidoNet emulator. */
  backends?: string;
}

/** `--workers` or `--starters`: Steward as processes, the way it is deployed. */
const asDeployed = (options: UpOptions) => options.workers !== undefined || options.starters !== undefined;

/** Steward beside the stack: as processes, in this process, or nothing with `--no-steward`. */
async function startSteward(
  info: AnyStackInfo,
  options: UpOptions,
  backends: readonly Backend[] | undefined,
): Promise<StewardOnStack | undefined> {
  if (asDeployed(options))
    return runProcessesOnStack(info, {
      workers: options.workers ?? 1,
      starters: options.starters ?? 1,
      taskQueue: options.taskQueue,
      backends,
    });
  const flags = { taskQueue: options.taskQueue, ...(backends ? { backends: backends.join(',') } : {}) };
  if (options.steward) return runOnStack(info, { freePorts: options.freePorts ?? false, flags });
  return undefined;
}

/** What runs and where, printed once everything is up. */
function upSummary(info: AnyStackInfo, stackJson: string, steward: StewardOnStack | undefined): string {
  const lines = [
    '',
    `Steward embedded stack is up${steward ? `, with ${steward.what}` : ''}.`,
    `  Temporal UI:       ${info.temporal.uiUrl ?? '(external server: see its own UI)'}`,
    `  Temporal address:  ${info.temporal.address} (namespace ${info.temporal.namespace})`,
    ...column(
      'Temporal hosts:',
      (info.temporal.hosts ?? []).map((h) => `${h.name}: ${h.services.join(', ')} (pid ${h.pid})`),
    ),
    ...(info.pids.postgres
      ? [`  PostgreSQL:        pid ${info.pids.postgres} (Temporal's persistence and visibility)`]
      : []),
    `  kubeconfig:        ${info.kubernetes.kubeconfig}`,
    `  libvirt URI:       ${info.libvirt.uri}`,
    `  MidoNet API:       ${info.midonet ? `${info.midonet.url}${info.midonet.adminUrl ? ` (emulator admin: ${info.midonet.adminUrl})` : ''}` : 'none (peer pods only)'}`,
    `  EC2 endpoint:      ${info.ec2.endpoint} (region ${info.ec2.region}${info.ec2.external ? '' : ', moto test server'})`,
    `  stack.json:        ${stackJson}`,
    ...(steward?.summary ?? []),
    'Press Ctrl-C to stop.',
  ];
  return lines.join('\n') + '\n';
}

/**
 * Why to stop: a signal, or the worker in this process ending on its own (it failed), which stops everything too. A
 * server or a Steward process that exits is started again instead (supervise).
 */
function untilStopped(steward: StewardOnStack | undefined): Promise<string> {
  const workerEnded = steward?.done?.then(
    () => 'the worker stopped',
    (error: unknown) => `the worker failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  return Promise.race([untilStopSignal(), ...(workerEnded ? [workerEnded] : [])]);
}

/** A server's exit and its new start, on the terminal as they happen (each server's log has them too). */
const supervisionReport = (write: (line: string) => void): SupervisionEvents => ({
  exited: (server, how, restartInMs) =>
    write(
      `${server.name} (pid ${server.pid}) ${how}: restarting it in ${restartInMs / 1000} s (log: ${server.logFile})`,
    ),
  restarted: (server) => write(`${server.name} restarted (pid ${server.pid})`),
});

/** `--backends` / STEWARD_BACKENDS, checked before anything starts; absent: both. */
function backendsOf(options: UpOptions): Backend[] | undefined {
  const given = options.backends ?? (process.env[backendsSetting.env] || undefined);
  if (given === undefined) return undefined;
  const parsed = backendsSchema.safeParse(given);
  if (!parsed.success)
    throw new UsageError(`${settingLabel('backends', backendsSetting)}: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/** The stack, Steward beside it, until Ctrl-C or the end of the worker in this process (then with exit code 1). */
async function up(options: UpOptions): Promise<void> {
  if (asDeployed(options) && !options.steward)
    throw new UsageError('--workers and --starters run Steward, which --no-steward leaves out');
  const backends = backendsOf(options);
  const { startStack, stackFile } = loadDevStack();
  const stack = await startStack({
    stateDir: options.stateDir,
    ports: options.freePorts ? 'free' : 'default',
    temporal: options.temporal,
    midonet: !backends || backends.includes('midonet'),
  });
  const { info } = stack;
  // Supervised from now on, also while Steward starts (its workflow bundle takes a while).
  const events = supervisionReport((line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`));
  stack.supervise(events);
  let steward: StewardOnStack | undefined;
  try {
    steward = await startSteward(info, options, backends);
  } catch (error) {
    await stack.stop();
    throw error;
  }
  for (const server of steward?.processes ?? []) server.supervise(events);
  process.stdout.write(upSummary(info, stackFile(info.stateDir), steward));
  const why = await untilStopped(steward);
  const signalled = why === 'SIGINT' || why === 'SIGTERM';
  process.stdout.write(`\n${why}: stopping ${steward ? `${steward.what} and ` : ''}the stack…\n`);
  await steward?.stop().catch((error: unknown) => process.stderr.write(`stopping Steward: ${String(error)}\n`));
  await stack.stop().catch((error: unknown) => process.stderr.write(`stopping the stack: ${String(error)}\n`));
  if (!signalled) throw new Error(why);
}

export function registerUpCommand(program: Command): void {
  const command = program
    .command('up')
    .description(
      'start the embedded stack (Temporal with UI, Kubernetes control plane, libvirt, MidoNet API emulator) with the worker and the starter, and keep it up until Ctrl-C',
    )
    .option('--state-dir <dir>', 'where data, logs, the kubeconfig and stack.json go (default: .steward/)')
    .option('--free-ports', 'use any free ports instead of the well-known ones')
    .option('--no-steward', 'start only the stack: no cluster router, worker or starter')
    .addOption(
      new Option(
        '--temporal <profile>',
        `Temporal to start: ${Object.entries(temporalProfiles)
          .map(([name, what]) => `${name}, ${what}`)
          .join('; ')}`,
      )
        .choices(Object.keys(temporalProfiles))
        .default('dev'),
    )
    .option(
      '--workers <n>',
      'run n `steward worker` processes as deploy/manifests/steward.yaml deploys them (settings as environment, a ServiceAccount token each) instead of the worker in this process',
      countArgument,
    )
    .option(
      '--starters <n>',
      'run n `steward starter` processes sharing one Lease, deployed the same way (with --workers: default 1)',
      countArgument,
    );
  // The worker's and the starter's task queue and backends (peerpods: no MidoNet emulator): the stack's Temporal gives
  // the rest of the Temporal settings.
  addSettingFlags(command, { taskQueue: temporalSettings.taskQueue, backends: backendsSetting }).action(
    (options: UpOptions) => up(options),
  );
}
