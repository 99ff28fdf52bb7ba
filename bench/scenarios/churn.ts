// Steady churn: from `pods` live Pods (and the Service `web` with its Endpoints), `rate` changes a second for
// `duration` seconds, mixed: 40% a Pod created, 30% one deleted, 15% one's MAC annotation set or removed (a
// Translation more or less), 15% the Endpoints rewritten to other addresses. Each change's latency runs from its
// Kubernetes write (the call's return) until the emulator holds what it added and no longer what it removed: polls
// of its state (every 100 ms or more, POLL_BACKOFF) tell when a change has landed, and its write journal when: the
// arrival of the last write it needed, to the millisecond (journal-latency.ts). An object with a change in flight is
// not changed again until it landed. The sequence comes from a seeded generator, so both sides get the same one.
import * as k8s from '@kubernetes/client-node';
import { deletePod } from '../../test/support/objects-harness';
import { prng } from '../../deploy/local/midonet/faults';
import { sleep } from '../../deploy/local/process';
import { emulatorState, projected, type ObjectsScenario, type PhaseResult } from '../objects';
import { indexJournal, landedAt, type LandingChange } from '../journal-latency';
import { inParallel } from '../support';
import { percentile, quantilesBy } from '../stats';
import { createWebService, podAt, writeEndpoints, writePod } from './burst';

const POLL_MS = 100;
/**
 * The emulator's whole state is read at each poll: with thousands of resources a read takes tens of milliseconds of
 * the emulator's and the bench's CPU, which the side under test then lacks. So a poll waits at least this many times
 * as long as the last read took: the reads use at most a fifth of the time.
 */
const POLL_BACKOFF = 4;
/** How long after the last write a backlog is waited for before it is reported as such, unless told. */
const BACKLOG_WAIT_MS = 600_000;

const macOf = (ip: string) =>
  `0a:58:${ip
    .split('.')
    .map((o) => Number(o).toString(16).padStart(2, '0'))
    .join(':')}`;

/** The kinds of change, as the report names them. */
type ChangeKind = 'a Pod created' | 'a Pod deleted' | 'its MAC annotation set or removed' | 'the Endpoints rewritten';

interface Pending extends LandingChange {
  kind: ChangeKind;
  present: Set<string>;
  absent: Set<string>;
}

/** The report's windows of write time, each with its latency p99: when in the run the tail comes from. */
const WINDOW_S = 30;

/** What a churn measured, for a verdict on it (the rate search's). Times in seconds. */
export interface ChurnOutcome {
  rate: number;
  /** Changes written a second, as the driver managed them. */
  achieved: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** From the last write until every change had landed (or the backlog was given up on). */
  drain: number;
  /** Changes not landed when the wait after the last write ended. */
  backlog: number;
}

