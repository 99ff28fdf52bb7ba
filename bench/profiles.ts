// `npm run bench -- profiles`: the burst on several Temporal profiles and worker counts (dev server with one worker,
// then the cluster profile with 1, 2 and 3 by default), one after the other, each on a stack of its own started
// afresh, so that no run inherits another's history, visibility rows or warm caches. Each run has its own direct
// baseline, on its own stack, and so its own ratio. One markdown file holds the summary table, then each run's full
// table; it is rewritten after every run, so a failed or interrupted run keeps what the others measured.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { StackInfo, TemporalProfile } from '../deploy/local';
import { countArgument } from '../platform/settings';
import { METRIC } from './objects';
import {
  markdownTable,
  metaLines,
  printReport,
  ratioOf,
  reportMarkdown,
  resultStem,
  rowOf,
  type Report,
} from './report';
import { BURST_TIMINGS } from './scenarios/burst';
import { benchStack, printTable } from './support';
import { runScenario, type Sizes } from './scenarios';

export interface ProfileRun {
  temporal: TemporalProfile;
  workers: number;
}

export const DEFAULT_PROFILES = 'dev,cluster:1,cluster:2,cluster:3';

/** `dev,cluster:2`: a Temporal profile and, after a colon, the number of worker processes (1 when absent). */
export function parseProfiles(list: string): ProfileRun[] {
  return list.split(',').map((item) => {
    const [temporal, workers, ...rest] = item.trim().split(':');
    if ((temporal !== 'dev' && temporal !== 'cluster') || rest.length)
      throw new InvalidArgumentError(`"${item}": each is dev or cluster, optionally :<workers> (dev,cluster:2).`);
    return { temporal, workers: workers === undefined ? 1 : countArgument(workers) };
  });
}

export const profileLabel = ({ temporal, workers }: ProfileRun) =>
  `${temporal === 'dev' ? 'dev server' : 'cluster'}, ${workers} worker${workers === 1 ? '' : 's'}`;

export interface Outcome {
  run: ProfileRun;
  /** From the stack's start to its stop. */
  wallSeconds: number;
  report?: Report;
  error?: string;
}

const fixed = (value: number | undefined, digits = 1) => (value === undefined ? '—' : value.toFixed(digits));

/** Steward / direct (ratio) of one row. */
function versus(report: Report, key: string, digits = 1): string {
  const row = rowOf(report, key);
  if (!row) return '—';
  const ratio = ratioOf(row);
  return `${fixed(row.steward, digits)} / ${fixed(row.baseline, digits)}${ratio === undefined ? '' : ` (${ratio.toFixed(2)}×)`}`;
}

/** One run's row of the summary: every figure the issue asks for, the direct baseline beside Steward's. */
export function summaryRow({ run, report, error }: Outcome): string[] {
  const label = profileLabel(run);
  if (!report) return [label, `failed: ${error ?? 'unknown'}`, ...Array<string>(7).fill('—')];
  const each = report.workers ?? [];
  const perWorker = (values: number[], digits: number) =>
    values.length > 1 ? ` (${values.map((v) => v.toFixed(digits)).join(' + ')})` : '';
  const steward = (key: string) => rowOf(report, key)?.steward;
  const temporal = steward(METRIC.temporalCpu);
  const database = steward(METRIC.databaseCpu);
  const temporalTotal = temporal === undefined ? undefined : temporal + (database ?? 0);
  const directTemporal =
    (rowOf(report, METRIC.temporalCpu)?.baseline ?? 0) + (rowOf(report, METRIC.databaseCpu)?.baseline ?? 0);
  return [
    label,
    versus(report, BURST_TIMINGS.created, 1),
    versus(report, BURST_TIMINGS.deleted, 1),
    `${fixed(steward(BURST_TIMINGS.createRate))} / ${fixed(rowOf(report, BURST_TIMINGS.createRate)?.baseline)}`,
    fixed(steward(METRIC.events)),
    `${fixed(steward(METRIC.workerCpu))}${perWorker(
      each.map((w) => w.cpuSeconds),
      1,
    )}`,
    `${fixed(steward(METRIC.workerPeakRss), 0)}${perWorker(
      each.map((w) => w.peakRssMb),
      0,
    )}`,
    versus(report, METRIC.sideCpu),
    `${fixed(temporalTotal)}${database === undefined ? '' : ` (${fixed(temporal)} + ${fixed(database)})`} / ${directTemporal.toFixed(1)}`,
  ];
}

