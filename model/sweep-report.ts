/**
 * The sweeper's vocabulary and its report, as plain JSON shared by the workflow (current details), the CLI (the
 * table it prints) and the tests. Pure: no Temporal calls here.
 */

export const SWEEP_BACKENDS = ['cloud', 'midonet'] as const;
export type SweepBackend = (typeof SWEEP_BACKENDS)[number];

/**
 * What the sweep does with cloud-api-adaptor's VMs that nothing records (its name shape, no Steward marker): `off`,
 * `report` (listed, never deleted), or `delete`. They are not Steward's, so deleting them is the operator's choice.
 */
export const CAA_LEAK_MODES = ['off', 'report', 'delete'] as const;
export type CaaLeakMode = (typeof CAA_LEAK_MODES)[number];

/** A row of the report: a backend, or cloud-api-adaptor's VMs in the cloud. */
export type ReportRow = SweepBackend | 'cloud-api-adaptor';

/** One backend resource the sweep looked at: a VM, or a MidoNet Router, Bridge or Chain. */
export interface SweptResource {
  /** `VM`, `Router`, `Bridge` or `Chain`. */
  kind: string;
  id: string;
  name?: string;
  /** VMs: the pod they were made for, as their tags say (`<namespace>/<name>` and UID). */
  pod?: string;
  podUid?: string;
}

/**
 * - `swept`: orphans deleted (or none found); `dryRun`: orphans only reported (a dry run, or cloud-api-adaptor's VMs
 *   when their deletion is not switched on);
 * - `failed`: the backend could not be swept (the message says why); nothing of it was deleted after the failure.
 */
export type BackendOutcome = 'swept' | 'dryRun' | 'failed';

export interface BackendCounts {
  /** Listed in the backend: VMs with Steward's marker, or the tenant's routers, bridges and chains. */
  found: number;
  /** Not recorded at the first look. */
  candidates: number;
  /** Still not recorded after the grace period. */
  orphans: number;
  /** Orphans removed by this sweep (those already gone included). */
  deleted: number;
  /** Candidates that a record claimed during the grace period, plus those never swept (the cluster router). */
  kept: number;
}

export interface BackendReport {
  backend: ReportRow;
  /** What was swept, e.g. `libvirt VMs with Steward's marker` or `MidoNet tenant midonetkube`. */
  scope: string;
  outcome: BackendOutcome;
  counts: BackendCounts;
  orphans: SweptResource[];
  /** Why it failed, or what it noticed (e.g. the cluster router is never swept). */
  message?: string;
}

export interface SweepReport {
  dryRun: boolean;
  graceMs: number;
  backends: BackendReport[];
}

export type SweepPhase = 'listing' | 'waiting' | 'checking' | 'deleting' | 'done';

/** The `progress` query: what the sweep does now, for the CLI's progress bar. */
export interface SweepProgress {
  phase: SweepPhase;
  /** Units of this phase: backends while listing and checking, orphans while deleting, seconds while waiting. */
  total: number;
  done: number;
  /** While waiting: when the grace period ends (ISO time). */
  waitUntil?: string;
}

export const emptyCounts = (): BackendCounts => ({ found: 0, candidates: 0, orphans: 0, deleted: 0, kept: 0 });

export const COUNT_COLUMNS = [
  'found',
  'candidates',
  'orphans',
  'deleted',
  'kept',
] as const satisfies readonly (keyof BackendCounts)[];

/** One row per backend: name, the counts, the outcome; the CLI and the current details both print these. */
export function reportRows(report: SweepReport): string[][] {
  return report.backends.map((b) => [
    `${b.backend} (${b.scope})`,
    ...COUNT_COLUMNS.map((c) => String(b.counts[c])),
    b.outcome + (b.message ? `: ${b.message}` : ''),
  ]);
}

export const REPORT_HEADER = ['backend', ...COUNT_COLUMNS, 'outcome'];

const LISTED_ORPHANS = 20;

const describeResource = (r: SweptResource) =>
  `${r.kind} \`${r.id}\`${r.name ? ` ${r.name}` : ''}${r.pod ? ` (pod ${r.pod})` : ''}`;

/** The workflow's current details: the phase, the table, and the first orphans of each backend. */
export function renderDetails(report: SweepReport, progress: SweepProgress): string {
  const escape = (cell: string) => cell.replaceAll('|', '\\|');
  const phase =
    progress.phase === 'waiting'
      ? `waiting for the grace period to end (${progress.waitUntil})`
      : progress.phase === 'done'
        ? 'done'
        : `${progress.phase} (${progress.done}/${progress.total})`;
  const lines = [
    `**Orphan sweep**${report.dryRun ? ' (dry run: nothing is deleted)' : ''}, grace period ${report.graceMs / 1000}s: ${phase}`,
    '',
    `| ${REPORT_HEADER.join(' | ')} |`,
    `|${REPORT_HEADER.map(() => '---').join('|')}|`,
    ...reportRows(report).map((row) => `| ${row.map(escape).join(' | ')} |`),
  ];
  for (const b of report.backends.filter((b) => b.orphans.length > 0)) {
    lines.push(
      '',
      `${report.dryRun ? 'Would delete' : 'Orphans'} (${b.backend}):`,
      ...b.orphans.slice(0, LISTED_ORPHANS).map((r) => `- ${describeResource(r)}`),
    );
    if (b.orphans.length > LISTED_ORPHANS)
      lines.push(`- … and ${b.orphans.length - LISTED_ORPHANS} more (in the result)`);
  }
  return lines.join('\n');
}