export function churn({
  pods,
  nodes,
  rate,
  duration,
  backlogWaitMs = BACKLOG_WAIT_MS,
}: {
  pods: number;
  nodes: number;
  rate: number;
  duration: number;
  /** How long a backlog is waited for after the last write: a probe that only needs to know it fell behind waits less. */
  backlogWaitMs?: number;
}): ObjectsScenario<PhaseResult & { outcome: ChurnOutcome }> {
  return {
    name: 'churn',
    title: `churn: ${rate} changes/s for ${duration} s over ${pods} Pods on ${nodes} Nodes (create, delete, annotate Pods; rewrite Endpoints): Kubernetes write → MidoNet state`,
    nodes,
    async run(ctx) {
      // Seeded (the emulator's mulberry32): both sides get the same sequence.
      const random = prng(12);
      const live: string[] = [];
      let next = 0;
      // Each Pod's IP as written: a projection keeps it only with the MAC annotation (its ARP entry).
      const ips = new Map<string, string>();
      const newPod = () => {
        const pod = podAt(ctx, `c-${String(next).padStart(5, '0')}`, next++);
        ips.set(pod.metadata.name, pod.status.podIP!);
        return pod;
      };
      const ipOf = (name: string) => ips.get(name)!;
      await createWebService(ctx);
      await inParallel(Array.from({ length: pods }, newPod), 10, async (pod) => {
        await writePod(ctx, pod);
        live.push(pod.metadata.name);
      });
      await writeEndpoints(ctx, live.slice(0, 4).map(ipOf));
      await ctx.converged('the initial Pods');

      const busy = new Set<string>();
      const pending = new Map<string, Pending>();
      /** Changes seen landed, with the poll that saw it. */
      const landed: (Pending & { polledAt: number })[] = [];
      const pick = () => {
        const free = live.filter((name) => !busy.has(name));
        return free.length ? free[Math.floor(random() * free.length)] : undefined;
      };
      /** One change: the write, then its expectation queued for the checker. */
      const change = async (
        kind: ChangeKind,
        target: string,
        write: () => Promise<{ added: Set<string>; removed: Set<string> }>,
      ) => {
        busy.add(target);
        const { added, removed } = await write();
        // Each change is waited for on its own: a state of its own in the ledger.
        ctx.model.checkpoint();
        if (added.size || removed.size) pending.set(target, { kind, at: Date.now(), present: added, absent: removed });
        else busy.delete(target);
      };
      const changeOf = (): Promise<void> => {
        const r = random();
        const target = r < 0.4 ? undefined : r < 0.85 ? pick() : busy.has('web') ? undefined : 'web';
        if (target === undefined) {
          const pod = newPod();
          return change('a Pod created', pod.metadata.name, async () => {
            const diff = await writePod(ctx, pod);
            live.push(pod.metadata.name);
            return diff;
          });
        }
        if (target === 'web')
          return change('the Endpoints rewritten', target, () =>
            writeEndpoints(
              ctx,
              Array.from({ length: 4 }, () => pick()).flatMap((name) => (name ? [ipOf(name)] : [])),
            ),
          );
        if (r < 0.7) {
          live.splice(live.indexOf(target), 1);
          return change('a Pod deleted', target, async () => {
            await deletePod(ctx, ctx.namespace, target);
            return ctx.model.write(ctx.model.get('Pod', ctx.namespace, target), undefined);
          });
        }
        return change('its MAC annotation set or removed', target, async () => {
          const before = ctx.model.get('Pod', ctx.namespace, target);
          const mac =
            before?.kind === 'Pod' && before.metadata.annotations['midonet.org/mac-address']
              ? null
              : macOf(ipOf(target));
          const patched = await ctx.core.patchNamespacedPod(
            {
              name: target,
              namespace: ctx.namespace,
              body: { metadata: { annotations: { 'midonet.org/mac-address': mac } } },
            },
            k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
          );
          return ctx.model.write(before, projected('Pod', patched));
        });
      };

      const total = rate * duration;
      const result = await ctx.measured(async () => {
        const start = Date.now();
        let writtenAt: number | undefined;
        let slowestPollMs = 0;
        const checker = (async () => {
          while (writtenAt === undefined || pending.size) {
            const reading = Date.now();
            const state = await emulatorState(ctx.admin);
            const now = Date.now();
            for (const [key, p] of pending) {
              if (![...p.present].every((k) => state.has(k)) || [...p.absent].some((k) => state.has(k))) continue;
              landed.push({ ...p, polledAt: now });
              pending.delete(key);
              busy.delete(key);
            }
            // A side that cannot keep up (the rate is past its throughput) is reported with its backlog, not waited for.
            if (writtenAt !== undefined && now - writtenAt > backlogWaitMs) return now;
            const readMs = Date.now() - reading;
            slowestPollMs = Math.max(slowestPollMs, readMs);
            await sleep(Math.max(POLL_MS, POLL_BACKOFF * readMs));
          }
          return Date.now();
        })();
        const writes: Promise<void>[] = [];
        for (let i = 0; i < total; i++) {
          await sleep(Math.max(0, start + (i * 1000) / rate - Date.now()));
          writes.push(changeOf());
        }
        await Promise.all(writes);
        const written = (writtenAt = Date.now());
        const checked = await checker;
        // Each landed change when its last write arrived; the poll that saw it when the journal cannot say.
        const index = indexJournal(await ctx.admin.journal());
        const fromJournal = landed.map((p) => landedAt(index, p));
        const changes = landed.map((p, i) => ({ ...p, ms: (fromJournal[i] ?? p.polledAt) - p.at }));
        // What never landed counts with the time it had waited: the percentiles are then lower bounds.
        for (const p of pending.values()) changes.push({ ...p, polledAt: checked, ms: checked - p.at });
        if (pending.size === 0) await ctx.converged('after the churn');
        const polled = fromJournal.filter((t) => t === undefined).length;
        return { start, written, end: Date.now(), backlog: pending.size, slowestPollMs, polled, changes };
      });
      const seconds = result.changes.map((c) => ({ kind: c.kind, at: c.at, value: c.ms / 1000 }));
      const sorted = seconds.map((c) => c.value).sort((a, b) => a - b);
      const byKind = quantilesBy(
        seconds.map((c) => ({ group: c.kind, value: c.value })),
        [0.5, 0.99],
      );
      const window = (at: number) => Math.floor((at - result.start) / 1000 / WINDOW_S) * WINDOW_S;
      const byWindow = quantilesBy(
        [...seconds]
          .sort((a, b) => a.at - b.at)
          .map((c) => ({ group: `${window(c.at)}–${window(c.at) + WINDOW_S} s`, value: c.value })),
        [0.99],
      );
      const outcome: ChurnOutcome = {
        rate,
        achieved: total / ((result.written - result.start) / 1000),
        p50: percentile(sorted, 0.5),
        p95: percentile(sorted, 0.95),
        p99: percentile(sorted, 0.99),
        max: sorted.at(-1) ?? 0,
        drain: (result.end - result.written) / 1000,
        backlog: result.backlog,
      };
      const waited = `${backlogWaitMs / 1000} s`;
      return {
        outcome,
        timings: [
          ['changes that reached MidoNet', sorted.length - result.backlog, 0],
          [`changes not in MidoNet ${waited} after the last write`, result.backlog, 0],
          ['writes (changes/s achieved)', outcome.achieved, 1],
          ['latency p50 (s)', outcome.p50],
          ['latency p95 (s)', outcome.p95],
          ['latency p99 (s)', outcome.p99],
          ['latency max (s)', outcome.max],
          ['last write → all converged (s)', outcome.drain],
        ],
        per: { count: total, unit: 'change' },
        converged: result.backlog === 0,
        notes: [
          `latency p50 / p99 by kind of change: ${byKind.map((k) => `${k.group} ${k.quantiles.map((q) => q.toFixed(2)).join(' / ')} s (${k.count})`).join(', ')}.`,
          `latency p99 by when the change was written, in windows of ${WINDOW_S} s from the first write: ${byWindow.map((w) => `${w.group} ${w.quantiles[0]!.toFixed(2)}`).join(', ')}.`,
          `latency: from the Kubernetes write's return to the arrival of the last MidoNet write the change needed, from the emulator's write journal (${result.polled} of ${sorted.length - result.backlog} landed changes the journal could not place: the poll that saw them landed, every ${POLL_MS} ms or ${POLL_BACKOFF} times as long as the last read took, the slowest ${result.slowestPollMs} ms); ${total - sorted.length} changes made nothing to wait for.`,
          ...(result.backlog
            ? [
                `saturated: ${result.backlog} changes had not landed ${waited} after the last write; they count with the time they waited, so the latencies are lower bounds.`,
              ]
            : []),
        ],
      };
    },
  };
}