export const SUMMARY_HEADER = [
  'profile',
  'create → converged s',
  'delete → converged s',
  'create Pods/s',
  'history events per Pod',
  'worker CPU s',
  'worker peak RSS MB',
  'CPU of the side s',
  'Temporal CPU s',
];

function markdown(outcomes: Outcome[], sizes: Sizes, command: string, date: Date, planned: ProfileRun[]): string {
  return [
    `# burst of ${sizes.pods} Pods on ${sizes.nodes} Nodes: Temporal dev server and cluster profile, 1 to ${Math.max(...planned.map((r) => r.workers))} worker processes`,
    '',
    ...metaLines(command, date).map((m) => `- ${m}`),
    `- runs: ${planned.map(profileLabel).join('; ')} (${outcomes.length} done), wall time ${(outcomes.reduce((a, o) => a + o.wallSeconds, 0) / 60).toFixed(1)} min for the stacks' starts, both sides' runs and the stops`,
    '',
    ...markdownTable(SUMMARY_HEADER, outcomes.map(summaryRow)),
    '',
    '- Cells with a slash are Steward / the direct reconciler (ratio), each run against its own baseline on its own stack, started afresh (the direct reconciler uses no Temporal: its column shows what Temporal burns meanwhile on its own).',
    "- Worker CPU and peak RSS: the worker processes together (the peak of their sum, sampled every 250 ms), each worker's in parentheses in start order. CPU of the side: Steward's workers and starter, or the direct reconciler, with the bench's driver in both.",
    '- Temporal CPU: the dev server, or on the cluster profile its 3 server hosts + PostgreSQL (server and backends, from /proc); the UI server not counted.',
    ...outcomes.map(
      (o) =>
        `- ${profileLabel(o.run)}: ${o.wallSeconds.toFixed(0)} s from the stack's start to its stop${o.error ? `; failed: ${o.error}` : ''}.`,
    ),
    '',
    ...outcomes.flatMap((o) =>
      o.report ? [...reportMarkdown({ ...o.report, title: `${profileLabel(o.run)}: ${o.report.title}` }, 2), ''] : [],
    ),
  ].join('\n');
}

type StartStack = (run: ProfileRun) => Promise<{ info: StackInfo; stop: () => Promise<void> }>;

/**
 * The burst at `sizes` on each of `runs`, one after the other, each on a fresh stack (the bench's own unless `stack`
 * starts it); writes `<out>/profiles-<date>.md` after each run and returns its path. A run that fails is recorded as
 * failed and the next one runs; the caller decides the exit code from `failed`.
 */
export async function runProfiles(
  runs: ProfileRun[],
  sizes: Sizes,
  {
    out,
    command,
    stack = (run) => benchStack(`steward-bench-${run.temporal}`, { temporal: run.temporal }),
  }: { out: string; command: string; stack?: StartStack },
): Promise<{ file: string; failed: number; outcomes: Outcome[] }> {
  const date = new Date();
  const file = `${resultStem(out, 'profiles', date)}.md`;
  mkdirSync(dirname(file), { recursive: true });
  const outcomes: Outcome[] = [];
  for (const run of runs) {
    const started = Date.now();
    let outcome: Omit<Outcome, 'wallSeconds'>;
    try {
      const { info, stop } = await stack(run);
      try {
        const report = await runScenario(info, 'burst', { ...sizes, workers: run.workers });
        printReport(report);
        outcome = { run, report };
      } finally {
        await stop();
      }
    } catch (error) {
      console.error(`${profileLabel(run)}:`, error);
      outcome = { run, error: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
    }
    outcomes.push({ ...outcome, wallSeconds: (Date.now() - started) / 1000 });
    writeFileSync(file, markdown(outcomes, sizes, command, date, runs));
  }
  printTable(
    `burst of ${sizes.pods} Pods on ${sizes.nodes} Nodes, by profile (Steward / direct)`,
    SUMMARY_HEADER,
    outcomes.map(summaryRow),
  );
  return { file, failed: outcomes.filter((o) => o.error).length, outcomes };
}
