// `npm run bench -- churn --find-rate <lo>:<hi>`: the highest churn rate Steward sustains, found by bisection, not
// guessed. Each probe is the churn scenario at one rate, Steward alone (no baseline), in a fresh namespace on one
// harness; a probe is sustained when every change landed within a few seconds of the last write and the p99 latency
// is within Kubernetes' own pod start-up SLO (SUSTAINED). The lower bound is probed first, then the upper one, then
// halfway between the highest rate sustained and the lowest not, until they are within a tenth of each other. The
// markdown file is rewritten after every probe, so an interrupted search keeps what it measured.
import { mkdirSync, writeFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import type { StackInfo } from '../deploy/local';
import { withStewardPhases, type ObjectsScenarioOptions } from './objects';
import { markdownTable, metaLines, resultStem } from './report';
import { churn, type ChurnOutcome } from './scenarios/churn';

/** What a rate must meet to count as sustained. */
export const SUSTAINED = {
  /** The last change landed within this many seconds of the last write (no backlog left growing). */
  drainSeconds: 10,
  /** Kubernetes' pod start-up SLO at that churn. */
  p99Seconds: 5,
  /** The driver wrote at least this share of the rate (else the stack, not Steward, set the pace). */
  achievedShare: 0.95,
} as const;

/**
 * How long a probe waits for its backlog after the last write: enough to tell a probe that drains within the limit
 * from one that does not, without waiting out a backlog the verdict already condemns (its phase's clean-up drains it).
 */
export const PROBE_BACKLOG_WAIT_MS = 60_000;

export interface RateRange {
  lo: number;
  hi: number;
}

/** `<lo>:<hi>`, whole changes a second, lo below hi. */
export function rateRangeArgument(value: string): RateRange {
  const match = /^([1-9]\d*):([1-9]\d*)$/.exec(value);
  if (!match) throw new InvalidArgumentError('must be <lo>:<hi>, whole changes a second, e.g. 10:60.');
  const [lo, hi] = [Number(match[1]), Number(match[2])];
  if (lo >= hi) throw new InvalidArgumentError(`the lower rate (${lo}) must be below the upper one (${hi}).`);
  return { lo, hi };
}

export interface Verdict {
  sustained: boolean;
  /** Why not, each limit missed; empty when sustained. */
  missed: string[];
}

export function verdictOf(o: ChurnOutcome): Verdict {
  const missed = [
    ...(o.backlog > 0
      ? [`${o.backlog} changes not landed ${PROBE_BACKLOG_WAIT_MS / 1000} s after the last write`]
      : []),
    ...(o.backlog === 0 && o.drain > SUSTAINED.drainSeconds
      ? [`the last change landed ${o.drain.toFixed(1)} s after the last write (limit ${SUSTAINED.drainSeconds} s)`]
      : []),
    ...(o.p99 > SUSTAINED.p99Seconds ? [`p99 ${o.p99.toFixed(2)} s (limit ${SUSTAINED.p99Seconds} s)`] : []),
    ...(o.achieved < SUSTAINED.achievedShare * o.rate
      ? [`the driver wrote ${o.achieved.toFixed(1)} changes/s of ${o.rate}`]
      : []),
  ];
  return { sustained: missed.length === 0, missed };
}

type Probed = { rate: number; sustained: boolean };

/** The highest rate sustained and the lowest not, of the probes so far. */
export function bracket(probes: Probed[]): { sustained?: number; failed?: number } {
  const ok = probes.filter((p) => p.sustained).map((p) => p.rate);
  const not = probes.filter((p) => !p.sustained).map((p) => p.rate);
  return {
    ...(ok.length ? { sustained: Math.max(...ok) } : {}),
    ...(not.length ? { failed: Math.min(...not) } : {}),
  };
}

/**
 * The next rate to probe, or undefined when the search is over: the lower bound first (if it fails there is nothing
 * below to find), then the upper one (if it holds, the answer is "at least that"), then halfway between the highest
 * rate sustained and the lowest not, until they are within a tenth of the former (at least 1 change/s) or out of
 * order (a noisy machine: the report says so).
 */
export function nextRate({ lo, hi }: RateRange, probes: Probed[]): number | undefined {
  const tried = (rate: number) => probes.some((p) => p.rate === rate);
  if (!tried(lo)) return lo;
  const { sustained, failed } = bracket(probes);
  if (sustained === undefined) return undefined;
  if (failed === undefined) return tried(hi) ? undefined : hi;
  if (failed - sustained <= Math.max(1, sustained / 10)) return undefined;
  return Math.floor((sustained + failed) / 2);
}

interface Probe extends ChurnOutcome, Verdict {
  workerMsPerChange?: number;
  workerPeakRssMb?: number;
}

export interface RateSearch {
  range: RateRange;
  pods: number;
  nodes: number;
  duration: number;
}

/** Runs the search on `info`'s stack; writes `<out>/churn-rate-<date>.md` after each probe and returns its path. */
export async function findChurnRate(
  info: StackInfo,
  search: RateSearch,
  options: ObjectsScenarioOptions,
  { out, command }: { out: string; command: string },
): Promise<{ file: string; probes: Probe[] }> {
  const date = new Date();
  mkdirSync(out, { recursive: true });
  const file = `${resultStem(out, 'churn-rate', date)}.md`;
  const probes: Probe[] = [];
  await withStewardPhases(info, { name: 'churn', nodes: search.nodes }, options, async (phase) => {
    for (let rate = nextRate(search.range, probes); rate !== undefined; rate = nextRate(search.range, probes)) {
      const { pods, nodes, duration } = search;
      const { result, costs } = await phase(
        churn({ pods, nodes, rate, duration, backlogWaitMs: PROBE_BACKLOG_WAIT_MS }),
      );
      const worker = costs.usage.worker;
      probes.push({
        ...result.outcome,
        ...verdictOf(result.outcome),
        ...(worker && {
          workerMsPerChange: (worker.cpuSeconds * 1000) / (rate * duration),
          workerPeakRssMb: worker.peakRssMb,
        }),
      });
      writeFileSync(file, markdown(search, probes, command, date));
      const last = probes.at(-1)!;
      console.log(
        `  ${rate} changes/s: ${last.sustained ? 'sustained' : `not sustained (${last.missed.join('; ')})`}, p99 ${last.p99.toFixed(2)} s`,
      );
    }
  });
  return { file, probes };
}

const num = (value: number | undefined, digits = 2) => (value === undefined ? '—' : value.toFixed(digits));

/** The search's finding in a sentence. */
export function finding(range: RateRange, probes: Probed[]): string {
  const { sustained, failed } = bracket(probes);
  if (sustained === undefined) return `No rate sustained: the lowest probed, ${range.lo} changes/s, was not.`;
  if (failed === undefined) return `At least ${sustained} changes/s: the highest probed was sustained.`;
  if (failed < sustained)
    return `Out of order: ${sustained} changes/s was sustained but ${failed} was not (a noisy machine); run again.`;
  return `The highest rate sustained: ${sustained} changes/s (${failed} was not).`;
}

function markdown(search: RateSearch, probes: Probe[], command: string, date: Date): string {
  const { range, pods, nodes, duration } = search;
  return [
    `# churn: the highest rate Steward sustains, by bisection over ${range.lo}–${range.hi} changes/s (${duration} s a probe, from ${pods} Pods on ${nodes} Nodes)`,
    '',
    ...metaLines(command, date).map((m) => `- ${m}`),
    '',
    `**${finding(range, probes)}**`,
    '',
    ...markdownTable(
      [
        'rate (changes/s)',
        'written/s',
        'p50 (s)',
        'p95 (s)',
        'p99 (s)',
        'max (s)',
        'last write → landed (s)',
        'not landed',
        'worker CPU ms a change',
        'worker peak RSS MB',
        'sustained',
      ],
      probes.map((p) => [
        String(p.rate),
        num(p.achieved, 1),
        num(p.p50),
        num(p.p95),
        num(p.p99),
        num(p.max),
        num(p.drain, 1),
        String(p.backlog),
        num(p.workerMsPerChange, 1),
        num(p.workerPeakRssMb, 0),
        p.sustained ? 'yes' : `no: ${p.missed.join('; ')}`,
      ]),
    ),
    '',
    `- Probes in the order run. Each is the churn scenario (\`npm run bench -- churn\`) at that rate, Steward alone, in a namespace of its own with Nodes of its own, on one set of workers and starter.`,
    `- Sustained: every change landed within ${SUSTAINED.drainSeconds} s of the last write, the p99 latency within ${SUSTAINED.p99Seconds} s (Kubernetes' pod start-up SLO), and the driver wrote at least ${SUSTAINED.achievedShare * 100}% of the rate. A backlog is waited for ${PROBE_BACKLOG_WAIT_MS / 1000} s after the last write, then drained before the next probe.`,
    `- Bisection: the lower bound, the upper one, then halfway between the highest rate sustained and the lowest not, until they are within a tenth of each other.`,
    '',
  ].join('\n');
}
