// What a benchmark phase costs outside the time it takes: this process's CPU and peak RSS (the starter or the direct
// reconciler, the bench's driver, and the worker when it runs in-process), the worker process's CPU and RSS when it
// runs in a process of its own, the Temporal dev server's CPU (from /proc), the API server's
// requests (its /metrics, less the bench's own), MidoNet's requests (the emulator's counters) and, for Steward, the
// activities the worker ran (its /metrics).
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { EmulatorAdmin } from '../deploy/local/midonet';

export interface Usage {
  seconds: number;
  processCpuSeconds: number;
  peakRssMb: number;
  /** Peak RSS less the RSS at the start. */
  rssGrowthMb: number;
  /** The worker's own process, when it runs in one. */
  worker?: { cpuSeconds: number; peakRssMb: number; rssGrowthMb: number };
  /** Undefined when the Temporal server is not this stack's process (no pid to read). */
  temporalCpuSeconds?: number;
  /** API server requests, the bench's own (creates, deletes, polls) left out. */
  apiRequests: number;
  midonetRequests: number;
}

/** One sample of the Prometheus text format's lines named `name`: labels (as written) → value. */
export function promSamples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^(\w+)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match?.[1] === name) out.set(match[2] ?? '', Number(match[3]));
  }
  return out;
}

const sum = (samples: Map<string, number>) => [...samples.values()].reduce((a, b) => a + b, 0);

async function apiServerMetrics(kubeConfig: k8s.KubeConfig): Promise<string> {
  const url = new URL('/metrics', kubeConfig.getCurrentCluster()!.server);
  const options: RequestOptions = { hostname: url.hostname, port: url.port, path: url.pathname, method: 'GET', headers: {} };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks).toString())).on('error', reject);
    });
    req.on('error', reject).end();
  });
}

/** Sum of `apiserver_request_total` over every verb, resource and code. */
export const apiServerRequests = async (kubeConfig: k8s.KubeConfig) => sum(promSamples(await apiServerMetrics(kubeConfig), 'apiserver_request_total'));

/** utime + stime of a process, in seconds (clock ticks of 1/100 s, as Linux reports them). */
function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which may hold spaces) start after its closing parenthesis; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident set size of a process, in bytes (VmRSS of /proc/<pid>/status). */
function residentBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb ?? 0) * 1024;
}

/** Peak of `sample` every 250 ms from now until `stop`, and its growth over the first sample. */
function peakSampler(sample: () => number) {
  const start = sample();
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, sample())), 250).unref();
  return {
    stop() {
      clearInterval(timer);
      peak = Math.max(peak, sample());
      return { peakRssMb: peak / 2 ** 20, rssGrowthMb: (peak - start) / 2 ** 20 };
    },
  };
}

/**
 * Counts every call made through `api` (one call, one request) into `counter.requests`: the bench's own traffic,
 * left out of what the side under test costs the API server.
 */
export function counted<T extends object>(api: T, counter: { requests: number }): T {
  return new Proxy(api, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        counter.requests++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export interface MeterOptions {
  kubeConfig: k8s.KubeConfig;
  admin: EmulatorAdmin;
  temporalPid?: number;
  /** The worker's process, when it is not this one. */
  workerPid?: number;
  /** The bench's own API server requests so far. */
  driver: { requests: number };
}

/** Starts measuring now; `stop()` gives what was used since. */
export async function startMeter({ kubeConfig, admin, temporalPid, workerPid, driver }: MeterOptions): Promise<{ stop(): Promise<Usage> }> {
  const started = Date.now();
  const cpu = process.cpuUsage();
  const temporalCpu = temporalPid ? processCpuSeconds(temporalPid) : undefined;
  const workerCpu = workerPid ? processCpuSeconds(workerPid) : undefined;
  const api = await apiServerRequests(kubeConfig);
  const driverBefore = driver.requests;
  const midonet = (await admin.counters()).total;
  const own = peakSampler(() => process.memoryUsage().rss);
  const worker = workerPid ? peakSampler(() => residentBytes(workerPid)) : undefined;
  return {
    async stop() {
      const seconds = (Date.now() - started) / 1000;
      const used = process.cpuUsage(cpu);
      const apiNow = await apiServerRequests(kubeConfig);
      const requestsOfDriver = driver.requests - driverBefore;
      return {
        seconds,
        processCpuSeconds: (used.user + used.system) / 1e6,
        ...own.stop(),
        ...(worker && workerPid && workerCpu !== undefined ? { worker: { cpuSeconds: processCpuSeconds(workerPid) - workerCpu, ...worker.stop() } } : {}),
        ...(temporalPid && temporalCpu !== undefined ? { temporalCpuSeconds: processCpuSeconds(temporalPid) - temporalCpu } : {}),
        apiRequests: apiNow - api - requestsOfDriver,
        midonetRequests: (await admin.counters()).total - midonet,
      };
    },
  };
}

/** Activities the worker ran, by name, from its /metrics (every execution, retries included). */
export async function workerActivities(httpPort: number): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  const out = new Map<string, number>();
  for (const [labels, count] of promSamples(text, 'steward_backend_call_duration_seconds_count')) {
    const operation = /operation="([^"]*)"/.exec(labels)?.[1] ?? 'unknown';
    out.set(operation, (out.get(operation) ?? 0) + count);
  }
  return out;
}
