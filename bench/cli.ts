// `npm run bench -- [scenario] [options]`: Steward against a baseline in the same run, on one stack.
//   burst     N Pods on M Nodes created then deleted at once, with a Service (2 ports) and its Endpoints churned
//   churn     R changes/s for D seconds (Pods created, deleted, re-annotated; Endpoints rewritten): write → backend latency
//   peerpods  N peer pods at once against virsh alone
// No scenario: the default set (burst 200 on 4, peerpods 20). `--smoke`: every scenario at 20 Pods for a few seconds
// (CI), results written to the temporary directory. Without `--stack`, a stack of the bench's own is started.
import { Command } from 'commander';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StackInfo } from '../deploy/local';
import { runObjectsScenario } from './objects';
import { printReport, writeReport, type Report } from './report';
import { burst } from './scenarios/burst';
import { churn } from './scenarios/churn';
import { peerPods } from './scenarios/peerpods';
import { benchStack, runBench } from './support';
import { countArgument } from '../worker/settings';

export const SCENARIOS = ['burst', 'churn', 'peerpods'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Sizes {
  pods: number;
  nodes: number;
  rate: number;
  duration: number;
  /** The worker's sticky cache (burst, churn); its default when absent. */
  cache?: number;
}

export const DEFAULT_SIZES: Record<ScenarioName, Partial<Sizes>> = {
  burst: { pods: 200, nodes: 4 },
  churn: { pods: 50, nodes: 4, rate: 20, duration: 300 },
  peerpods: { pods: 20 },
};
export const SMOKE_SIZES: Record<ScenarioName, Partial<Sizes>> = {
  burst: { pods: 20, nodes: 2 },
  churn: { pods: 20, nodes: 2, rate: 5, duration: 3 },
  peerpods: { pods: 20 },
};

/** One scenario at these sizes (defaults filled in) on a running stack. */
export function runScenario(info: StackInfo, name: ScenarioName, sizes: Partial<Sizes> = {}): Promise<Report> {
  const s = { ...DEFAULT_SIZES[name], ...sizes } as Sizes;
  switch (name) {
    case 'burst':
      return runObjectsScenario(info, burst(s), { maxCachedWorkflows: s.cache });
    case 'churn':
      return runObjectsScenario(info, churn(s), { maxCachedWorkflows: s.cache });
    case 'peerpods':
      return peerPods(info, s);
  }
}

async function main(): Promise<void> {
  const program = new Command('bench')
    .description('Steward against the direct reconciler (or virsh) in the same run, on one stack')
    .argument('[scenario]', `${SCENARIOS.join(' | ')}; none: the default set (burst 200 on 4, peerpods 20)`)
    .option('--pods <n>', 'Pods (burst, churn: those live at the start) or peer pods', countArgument)
    .option('--nodes <m>', 'Nodes', countArgument)
    .option('--rate <r>', 'churn: changes per second', countArgument)
    .option('--duration <s>', 'churn: seconds of churn', countArgument)
    .option('--cache <n>', "burst, churn: the worker's sticky cache in workflows (STEWARD_MAX_CACHED_WORKFLOWS; default 200)", countArgument)
    .option('--smoke', 'every scenario (or the one named) at 20 Pods for a few seconds; results to the temporary directory')
    .option('--stack <stack.json>', "a running stack's stack.json (else the bench starts its own)")
    .option('--out <dir>', 'where the .md and .svg results go', join(__dirname, 'results'))
    .showHelpAfterError();
  program.parse();
  const opts = program.opts<Partial<Sizes> & { smoke?: boolean; stack?: string; out: string }>();
  const scenario = program.args[0];
  if (scenario !== undefined && !(SCENARIOS as readonly string[]).includes(scenario)) program.error(`unknown scenario ${scenario}; one of ${SCENARIOS.join(', ')}`);
  const names: ScenarioName[] = scenario ? [scenario as ScenarioName] : opts.smoke ? [...SCENARIOS] : ['burst', 'peerpods'];
  const out = opts.smoke && opts.out === join(__dirname, 'results') ? join(tmpdir(), 'steward-bench-smoke') : opts.out;
  const flags = Object.fromEntries((['pods', 'nodes', 'rate', 'duration', 'cache'] as const).flatMap((k) => (opts[k] === undefined ? [] : [[k, opts[k]]])));
  const args = process.argv.slice(2).join(' ');
  const command = args ? `npm run bench -- ${args}` : 'npm run bench';

  const { info, stop } = await benchStack('steward-bench', opts.stack);
  try {
    for (const name of names) {
      const report = await runScenario(info, name, { ...(opts.smoke ? SMOKE_SIZES[name] : {}), ...flags });
      printReport(report);
      console.log(`  written: ${writeReport(report, out, command).join(', ')}`);
    }
  } finally {
    await stop();
  }
}

if (require.main === module) runBench(main);
