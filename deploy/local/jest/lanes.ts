/**
 * `npm test`: every test. First the unit tests, two files at a time, on the Node the image runs (deploy/image/build.ts), while
 * the stack lanes run on this machine's, the checkout's (package.json `engines`): both Nodes pass. The unit tests only
 * compute, and beside a stack they would starve it (and it them). Then two lanes at once: the files that share one embedded stack (and failover, to balance
 * the lanes), and the other own-stack files (`*.own-stack.test.ts`: chaos, the benchmarks' smoke, peer pods, the
 * migration, `steward up`), each starting a stack of its own. Each lane is one jest run, one file at a time; the two keep both cores busy, since a stack test mostly
 * waits (for Temporal, the API server, a VM) and the own-stack files take about as long as the rest together.
 *
 * What both lanes share is made ready first: the tools, built once per machine (each stack runs a libvirtd of its
 * own). Extra arguments go to both jest runs; `--json --outputFile <file>` writes the two lanes' results merged into
 * one, as jest would have written them.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from '../paths';
import { stderrReporter } from '../progress';
import { ensureImageNode } from '../../image/build';
import { ensureStackTools } from './tools';

interface Lane {
  name: string;
  projects: string[];
  /** jest's `--maxWorkers`: test files at a time. */
  workers: number;
  /** Files of its projects it leaves to another lane (regular expressions on the path). */
  leaves?: string[];
  /** Runs on the image's Node rather than this process's. */
  imageNode?: boolean;
}

/**
 * Own-stack files the shared lane runs beside its own, so that the two lanes take about as long: the own-stack files
 * took 19 min where the shared ones took 13, and failover takes 3.
 */
const SHARED_LANE_TAKES = ['test/failover/failover\\.own-stack\\.test\\.ts$'];

/** Run one after the other; the lanes of a phase at once. */
export const PHASES: Lane[][] = [
  [{ name: 'unit', projects: ['unit'], workers: 2, imageNode: true }],
  [
    {
      name: 'shared',
      projects: ['stack', 'own-stack'],
      workers: 1,
      leaves: [`^(?!.*(${SHARED_LANE_TAKES.join('|')})).*\\.own-stack\\.test\\.ts$`],
    },
    { name: 'own', projects: ['own-stack'], workers: 1, leaves: SHARED_LANE_TAKES },
  ],
];

/** What jest.config.cjs ignores everywhere: a lane's own patterns replace the configured ones. */
const ALWAYS_IGNORED = ['/node_modules/', '/\\.steward/'];

/** The part of jest's JSON result that is summed over the lanes; the rest is the first lane's. */
export interface JestResult {
  success: boolean;
  startTime: number;
  testResults: unknown[];
  [count: `num${string}`]: number;
}

export function mergeResults(results: JestResult[]): JestResult {
  const [first, ...rest] = results;
  if (!first) throw new Error('no lane wrote results');
  const merged: JestResult = { ...first, testResults: [...first.testResults] };
  for (const result of rest) {
    for (const [key, value] of Object.entries(result)) {
      if (key.startsWith('num') && typeof value === 'number')
        merged[key as `num${string}`] = (merged[key as `num${string}`] ?? 0) + value;
    }
    merged.testResults.push(...result.testResults);
    merged.success &&= result.success;
    merged.startTime = Math.min(merged.startTime, result.startTime);
  }
  return merged;
}

/** A lane's results; a lane that wrote none (jest itself failed) counts as one suite that could not run. */
function readResult(lane: Lane, file: string, code: number): JestResult {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as JestResult;
  process.stderr.write(`lane ${lane.name}: jest wrote no results (exit ${code})\n`);
  const none = { numPassedTests: 0, numFailedTests: 0, numTotalTests: 0 };
  return { success: false, startTime: Date.now(), testResults: [], ...none, numRuntimeErrorTestSuites: 1 };
}

/** Splits off `--json` and `--outputFile <file>` / `--outputFile=<file>`: the runner writes the merged file. */
export function parseArgs(args: readonly string[]): { outputFile?: string; jestArgs: string[] } {
  const jestArgs: string[] = [];
  let outputFile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--json') continue;
    if (arg === '--outputFile') outputFile = args[++i];
    else if (arg.startsWith('--outputFile=')) outputFile = arg.slice('--outputFile='.length);
    else jestArgs.push(arg);
  }
  return { outputFile, jestArgs };
}

/** One lane's jest run, its output prefixed with the lane's name; resolves with its exit code. */
function runLane(lane: Lane, node: string, jestArgs: string[], resultFile: string): Promise<number> {
  const args = [
    require.resolve('jest/bin/jest'),
    '--selectProjects',
    ...lane.projects,
    `--maxWorkers=${lane.workers}`,
    '--passWithNoTests',
    ...(lane.leaves ? ['--testPathIgnorePatterns', ...ALWAYS_IGNORED, ...lane.leaves] : []),
    '--json',
    `--outputFile=${resultFile}`,
    ...jestArgs,
  ];
  const child = spawn(node, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on('line', (line) => process.stderr.write(`[${lane.name}] ${line}\n`));
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
}

async function main(): Promise<number> {
  const { outputFile, jestArgs } = parseArgs(process.argv.slice(2));
  const stateDir = mkdtempSync(join(tmpdir(), 'steward-lanes-'));
  await ensureStackTools(stderrReporter);
  const imageNode = await ensureImageNode(stderrReporter);
  const resultFile = (lane: Lane) => join(stateDir, `${lane.name}.json`);
  const lanes = PHASES.flat();
  const codes: number[] = [];
  for (const phase of PHASES) {
    const run = (lane: Lane) =>
      runLane(lane, lane.imageNode ? imageNode : process.execPath, jestArgs, resultFile(lane));
    codes.push(...(await Promise.all(phase.map(run))));
  }
  const results = lanes.map((lane, i) => readResult(lane, resultFile(lane), codes[i]!));
  const merged = mergeResults(results);
  if (outputFile) {
    mkdirSync(dirname(outputFile), { recursive: true });
    writeFileSync(outputFile, JSON.stringify(merged));
  }
  const passed = lanes.map((lane, i) => `${lane.name} ${results[i]!.numPassedTests} passed`).join(', ');
  process.stderr.write(
    `lanes: ${passed}; in all ${merged.numPassedTests} passed, ${merged.numFailedTests} failed, of ${merged.numTotalTests}\n`,
  );
  return codes.every((code) => code === 0) ? 0 : 1;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
