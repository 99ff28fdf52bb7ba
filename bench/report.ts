// A scenario's result: one table with Steward and the baseline side by side and their ratio, printed, and written
// as markdown and as a hand-drawn SVG chart to bench/results/<scenario>-<date>.{md,svg} with the machine, the date
// and the command.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { printTable } from './support';

export interface Row {
  metric: string;
  steward?: number;
  baseline?: number;
  /** Decimals shown; 1 by default. */
  digits?: number;
  /** What a summary across runs finds the row by (its metric when absent). */
  key?: string;
}

export interface Report {
  scenario: string;
  title: string;
  /** The baseline's column: `direct` (the direct reconciler) or `virsh`. */
  baseline: string;
  /** Each side converged (verified in the backend); a scenario that did not throws instead. */
  converged: { steward: boolean; baseline: boolean };
  rows: Row[];
  notes: string[];
  /** Each worker process's CPU and peak RSS, in start order, when the workers ran in processes of their own. */
  workers?: { cpuSeconds: number; peakRssMb: number }[];
  /** Markdown after the notes (e.g. what held the workers' memory at the peak). */
  sections?: string[];
}

/** The row whose key (else metric) is `key`. */
export const rowOf = (report: Report, key: string) => report.rows.find((row) => (row.key ?? row.metric) === key);

const format = (value: number | undefined, digits = 1) => (value === undefined ? '—' : value.toFixed(digits));
export const ratioOf = ({ steward, baseline }: Row) =>
  steward !== undefined && baseline !== undefined && baseline > 0 ? steward / baseline : undefined;

export function reportTable(report: Report): { header: string[]; rows: string[][] } {
  return {
    header: ['metric', 'Steward', report.baseline, 'ratio'],
    rows: report.rows.map((row) => [
      row.metric,
      format(row.steward, row.digits),
      format(row.baseline, row.digits),
      format(ratioOf(row), 2),
    ]),
  };
}

export function printReport(report: Report): void {
  const { header, rows } = reportTable(report);
  printTable(report.title, header, rows);
  for (const note of report.notes) console.log(`  ${note}`);
  for (const line of report.sections ?? []) console.log(line);
}

export const machine = () => {
  const cores = cpus();
  return `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the end`;
};

/** A markdown table: the first column left-aligned, the others right-aligned. */
export function markdownTable(header: string[], rows: string[][]): string[] {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)];
}

/** A report's table and notes in markdown, below a heading of `level`. */
export function reportMarkdown(report: Report, level = 1): string[] {
  const { header, rows } = reportTable(report);
  return [
    `${'#'.repeat(level)} ${report.title}`,
    '',
    ...markdownTable(header, rows),
    '',
    ...report.notes.map((note) => `- ${note}`),
    ...(report.sections ? ['', ...report.sections] : []),
  ];
}

export const metaLines = (command: string, date: Date) => [
  `machine: ${machine()}`,
  `date: ${date.toISOString()}`,
  `command: ${command}`,
];

function markdown(report: Report, meta: string[]): string {
  const [heading, ...rest] = reportMarkdown(report);
  return [heading, '', ...meta.map((m) => `- ${m}`), ...rest, ''].join('\n');
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** One pair of bars per metric, each pair scaled to its larger value, the values written at the bars' ends. */
function svg(report: Report, meta: string[]): string {
  const rows = report.rows.filter((row) => (row.steward ?? 0) > 0 || (row.baseline ?? 0) > 0);
  const [labelWidth, barWidth, rowHeight, top] = [470, 400, 40, 70 + meta.length * 16];
  const width = labelWidth + barWidth + 170;
  const height = top + rows.length * rowHeight + 40;
  const text = (x: number, y: number, content: string, attrs = '') =>
    `<text x="${x}" y="${y}" ${attrs}>${escapeXml(content)}</text>`;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    text(10, 22, report.title, 'font-size="15" font-weight="bold"'),
    ...meta.map((m, i) => text(10, 42 + i * 16, m, 'fill="#555"')),
    `<rect x="${labelWidth}" y="${top - 22}" width="12" height="10" fill="#1f77b4"/>`,
    text(labelWidth + 16, top - 13, 'Steward'),
    `<rect x="${labelWidth + 90}" y="${top - 22}" width="12" height="10" fill="#ff7f0e"/>`,
    text(labelWidth + 106, top - 13, report.baseline),
  ];
  rows.forEach((row, i) => {
    const y = top + i * rowHeight;
    const scale = Math.max(row.steward ?? 0, row.baseline ?? 0);
    const ratio = ratioOf(row);
    parts.push(text(labelWidth - 8, y + 18, row.metric, 'text-anchor="end"'));
    [
      [row.steward, '#1f77b4', 0],
      [row.baseline, '#ff7f0e', 16],
    ].forEach(([value, colour, dy]) => {
      if (value === undefined) return;
      const w = scale > 0 ? (Number(value) / scale) * barWidth : 0;
      parts.push(
        `<rect x="${labelWidth}" y="${y + Number(dy)}" width="${w.toFixed(1)}" height="14" fill="${String(colour)}"/>`,
      );
      parts.push(text(Math.round(labelWidth + w + 4), y + Number(dy) + 11, format(Number(value), row.digits)));
    });
    if (ratio !== undefined)
      parts.push(text(labelWidth + barWidth + 110, y + 18, `× ${format(ratio, 2)}`, 'fill="#333"'));
  });
  parts.push('</svg>', '');
  return parts.join('\n');
}

export const resultStem = (dir: string, name: string, date: Date) =>
  join(dir, `${name}-${date.toISOString().slice(0, 19).replace(/:/g, '')}`);

/** Writes `<dir>/<scenario>-<date>.{md,svg}`; returns the two paths. */
export function writeReport(report: Report, dir: string, command: string, date = new Date()): string[] {
  const meta = metaLines(command, date);
  mkdirSync(dir, { recursive: true });
  const stem = resultStem(dir, report.scenario, date);
  writeFileSync(`${stem}.md`, markdown(report, meta));
  writeFileSync(`${stem}.svg`, svg(report, meta));
  return [`${stem}.md`, `${stem}.svg`];
}
