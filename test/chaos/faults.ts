// The faults injected while the operations run, on a schedule drawn from the seed: the worker SIGKILLed and started
// again about every 20 s, and about every 15 s one other fault (a restart, or a window of MidoNet errors, timeouts,
// latency or answers about another resource than the one asked for, or libvirt out of reach, or an observation
// signalled under a made-up UID and one signalled twice, or the kube-apiserver killed, after an etcd compaction or not,
// or a PeerPod deleted by hand; on the cluster profile also a history or matching host killed, or PostgreSQL
// restarted). Every fault is logged with its time, so the operation log reads as one story.
import type { PostgresShutdown } from '../../deploy/local/postgres';
import { sleep } from '../../deploy/local/process';
import type { TemporalProfile } from '../../deploy/local/stack';
import { observedSignal } from '../../model/messages';
import { PEERPOD_API } from '../../model/naming';
import { observationsIn } from '../support';
import { NAMESPACE } from './ops';
import { random } from './prng';
import type { ChaosStack } from './stack';

export const FAULT_KINDS = [
  'worker-kill',
  'starter-kill',
  'temporal-restart',
  'midonet-restart',
  'midonet-5xx',
  'midonet-timeout',
  'midonet-latency',
  'midonet-misdirect',
  'libvirt-cut',
  'forged-observation',
  'kube-apiserver-restart',
  'watch-expiry',
  'peerpod-deleted',
  // Last, so that a dev-profile seed draws the faults it drew before these existed.
  'history-host-kill',
  'matching-host-kill',
  'postgres-restart',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The faults that need the cluster profile's server processes and PostgreSQL (the dev server is one process). */
export const CLUSTER_FAULTS: readonly FaultKind[] = ['history-host-kill', 'matching-host-kill', 'postgres-restart'];

/** The lifecycles a forged observation is sent to: every kind, each proving incarnations with the API server. */
const FORGEABLE = [
  'nodeLifecycle',
  'podLifecycle',
  'serviceLifecycle',
  'endpointsLifecycle',
  'translationLifecycle',
  'peerPodLifecycle',
];

/** The faults that need peer pods in the run. */
const PEER_POD_FAULTS: FaultKind[] = ['libvirt-cut', 'peerpod-deleted'];

/** What a run has for faults to act on. */
export interface FaultScope {
  peerPods: boolean;
  temporal: TemporalProfile;
}

/**
 * `all`, `none`, or a comma-separated list of kinds. `all` means every fault the run's scope has; a cluster fault named
 * on the dev profile is refused, since the run would not test what was asked.
 */
export function parseFaults(text: string, scope: FaultScope): FaultKind[] {
  const all = text === 'all';
  const kinds: FaultKind[] = all
    ? FAULT_KINDS.filter((k) => scope.temporal === 'cluster' || !CLUSTER_FAULTS.includes(k))
    : text === 'none'
      ? []
      : (text
          .split(',')
          .map((k) => k.trim())
          .filter(Boolean) as FaultKind[]);
  for (const k of kinds)
    if (!FAULT_KINDS.includes(k))
      throw new Error(`unknown fault "${k}": expected all, none or some of ${FAULT_KINDS.join(', ')}`);
  const clusterOnly = kinds.filter((k) => CLUSTER_FAULTS.includes(k));
  if (scope.temporal !== 'cluster' && clusterOnly.length)
    throw new Error(
      `${clusterOnly.join(', ')}: cluster profile only (--temporal cluster); the dev server is one process without PostgreSQL`,
    );
  return scope.peerPods ? kinds : kinds.filter((k) => !PEER_POD_FAULTS.includes(k));
}

export interface FaultLog {
  (line: string): void;
}

export class FaultInjector {
  readonly counts: Partial<Record<FaultKind, number>> = {};
  private running = false;
  private loops: Promise<void>[] = [];

  /**
   * The worker kills' own draws: the two loops interleave by timing, so with one generator a seed would give other
   * faults on every run.
   */
  private readonly kills: ReturnType<typeof random>;
  /** One change of the processes at a time. */
  private lock: Promise<unknown> = Promise.resolve();
  private heal?: () => Promise<void>;

  constructor(
    private readonly stack: ChaosStack,
    private readonly kinds: FaultKind[],
    seed: number,
    private readonly log: FaultLog,
    // A killed Temporal host or a stopped PostgreSQL comes back after downMs, as a Deployment replaces a Pod.
    private readonly timing = { workerKillMs: 20_000, faultEveryMs: 15_000, downMs: { min: 1_000, max: 8_000 } },
    private readonly r = random(seed ^ 0x5eed),
  ) {
    this.kills = random(seed ^ 0x6b11);
  }

  start(): void {
    this.running = true;
    if (this.kinds.includes('worker-kill'))
      this.loops.push(
        this.loop(
          () => this.timing.workerKillMs * (0.75 + this.kills.next() / 2),
          () => this.inject('worker-kill', this.kills),
        ),
      );
    const others = this.kinds.filter((k) => k !== 'worker-kill');
    if (others.length)
      this.loops.push(
        this.loop(
          () => this.timing.faultEveryMs * (0.6 + this.r.next() * 0.8),
          () => this.inject(this.r.pick(others), this.r),
        ),
      );
  }

  /** Stops injecting, heals what is still broken and makes sure the worker and the starter run. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    await this.exclusive(async () => {
      await this.heal?.();
      this.heal = undefined;
      await this.stack.admin.clearFaults().catch(() => undefined);
      for (const host of this.stack.temporalHostsDown())
        await this.retry(`start ${host}`, () => this.stack.restartTemporalHost(host));
      if (!this.stack.workerRunning) await this.retry('start the worker', () => this.stack.startWorker());
      if (!this.stack.starterRunning) await this.retry('start the starter', () => this.stack.startStarter());
    });
  }

  private async loop(interval: () => number, act: () => Promise<void>): Promise<void> {
    while (this.running) {
      const until = Date.now() + interval();
      while (this.running && Date.now() < until) await sleep(200);
      if (this.running) await act().catch((error: unknown) => this.log(`fault failed: ${(error as Error).message}`));
    }
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = this.lock.then(work, work);
    this.lock = next.catch(() => undefined);
    return next;
  }

  private async retry(what: string, work: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        this.log(`${what} failed (attempt ${attempt}): ${(error as Error).message.split('\n')[0]}`);
        if (attempt >= 5) throw error;
        await sleep(2_000);
      }
    }
  }

  private async inject(kind: FaultKind, r: ReturnType<typeof random>): Promise<void> {
    await this.exclusive(async () => {
      // A window fault lasts until the next fault other than a worker kill (or the end of the run).
      if (kind !== 'worker-kill') {
        await this.heal?.();
        this.heal = undefined;
      }
      this.counts[kind] = (this.counts[kind] ?? 0) + 1;
      const s = this.stack;
      switch (kind) {
        case 'worker-kill': {
          const pid = s.workerPid;
          await s.killWorker();
          await sleep(r.int(0, 3_000));
          await this.retry('start the worker', () => s.startWorker());
          this.log(`fault worker-kill: worker ${pid} SIGKILLed, ${s.workerPid} polling`);
          break;
        }
        case 'starter-kill': {
          await s.killStarter();
          this.log('fault starter-kill: starter SIGKILLed');
          await sleep(r.int(0, 5_000));
          await this.retry('start the starter', () => s.startStarter());
          this.log('starter back, leading');
          break;
        }
        case 'temporal-restart':
          this.log(`fault temporal-restart: ${s.temporalName} stopping`);
          await s.restartTemporal();
          this.log(`${s.temporalName} back`);
          break;
        case 'history-host-kill':
        case 'matching-host-kill': {
          const service = kind === 'history-host-kill' ? 'history' : 'matching';
          const hosts = s.temporalHosts(service);
          const host = hosts.length ? r.pick(hosts) : undefined;
          if (!host) {
            this.log(`fault ${kind}: no ${service} host running`);
            break;
          }
          const pid = await s.killTemporalHost(host);
          // Back on its old ports; the others learn of it through the membership table, as of a replacement Pod.
          const downMs = r.int(this.timing.downMs.min, this.timing.downMs.max);
          this.log(`fault ${kind}: ${host} (${service}, pid ${pid}) SIGKILLed; back in ${downMs} ms`);
          await sleep(downMs);
          await this.retry(`start ${host}`, () => s.restartTemporalHost(host));
          this.log(`${host} joined again (pid ${s.temporalHostPid(host)})`);
          break;
        }
        case 'postgres-restart': {
          const shutdown = r.pick<PostgresShutdown>(['fast', 'immediate']);
          const downMs = r.int(this.timing.downMs.min, this.timing.downMs.max);
          this.log(`fault postgres-restart: PostgreSQL ${shutdown} shutdown; back in ${downMs} ms`);
          await s.restartPostgres({ shutdown, downMs });
          this.log(`PostgreSQL accepting connections again (pid ${s.postgresPid})`);
          break;
        }
        case 'midonet-restart':
          this.log('fault midonet-restart: MidoNet emulator stopping');
          await s.restartMidonet();
          this.log('MidoNet emulator back');
          break;
        case 'midonet-5xx': {
          const status = r.pick([500, 502, 503]);
          const rate = r.pick([0.2, 0.5, 1]);
          const fault = await s.admin.injectFault({ action: 'error', status, rate, seed: r.int(1, 1e6) });
          this.log(`fault midonet-5xx: ${status} on ${rate * 100} % of calls`);
          this.heal = () => s.admin.removeFault(fault.id).catch(() => undefined);
          break;
        }
        case 'midonet-timeout': {
          // Beyond the client's 10 s deadline, and connections dropped unanswered.
          const slow = await s.admin.injectFault({
            action: 'latency',
            latencyMs: 12_000,
            rate: 0.3,
            seed: r.int(1, 1e6),
          });
          const drop = await s.admin.injectFault({ action: 'drop', rate: 0.2, seed: r.int(1, 1e6) });
          this.log('fault midonet-timeout: 30 % of calls take 12 s, 20 % dropped unanswered');
          this.heal = async () => {
            await s.admin.removeFault(slow.id).catch(() => undefined);
            await s.admin.removeFault(drop.id).catch(() => undefined);
          };
          break;
        }
        case 'midonet-latency': {
          const latencyMs = r.int(300, 3_000);
          const fault = await s.admin.injectFault({ action: 'latency', latencyMs });
          this.log(`fault midonet-latency: ${latencyMs} ms on every call`);
          this.heal = () => s.admin.removeFault(fault.id).catch(() => undefined);
          break;
        }
        case 'midonet-misdirect': {
          // Carried out, but answered with another resource's body or Location: the client must refuse and retry.
          const rate = r.pick([0.2, 0.5]);
          const fault = await s.admin.injectFault({ action: 'misdirect', rate, seed: r.int(1, 1e6) });
          this.log(`fault midonet-misdirect: ${rate * 100} % of calls answered about another resource`);
          this.heal = () => s.admin.removeFault(fault.id).catch(() => undefined);
          break;
        }
        case 'forged-observation': {
          // As anyone with access to the namespace could: a live object's latest observation under a made-up UID (it
          // must finalize nothing), and the same observation again (a duplicate changes nothing).
          const types = FORGEABLE.map((t) => `'${t}'`).join(', ');
          const ids: string[] = [];
          for await (const w of s.client.workflow.list({
            query: `ExecutionStatus = 'Running' AND WorkflowType IN (${types})`,
          }))
            ids.push(w.workflowId);
          const id = ids.length ? r.pick(ids.sort()) : undefined;
          const handle = id ? s.client.workflow.getHandle(id) : undefined;
          const latest = handle && observationsIn(await handle.fetchHistory()).at(-1);
          if (!handle || !latest) {
            this.log('fault forged-observation: no running lifecycle with an observation');
            break;
          }
          const uid = `forged-${r.int(1, 1e9)}`;
          await handle.signal(observedSignal, { ...latest, uid });
          await handle.signal(observedSignal, latest);
          this.log(`fault forged-observation: ${id} signalled its latest observation under UID ${uid}, then again`);
          break;
        }
        case 'kube-apiserver-restart': {
          this.log('fault kube-apiserver-restart: kube-apiserver SIGKILLed');
          const ms = await s.killApiServer();
          this.log(`kube-apiserver answers again after ${ms} ms`);
          break;
        }
        case 'watch-expiry': {
          // Compacted, then the watches broken: every watcher resumes from a resourceVersion etcd no longer has.
          const revision = await s.compactEtcd();
          this.log(`fault watch-expiry: etcd compacted at revision ${revision}, kube-apiserver SIGKILLed`);
          const ms = await s.killApiServer();
          this.log(`kube-apiserver answers again after ${ms} ms; watches resume with 410 Gone`);
          break;
        }
        case 'peerpod-deleted': {
          // As a user with kubectl could: a live peer pod's PeerPod deleted; its VM must be made again under it.
          const { items } = (await s.custom.listNamespacedCustomObject({ ...PEERPOD_API, namespace: NAMESPACE })) as {
            items: { metadata: { name: string; deletionTimestamp?: string } }[];
          };
          const live = items.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
          const name = live.length ? r.pick(live.sort()) : undefined;
          if (!name) {
            this.log('fault peerpod-deleted: no live PeerPod');
            break;
          }
          await s.custom.deleteNamespacedCustomObject({ ...PEERPOD_API, namespace: NAMESPACE, name });
          this.log(`fault peerpod-deleted: PeerPod ${NAMESPACE}/${name} deleted by hand`);
          break;
        }
        case 'libvirt-cut':
          await s.relay.stop();
          this.log('fault libvirt-cut: libvirt unreachable');
          this.heal = async () => {
            await s.relay.start();
            this.log('libvirt reachable again');
          };
          break;
      }
    });
  }
}
