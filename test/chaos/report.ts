// The table per seed and the violations, grouped by object.
import type { RunResult } from './run';

export function formatReport(results: RunResult[]): string {
  const rows = results.map((r) => ({
    seed: String(r.seed),
    profile: r.temporal,
    ops: String(r.ops.length),
    failed: String(
      [...r.outcomes.values()].filter((o) => o.startsWith('failed') || o.includes('not created again')).length,
    ),
    faults:
      Object.entries(r.faults)
        .map(([k, n]) => `${k}×${n}`)
        .join(' ') || '-',
    violations: String(r.violations.length),
    quiescence: r.quiescenceMs === undefined ? 'never' : `${(r.quiescenceMs / 1000).toFixed(1)} s`,
    duration: `${(r.durationMs / 1000).toFixed(0)} s`,
    result: r.violations.length ? 'FAIL' : 'ok',
  }));
  const header = {
    seed: 'seed',
    profile: 'Temporal',
    ops: 'ops',
    failed: 'ops refused',
    faults: 'faults injected',
    violations: 'violations',
    quiescence: 'quiescence',
    duration: 'duration',
    result: 'result',
  };
  const keys = Object.keys(header) as (keyof typeof header)[];
  const width = Object.fromEntries(
    keys.map((k) => [k, Math.max(header[k].length, ...rows.map((r) => r[k].length))]),
  ) as Record<keyof typeof header, number>;
  const line = (row: typeof header) => keys.map((k) => row[k].padEnd(width[k])).join(' | ');
  const out = [line(header), keys.map((k) => '-'.repeat(width[k])).join('-|-'), ...rows.map(line)];
  for (const r of results.filter((r) => r.violations.length)) {
    out.push('', `seed ${r.seed}: ${r.violations.length} violations`);
    const byObject = new Map<string, string[]>();
    for (const v of r.violations)
      byObject.set(v.object, [...(byObject.get(v.object) ?? []), `[${v.invariant}] ${v.detail}`]);
    for (const [object, details] of byObject) {
      out.push(`  ${object}`);
      for (const d of details) out.push(`    ${d}`);
    }
  }
  return out.join('\n');
}
