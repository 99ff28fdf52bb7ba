import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../paths';
import { PHASES, mergeResults, parseArgs, type JestResult } from './lanes';

const result = (overrides: Partial<JestResult>): JestResult => ({
  success: true,
  startTime: 1_000,
  testResults: [],
  numPassedTests: 0,
  numFailedTests: 0,
  numTotalTests: 0,
  numRuntimeErrorTestSuites: 0,
  ...overrides,
});

describe('npm test in two lanes', () => {
  it('runs every file in exactly one lane: the unit tests first, then the own-stack files beside the shared stack', () => {
    expect(PHASES.map((phase) => phase.map((lane) => lane.projects))).toEqual([
      [['unit']],
      [['stack', 'own-stack'], ['own-stack']],
    ]);
    const ownStackFiles = readdirSync(repoRoot, { recursive: true, encoding: 'utf8' }).filter(
      (file) => file.endsWith('.own-stack.test.ts') && !file.startsWith('node_modules'),
    );
    const lanesOf = (file: string) =>
      PHASES.flat()
        .filter((lane) => lane.projects.includes('own-stack'))
        .filter((lane) => !(lane.leaves ?? []).some((pattern) => new RegExp(pattern).test(join(repoRoot, file))))
        .map((lane) => lane.name);
    expect(ownStackFiles.length).toBeGreaterThan(5);
    for (const file of ownStackFiles)
      expect([file, lanesOf(file)]).toEqual([file, file.includes('failover.own-stack') ? ['shared'] : ['own']]);
    // A stack test needs the cores it has: one file at a time per stack lane.
    expect(PHASES[1]!.map((lane) => lane.workers)).toEqual([1, 1]);
  });

  it('merges the lanes as one jest result: counts summed, results joined, failed if either failed', () => {
    const shared = result({ numPassedTests: 900, numTotalTests: 901, numFailedTests: 1, testResults: ['a'] });
    const own = result({ numPassedTests: 40, numTotalTests: 40, startTime: 500, testResults: ['b'], success: false });
    expect(mergeResults([shared, own])).toEqual({
      success: false,
      startTime: 500,
      testResults: ['a', 'b'],
      numPassedTests: 940,
      numFailedTests: 1,
      numTotalTests: 941,
      numRuntimeErrorTestSuites: 0,
    });
    expect(mergeResults([shared, result({ numRuntimeErrorTestSuites: 1 })])).toMatchObject({
      numRuntimeErrorTestSuites: 1,
      success: true,
    });
  });

  it('takes --json and --outputFile for itself and gives every other argument to both lanes', () => {
    expect(parseArgs(['--json', '--outputFile=.steward/r.json', '-t', 'lease'])).toEqual({
      outputFile: '.steward/r.json',
      jestArgs: ['-t', 'lease'],
    });
    expect(parseArgs(['--outputFile', 'r.json', 'starter/'])).toEqual({ outputFile: 'r.json', jestArgs: ['starter/'] });
  });
});
