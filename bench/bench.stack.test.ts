// The benchmark's smoke (`npm run bench:smoke`) in-process, on a stack of its own (its starter watches every
// namespace and the emulator is reset): every scenario at its smoke size, so the benchmark code cannot rot. Asserts
// only that both sides converged and that the table has both columns; no timings (the machine is shared).
import { startPrivateStack } from '../deploy/local/jest/stack-info';
import type { Stack } from '../deploy/local';
import { runScenario, SCENARIOS, SMOKE_SIZES } from './cli';
import { reportTable } from './report';

let stack: Stack;
beforeAll(async () => {
  stack = await startPrivateStack();
});
afterAll(async () => {
  await stack?.stop();
});

test.each(SCENARIOS)('%s at its smoke size: Steward and the baseline both converge, side by side in one table', async (name) => {
  const report = await runScenario(stack.info, name, SMOKE_SIZES[name]);
  expect(report.converged).toEqual({ steward: true, baseline: true });
  const { header, rows } = reportTable(report);
  expect(header).toEqual(['metric', 'Steward', report.baseline, 'ratio']);
  // The first row is the scenario's time to converge: a value on both sides.
  expect(rows[0]?.[1]).not.toBe('—');
  expect(rows[0]?.[2]).not.toBe('—');
}, 900_000);
