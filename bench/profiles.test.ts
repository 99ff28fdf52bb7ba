import { spawn } from 'node:child_process';
import { processTreeCpuSeconds } from './measure';
import { METRIC } from './objects';
import { parseProfiles, summaryRow, SUMMARY_HEADER } from './profiles';
import type { Report } from './report';
import { BURST_TIMINGS } from './scenarios/burst';

describe('parseProfiles', () => {
  test.each([
    ['dev', 'a profile alone means one worker', [{ temporal: 'dev', workers: 1 }]],
    [
      'dev,cluster:1,cluster:2,cluster:3',
      'the issue’s four runs, in order',
      [
        { temporal: 'dev', workers: 1 },
        { temporal: 'cluster', workers: 1 },
        { temporal: 'cluster', workers: 2 },
        { temporal: 'cluster', workers: 3 },
      ],
    ],
    [
      ' cluster:2 , dev:3',
      'spaces around items are allowed',
      [
        { temporal: 'cluster', workers: 2 },
        { temporal: 'dev', workers: 3 },
      ],
    ],
  ])('%s (%s)', (list, _why, runs) => {
    expect(parseProfiles(list)).toEqual(runs);
  });

  test.each([
    ['prod', 'an unknown profile'],
    ['cluster:0', 'no workers'],
    ['cluster:2:1', 'one colon at most'],
    ['dev,', 'an empty item'],
  ])('%s is refused (%s)', (list) => {
    expect(() => parseProfiles(list)).toThrow();
  });
});

describe('summaryRow', () => {
  const report: Report = {
    scenario: 'burst',
    title: 'burst',
    baseline: 'direct',
    converged: { steward: true, baseline: true },
    rows: [
      { metric: BURST_TIMINGS.created, steward: 20, baseline: 5 },
      { metric: BURST_TIMINGS.createRate, steward: 10, baseline: 40 },
      { metric: BURST_TIMINGS.deleted, steward: 12, baseline: 6 },
      { metric: 'events', key: METRIC.events, steward: 52.6 },
      { metric: 'worker CPU', key: METRIC.workerCpu, steward: 30 },
      { metric: 'worker RSS', key: METRIC.workerPeakRss, steward: 1500, digits: 0 },
      { metric: 'side CPU', key: METRIC.sideCpu, steward: 35, baseline: 7 },
      { metric: 'Temporal', key: METRIC.temporalCpu, steward: 20, baseline: 1 },
      { metric: 'PostgreSQL', key: METRIC.databaseCpu, steward: 8, baseline: 0.5 },
    ],
    notes: [],
    workers: [
      { cpuSeconds: 16, peakRssMb: 800 },
      { cpuSeconds: 14, peakRssMb: 750 },
    ],
  };

  test('gives Steward and the direct baseline with their ratio, each worker, and Temporal with its PostgreSQL', () => {
    const row = summaryRow({ run: { temporal: 'cluster', workers: 2 }, wallSeconds: 100, report });
    expect(row).toHaveLength(SUMMARY_HEADER.length);
    expect(row).toEqual([
      'cluster, 2 workers',
      '20.0 / 5.0 (4.00×)',
      '12.0 / 6.0 (2.00×)',
      '10.0 / 40.0',
      '52.6',
      '30.0 (16.0 + 14.0)',
      '1500 (800 + 750)',
      '35.0 / 7.0 (5.00×)',
      '28.0 (20.0 + 8.0) / 1.5',
    ]);
  });

  test('a failed run keeps its row, with the reason', () => {
    const row = summaryRow({ run: { temporal: 'dev', workers: 1 }, wallSeconds: 10, error: 'no stack' });
    expect(row).toHaveLength(SUMMARY_HEADER.length);
    expect(row.slice(0, 2)).toEqual(['dev server, 1 worker', 'failed: no stack']);
  });
});

test('processTreeCpuSeconds counts the CPU of a process’s children, running and ended', async () => {
  const before = processTreeCpuSeconds(process.pid);
  // A child that burns half a second of CPU (its own count, so a busy machine only makes it take longer) and ends:
  // once reaped, its CPU is this process's cutime.
  const burn =
    'const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; }; while (used() < 500);';
  const child = spawn(process.execPath, ['-e', burn]);
  await new Promise((resolve) => child.on('exit', resolve));
  expect(processTreeCpuSeconds(process.pid) - before).toBeGreaterThan(0.3);
});
