import { join } from 'node:path';
import { freePort } from '../../worker/ports';
import { activitySettings } from '../../activities/config';
import { workerProcessSettings } from '../../worker/config';
import { repoRoot } from './paths';
import { ManagedProcess, waitUntil } from './process';

/** `steward worker`'s settings (cli/worker.ts reads the same two tables). */
const workerSettings = { ...workerProcessSettings, ...activitySettings };
export type WorkerSettingValues = Partial<Record<keyof typeof workerSettings, string>>;

/** `steward worker` or `steward starter` in a process of its own, as a Deployment's pod runs it. */
export interface StewardProcess {
  process: ManagedProcess;
  /** Graceful stop (SIGTERM: a worker drains, a starter releases its Lease), killed after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface WorkerProcess extends StewardProcess {
  /** Where its /healthz, /readyz and /metrics answer. */
  httpPort: number;
}

export interface StewardProcessOptions {
  /** The process's name (its pod's); `steward-<role>` when absent. */
  name?: string;
  /** Its environment as a ConfigMap gives it (variables of either role: each reads its own). */
  env?: Record<string, string>;
  /** Secrets, by variable (MIDONET_PASSWORD, TEMPORAL_API_KEY): given as a Secret gives them, never as flags. */
  secrets?: Record<string, string>;
  logFile: string;
  readyTimeoutMs?: number;
  /** Where `bin/steward.cjs` is: a compiled tree (compileSteward) runs as the image does; this checkout when absent. */
  appRoot?: string;
}

export interface WorkerProcessOptions extends StewardProcessOptions {
  /** Its settings by name, given as environment variables over `env`; the health port is picked here. */
  settings?: WorkerSettingValues;
}

/**
 * The Node flags every Steward process starts with, as the image's entrypoint gives them (deploy/image: its
 * Dockerfile and build.ts take them from here). V8's young generation held to two semi-spaces of 4 MB: left to V8 it
 * grows to 16 MB each on Node 20 and 32 MB on the image's Node 24, in the main thread and again in each workflow
 * thread, memory a worker keeps for its life (docs/benchmarks.md, issue 44's levers). The flag must be on the
 * command line: a heap is sized when its isolate starts.
 */
export const NODE_FLAGS = ['--max-semi-space-size=4'];

/**
 * The environment every Steward process starts with, as the image gives it (its Dockerfile's ENV; build.ts takes it
 * from here), unless the environment sets it otherwise. glibc's malloc held to two arenas where it makes up to eight
 * a core as threads meet in it (the Temporal core's, libuv's, V8's): 24 MB less at the 1,000-Pod peak for no CPU the
 * bench tells apart (docs/benchmarks.md, issue 44's levers).
 */
export const PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * Node's own flags for every such process beside NODE_FLAGS, from `STEWARD_PROCESS_NODE_ARGS` (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/p` to profile a bench's worker): NODE_OPTIONS refuses the profiler's flags.
 */
const nodeArgs = () => (process.env.STEWARD_PROCESS_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * Starts `steward <role>` and waits until `ready` says so; a process that exits first fails the start with the end
 * of its log.
 */
export async function startStewardProcess(
  role: 'worker' | 'starter',
  {
    name = `steward-${role}`,
    env = {},
    secrets = {},
    logFile,
    readyTimeoutMs = 60_000,
    appRoot = repoRoot,
  }: StewardProcessOptions,
  ready: () => Promise<boolean>,
): Promise<StewardProcess> {
  const child = ManagedProcess.start(
    name,
    process.execPath,
    [...NODE_FLAGS, ...nodeArgs(), join(appRoot, 'bin', 'steward.cjs'), role],
    {
      logFile,
      env: {
        ...Object.fromEntries(Object.entries(PROCESS_ENV).map(([name, value]) => [name, process.env[name] ?? value])),
        ...env,
        ...secrets,
      },
    },
  );
  try {
    await waitUntil(`${name} ready`, ready, { timeoutMs: readyTimeoutMs, intervalMs: 250, process: child });
  } catch (error) {
    await child.stop(1_000);
    throw error;
  }
  return { process: child, stop: (graceMs) => child.stop(graceMs) };
}

/** Starts `steward worker` and waits until its /readyz answers (it polls Temporal by then). */
export async function startWorkerProcess({
  settings = {},
  env = {},
  ...options
}: WorkerProcessOptions): Promise<WorkerProcess> {
  const httpPort = await freePort();
  const values: WorkerSettingValues = { ...settings, httpHost: '127.0.0.1', httpPort: String(httpPort) };
  const fromSettings = Object.fromEntries(
    Object.entries(values).flatMap(([key, value]) =>
      value === undefined ? [] : [[workerSettings[key as keyof typeof workerSettings].env, value]],
    ),
  );
  const started = await startStewardProcess(
    'worker',
    { ...options, env: { ...env, ...fromSettings } },
    async () => (await fetch(`http://127.0.0.1:${httpPort}/readyz`)).ok,
  );
  return { ...started, httpPort };
}

/**
 * Starts `count` processes at once; if any fails to start, stops those that did and throws the first failure, so a
 * caller never holds half a set.
 */
export async function startAll<T extends StewardProcess>(
  count: number,
  start: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = await Promise.allSettled(Array.from({ length: count }, (_, index) => start(index)));
  const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(ok.map((p) => p.stop()));
    throw failed.reason;
  }
  return ok;
}

/** `count` workers (`options(index)` for each), started at once. */
export const startWorkerProcesses = (count: number, options: (index: number) => WorkerProcessOptions) =>
  startAll(count, (index) => startWorkerProcess(options(index)));
