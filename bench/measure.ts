// What a benchmark phase costs outside the time it takes: this process's CPU and peak RSS (the starter or the direct
// reconciler, the bench's driver, and the worker when it runs in-process), the worker processes' CPU and RSS when
// they run in processes of their own, Temporal's CPU (the dev server, or the cluster profile's server hosts and its
// PostgreSQL; from /proc), the API server's requests (its /metrics, less the bench's own), MidoNet's requests (the
// emulator's counters) and, for Steward, the activities the workers ran (their /metrics).
import * as k8s from '@kubernetes/client-node';
import { readdirSync, readFileSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import type { StackInfo } from '../deploy/local';
import type { EmulatorAdmin } from '../deploy/local/midonet';

export interface Usage {
  seconds: number;
  processCpuSeconds: number;
  peakRssMb: number;
  /** Peak RSS less the RSS at the start. */
  rssGrowthMb: number;
  /**
   * The worker processes, when the worker runs in processes of its own: CPU summed, peak RSS the peak of their sum
   * (sampled together), and each one's CPU and peak RSS in start order.
   */
  worker?: {
    cpuSeconds: number;
    peakRssMb: number;
    rssGrowthMb: number;
    each: { cpuSeconds: number; peakRssMb: number }[];
  };
  /** The Temporal server processes' CPU, summed; undefined when Temporal is not this stack's (no pid to read). */
  temporalCpuSeconds?: number;
  /** The cluster profile's PostgreSQL (the server and its backends); undefined on the dev server. */
  databaseCpuSeconds?: number;
  /**
   * The stack's kube-apiserver and etcd, and its MidoNet emulator: what the side's requests and watches cost the
   * servers both sides share (the bench's own driving included, the same on both); undefined without their pids.
   */
  apiServerCpuSeconds?: number;
  emulatorCpuSeconds?: number;
  /** CPU by process from the start to each moment the scenario marked (the create's convergence), in mark order. */
  marks: CpuMark[];
  /** API server requests, the bench's own (creates, deletes, polls) left out. */
  apiRequests: number;
  /** API server requests by `verb resource[/subresource]`, the bench's own included (the same on both sides). */
  apiRequestsBy: Map<string, number>;
  midonetRequests: number;
}

/**
 * CPU seconds of each process group from the meter's start to a moment: the side (this process, and the workers),
 * of which the workers, and the servers around it; undefined where the stack gave no pid.
 */
export interface CpuShares {
  side: number;
  worker?: number;
  temporal?: number;
  database?: number;
  apiServer?: number;
  emulator?: number;
}

export interface CpuMark {
  label: string;
  /** Seconds from the meter's start. */
  seconds: number;
  cpu: CpuShares;
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

const sumOf = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);
const sum = (samples: Map<string, number>) => sumOf(samples.values());

async function apiServerMetrics(kubeConfig: k8s.KubeConfig): Promise<string> {
  const url = new URL('/metrics', kubeConfig.getCurrentCluster()!.server);
  const options: RequestOptions = {
    hostname: url.hostname,
    port: url.port,
    path: url.pathname,
    method: 'GET',
    headers: {},
  };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (chunk: Buffer) => chunks.push(chunk))
        .on('end', () => resolve(Buffer.concat(chunks).toString()))
        .on('error', reject);
    });
    req.on('error', reject).end();
  });
}

/**
 * `apiserver_request_total` by `verb resource[/subresource]`, summed over scopes and the rest; requests the API server
 * refused are counted apart by their code (`DELETE translations (404)`), so a request that finds nothing shows.
 */
async function apiServerRequests(kubeConfig: k8s.KubeConfig): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [labels, count] of promSamples(await apiServerMetrics(kubeConfig), 'apiserver_request_total')) {
    const label = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(labels)?.[1] ?? '';
    const subresource = label('subresource');
    const code = label('code');
    const refused = code.startsWith('2') ? '' : ` (${code})`;
    const key = `${label('verb')} ${label('resource')}${subresource ? `/${subresource}` : ''}${refused}`;
    out.set(key, (out.get(key) ?? 0) + count);
  }
  return out;
}

/** What `after` counted more than `before`, key by key; keys with no change are left out. */
function increase(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map(
    [...after].flatMap(([key, n]) => (n > (before.get(key) ?? 0) ? [[key, n - (before.get(key) ?? 0)]] : [])),
  );
}

