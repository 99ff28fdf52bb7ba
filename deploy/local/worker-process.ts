import { join } from 'node:path';
import { freePort } from '../../worker/ports';
import { workerSettings } from '../../worker/config';
import { repoRoot } from './paths';
import { ManagedProcess, waitUntil } from './process';

export type WorkerSettingValues = Partial<Record<keyof typeof workerSettings, string>>;

/** A Steward worker in a process of its own, as a Deployment's pod runs it. */
export interface WorkerProcess {
  process: ManagedProcess;
  /** Where its /healthz, /readyz and /metrics answer. */
  httpPort: number;
  /** Graceful stop (SIGTERM: the worker drains), killed after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface WorkerProcessOptions {
  /** Its settings, given as environment variables as a ConfigMap gives them; the health port is picked here. */
  settings: WorkerSettingValues;
  /** Settings that have no flag (MIDONET_PASSWORD, TEMPORAL_API_KEY), by variable. */
  secrets?: Record<string, string>;
  logFile: string;
  readyTimeoutMs?: number;
}

/** Starts `steward worker` and waits until its /readyz answers (it polls Temporal by then). */
export async function startWorkerProcess({ settings, secrets = {}, logFile, readyTimeoutMs = 60_000 }: WorkerProcessOptions): Promise<WorkerProcess> {
  const httpPort = await freePort();
  const values: WorkerSettingValues = { ...settings, httpHost: '127.0.0.1', httpPort: String(httpPort) };
  const env = Object.fromEntries(Object.entries(values).flatMap(([key, value]) => (value === undefined ? [] : [[workerSettings[key as keyof typeof workerSettings].env, value]])));
  const child = ManagedProcess.start('steward-worker', process.execPath, [join(repoRoot, 'bin', 'steward.cjs'), 'worker'], { logFile, env: { ...env, ...secrets } });
  try {
    await waitUntil('the worker process ready', async () => (await fetch(`http://127.0.0.1:${httpPort}/readyz`)).ok, { timeoutMs: readyTimeoutMs, intervalMs: 250, process: child });
  } catch (error) {
    await child.stop(1_000);
    throw error;
  }
  return { process: child, httpPort, stop: (graceMs) => child.stop(graceMs) };
}
