// The benchmark's smoke (`npm run bench:smoke`) in-process, on a stack of its own (its starter watches every
// namespace and the emulator is reset): every scenario at its smoke size, so the benchmark code cannot rot; then,
// once that stack is stopped, the profiles run once, on the cluster profile with two worker processes (about a
// minute more: a cluster's start and a 20-Pod burst). Asserts only that both sides converged and that the tables
// have their columns; no timings (the machine is shared).
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateStack } from '../deploy/local/jest/stack-info';
import type { Stack } from '../deploy/local';
import { METRIC } from './objects';
import { runProfiles, SUMMARY_HEADER } from './profiles';
import { findChurnRate } from './rate-search';
import { reportTable } from './report';
import { DEFAULT_SIZES, runScenario, SCENARIOS, SMOKE_SIZES, type Sizes } from './scenarios';

describe('on the dev server', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startPrivateStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test.each(SCENARIOS)(
    '%s at its smoke size: Steward and the baseline both converge, side by side in one table',
    async (name) => {
      const report = await runScenario(stack.info, name, SMOKE_SIZES[name]);
      expect(report.converged).toEqual({ steward: true, baseline: true });
      const { header, rows } = reportTable(report);
      expect(header).toEqual(['metric', 'Steward', report.baseline, 'ratio']);
      // The first row is the scenario's time to converge: a value on both sides.
      expect(rows[0]?.[1]).not.toBe('—');
      expect(rows[0]?.[2]).not.toBe('—');
      if (name === 'peerpods') {
        // As a cluster beside cloud-api-adaptor runs Steward.
        expect(report.title).toContain('STEWARD_BACKENDS=peerpods)');
        // Each peer pod's create read from its workflow's history: every stage measured, virsh's one VM too.
        const stages = rows.filter((r) => r[0]?.startsWith('create stage: '));
        expect(stages).toHaveLength(3);
        for (const stage of stages) expect(Number(stage[1])).toBeGreaterThan(0);
        expect(Number(stages[2]?.[2])).toBeGreaterThan(0);
        expect(report.notes.join('\n')).toMatch(/\((\d+) of \1 with a completed VM activity\)/);
      }
      if (name !== 'burst') return;
      // The create window's CPU by process: measured on both sides, the worker's on Steward's only.
      const create = new Map(rows.filter((r) => r[0]?.startsWith('create → converged: ')).map((r) => [r[0], r]));
      const row = (metric: string) => create.get(`create → converged: ${metric}`) ?? [];
      for (const metric of [
        'CPU of the side s',
        'Temporal server CPU s',
        'API server and etcd CPU s',
        'MidoNet emulator CPU s',
      ]) {
        expect(Number(row(metric)[1])).toBeGreaterThan(0);
        expect(Number(row(metric)[2])).toBeGreaterThanOrEqual(0);
      }
      expect(Number(row('worker process CPU s')[1])).toBeGreaterThan(0);
      expect(row('worker process CPU s')[2]).toBe('—');
      expect([...create.keys()].some((metric) => /share of the \d+ cores, busy %$/.test(metric ?? ''))).toBe(true);
    },
    900_000,
  );

  test("churn's rate search: probes the lower bound first, Steward alone, each probe in the table as it ends", async () => {
    const { file, probes } = await findChurnRate(
      stack.info,
      { range: { lo: 2, hi: 4 }, pods: SMOKE_SIZES.churn.pods!, nodes: SMOKE_SIZES.churn.nodes!, duration: 3 },
      {},
      { out: join(tmpdir(), 'steward-bench-smoke'), command: 'bench/bench.own-stack.test.ts' },
    );
    expect(probes[0]?.rate).toBe(2);
    // Every probe measured its changes and the worker's CPU (a run of Steward's own, not the baseline's).
    for (const probe of probes) {
      expect(probe.achieved).toBeGreaterThan(0);
      expect(probe.workerMsPerChange).toBeGreaterThan(0);
    }
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^\*\*(The highest rate sustained|At least|No rate sustained|Out of order)/m);
    expect(text.match(/^\| \d+ \|/gm)).toHaveLength(probes.length);
  }, 900_000);

  test('burst with heap snapshots: every thread of the worker snapshotted at the peak, and what holds its memory reported', async () => {
    const report = await runScenario(stack.info, 'burst', { ...SMOKE_SIZES.burst, heapSnapshot: true });
    expect(report.converged).toEqual({ steward: true, baseline: true });
    const sections = (report.sections ?? []).join('\n');
    expect(sections).toContain('## Worker 1 (pid ');
    // The main thread's and the SDK's workflow thread's, each with its holders and constructors.
    const threads = [...sections.matchAll(/^### (.+) thread: ([\d.]+) MB in (\d+) nodes$/gm)];
    expect(threads.map((t) => t[1])[0]).toBe('main');
    expect(threads.length).toBeGreaterThanOrEqual(2);
    for (const [, , mb] of threads) expect(Number(mb)).toBeGreaterThan(1);
    expect(sections).toContain('| constructor | objects | shallow MB |');
  }, 900_000);
});

test('profiles, on the cluster profile with 2 worker processes: both sides converge, each worker and PostgreSQL measured, one table', async () => {
  const sizes = { ...DEFAULT_SIZES.burst, ...SMOKE_SIZES.burst } as Sizes;
  const { file, failed, outcomes } = await runProfiles([{ temporal: 'cluster', workers: 2 }], sizes, {
    out: join(tmpdir(), 'steward-bench-smoke'),
    command: 'bench/bench.own-stack.test.ts',
    // A cluster-profile stack of the run's own, stopped at its end, as the bench's own would be.
    stack: async (run) => {
      const cluster = await startPrivateStack({ temporal: run.temporal });
      return { info: cluster.info, stop: () => cluster.stop() };
    },
  });
  expect(failed).toBe(0);
  const report = outcomes[0]?.report;
  expect(report?.converged).toEqual({ steward: true, baseline: true });
  expect(report?.workers?.map((w) => w.cpuSeconds > 0)).toEqual([true, true]);
  expect(report?.rows.find((row) => row.key === METRIC.databaseCpu)?.steward).toBeGreaterThan(0);
  expect(readFileSync(file, 'utf8')).toContain(`| ${SUMMARY_HEADER.join(' | ')} |`);
}, 900_000);
