// The table says on which Temporal profile each seed ran and how many faults of each kind it took.
import { formatReport } from './report';
import type { RunResult } from './run';

const result = (overrides: Partial<RunResult>): RunResult => ({
  seed: 21,
  temporal: 'dev',
  ops: [],
  outcomes: new Map(),
  faults: {},
  violations: [],
  diagnosis: [],
  quiescenceMs: 12_300,
  durationMs: 365_000,
  log: [],
  ...overrides,
});

it('a row per seed with its profile, its faults by kind, violations and time to quiescence', () => {
  const table = formatReport([
    result({ temporal: 'cluster', faults: { 'history-host-kill': 2, 'postgres-restart': 1 } }),
    result({ seed: 22, quiescenceMs: undefined }),
  ]).split('\n');
  expect(table[0]).toMatch(/^seed \| Temporal \| ops \| ops refused \| faults injected +\| violations \| quiescence/);
  expect(table[2]).toMatch(/^21 +\| cluster +\| 0 +\| 0 +\| history-host-kill×2 postgres-restart×1 \| 0 +\| 12\.3 s /);
  expect(table[3]).toMatch(/^22 +\| dev +\| 0 +\| 0 +\| - +\| 0 +\| never /);
});