/** Fields of /proc/<pid>/stat after the command (which may hold spaces): field N of proc(5) is at index N - 3. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** utime + stime of a process, in seconds (clock ticks of 1/100 s, as Linux reports them). */
function processCpuSeconds(pid: number): number {
  return cpuSecondsOf(statFields(pid));
}

const cpuSecondsOf = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) / 100;

/** Every live process's pid and stat fields (statFields); one that ends while /proc is read is left out. */
function liveProcesses(): { pid: number; fields: string[] }[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return [{ pid: Number(entry), fields: statFields(entry) }];
    } catch {
      return [];
    }
  });
}

/**
 * CPU of the program helpers (platform/exec.ts) forked by `parent`, in seconds: a worker's virsh processes are started
 * there, and that work was the worker's own before. The programs' CPU itself is counted on neither side, as virsh's.
 */
function helperCpuSeconds(parent: number): number {
  let seconds = 0;
  for (const { pid, fields } of liveProcesses()) {
    if (Number(fields[1]) !== parent) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('exec-helper')) seconds += cpuSecondsOf(fields);
    } catch {
      // Ended meanwhile.
    }
  }
  return seconds;
}

/** A process's CPU with its program helper's. */
const cpuWithHelper = (pid: number) => processCpuSeconds(pid) + helperCpuSeconds(pid);

/**
 * CPU of a process and all its descendants, in seconds: each live one's utime + stime plus cutime + cstime (what its
 * children that ended used, once reaped). PostgreSQL serves each connection from a process of its own, started and
 * ended as Temporal's pools grow and shrink, so its server's own CPU alone would miss almost everything.
 */
export function processTreeCpuSeconds(root: number): number {
  const stats = new Map(
    liveProcesses().map(({ pid, fields: f }) => [
      pid,
      { parent: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) },
    ]),
  );
  const inTree = (pid: number): boolean => {
    for (let p = pid; p > 1; p = stats.get(p)?.parent ?? 0) if (p === root) return true;
    return false;
  };
  let ticks = 0;
  for (const [pid, { ticks: t }] of stats) if (inTree(pid)) ticks += t;
  return ticks / 100;
}

/** Temporal's processes on a stack: the dev server, or the cluster profile's server hosts (not its UI server) and PostgreSQL. */
export interface TemporalProcesses {
  servers: number[];
  database?: number;
}

export function temporalProcesses(info: StackInfo): TemporalProcesses {
  if (info.temporal.external) return { servers: [] };
  if (info.temporal.profile === 'cluster') {
    return {
      servers: (info.temporal.hosts ?? []).map((h) => h.pid).filter((pid) => pid > 0),
      ...(info.pids.postgres ? { database: info.pids.postgres } : {}),
    };
  }
  return { servers: info.pids.temporal ? [info.pids.temporal] : [] };
}

/**
 * Resident set size of a process, in bytes (VmRSS of /proc/<pid>/status); 0 once it has exited, so that a worker that
 * ends mid-run leaves the run to fail on what it left undone, not the sampler's timer to end the bench.
 */
export function residentBytes(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0;
  }
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
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
  temporal: TemporalProcesses;
  /** The stack's servers both sides share: kube-apiserver with etcd, and the MidoNet emulator. */
  shared: SharedProcesses;
  /** The worker processes, when the worker does not run in this one. */
  workerPids?: number[];
  /** The bench's own API server requests so far. */
  driver: { requests: number };
}

export interface SharedProcesses {
  apiServer: number[];
  emulator: number[];
}

/** The stack's kube-apiserver and etcd, and its emulator, as far as the stack started them (pids it knows). */
export function sharedProcesses(info: StackInfo): SharedProcesses {
  const known = (...names: string[]) => names.flatMap((name) => (info.pids[name] ? [info.pids[name]] : []));
  return { apiServer: known('kube-apiserver', 'etcd'), emulator: known('midonet-emulator') };
}

/** CPU since now of `pids` (each with its descendants), in seconds; undefined without pids. */
function cpuSince(pids: number[]): () => number | undefined {
  const cpu = () => sumOf(pids.map(processTreeCpuSeconds));
  const before = pids.length ? cpu() : undefined;
  return () => (before === undefined ? undefined : cpu() - before);
}

/**
 * Starts measuring now; `mark(label)` takes the CPU of each process group so far (a window inside the measured one,
 * as the create's), `stop()` gives what was used since the start.
 */
export async function startMeter({
  kubeConfig,
  admin,
  temporal,
  shared,
  workerPids = [],
  driver,
}: MeterOptions): Promise<{ mark(label: string): void; stop(): Promise<Usage> }> {
  const apiServerCpu = cpuSince(shared.apiServer);
  const emulatorCpu = cpuSince(shared.emulator);
  const started = Date.now();
  const cpu = process.cpuUsage();
  const ownHelperBefore = helperCpuSeconds(process.pid);
  const temporalCpu = cpuSince(temporal.servers);
  const databaseCpu = cpuSince(temporal.database ? [temporal.database] : []);
  const workerCpuBefore = workerPids.map(cpuWithHelper);
  const api = await apiServerRequests(kubeConfig);
  const driverBefore = driver.requests;
  const midonet = (await admin.counters()).total;
  const own = peakSampler(() => process.memoryUsage().rss);
  // Sampled together, so that the sum's peak is one moment's, not the sum of peaks at different moments.
  let workerRss = workerPids.map(() => 0);
  const workers = workerPids.length
    ? peakSampler(() => {
        const now = workerPids.map(residentBytes);
        workerRss = workerRss.map((peak, i) => Math.max(peak, now[i]!));
        return sumOf(now);
      })
    : undefined;
  const ownCpu = () => {
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / 1e6 + helperCpuSeconds(process.pid) - ownHelperBefore;
  };
  const workersCpu = () => workerPids.map((pid, i) => cpuWithHelper(pid) - workerCpuBefore[i]!);
  const shares = (own: number, worker: number[]): CpuShares => {
    const workerSum = workers ? sumOf(worker) : undefined;
    return {
      side: own + (workerSum ?? 0),
      worker: workerSum,
      temporal: temporalCpu(),
      database: databaseCpu(),
      apiServer: apiServerCpu(),
      emulator: emulatorCpu(),
    };
  };
  const marks: CpuMark[] = [];
  return {
    mark(label) {
      marks.push({ label, seconds: (Date.now() - started) / 1000, cpu: shares(ownCpu(), workersCpu()) });
    },
    async stop() {
      const seconds = (Date.now() - started) / 1000;
      const processCpuSeconds = ownCpu();
      const workerCpu = workersCpu();
      const total = shares(processCpuSeconds, workerCpu);
      const apiNow = await apiServerRequests(kubeConfig);
      const requestsOfDriver = driver.requests - driverBefore;
      return {
        seconds,
        processCpuSeconds,
        ...own.stop(),
        ...(workers ? { worker: workerUsage(workerCpu, workers.stop(), workerRss) } : {}),
        temporalCpuSeconds: total.temporal,
        databaseCpuSeconds: total.database,
        apiServerCpuSeconds: total.apiServer,
        emulatorCpuSeconds: total.emulator,
        marks,
        apiRequests: sum(increase(api, apiNow)) - requestsOfDriver,
        apiRequestsBy: increase(api, apiNow),
        midonetRequests: (await admin.counters()).total - midonet,
      };
    },
  };
}

function workerUsage(
  cpu: number[],
  total: { peakRssMb: number; rssGrowthMb: number },
  peaks: number[],
): NonNullable<Usage['worker']> {
  return {
    cpuSeconds: sumOf(cpu),
    ...total,
    each: cpu.map((cpuSeconds, i) => ({ cpuSeconds, peakRssMb: peaks[i]! / 2 ** 20 })),
  };
}

/**
 * The worker's sticky cache at work, from the SDK's metrics on its /metrics: runs it evicted to make room (each one's
 * next workflow task replays its whole history), and workflow tasks that found their run evicted (misses).
 */
export async function workerCache(httpPort: number): Promise<{ evictions: number; misses: number }> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  return {
    evictions: sum(promSamples(text, 'temporal_sticky_cache_total_forced_eviction_total')),
    misses: sum(promSamples(text, 'temporal_sticky_cache_miss_total')),
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
