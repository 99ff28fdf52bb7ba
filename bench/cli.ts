// `npm run bench -- [scenario] [options]`: Steward against a baseline in the same run, on one stack.
//   burst     N Pods on M Nodes created then deleted at once, with a Service (2 ports) and its Endpoints churned
//   churn     R changes/s for D seconds (Pods created, deleted, re-annotated; Endpoints rewritten): write → backend latency;
//             with --find-rate lo:hi, the highest rate Steward sustains, by bisection (bench/rate-search.ts)
//   peerpods  N peer pods at once against virsh alone
//   profiles  the burst on each of --profiles (default: dev server, then the cluster profile with 1, 2, 3 workers),
//             each on a fresh stack, summed up in one table
// No scenario: the default set (burst 200 on 4, peerpods 20). `--smoke`: every scenario at 20 Pods for a few seconds
// (CI), results written to the temporary directory. Without `--stack`, a stack of the bench's own is started, on the
// Temporal profile `--temporal` names.
import { Command, InvalidArgumentError, Option } from 'commander';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TemporalProfile } from '../deploy/local';
import { DEFAULT_PROFILES, parseProfiles, runProfiles, type ProfileRun } from './profiles';
import { findChurnRate, rateRangeArgument, type RateRange } from './rate-search';
import { printReport, writeReport } from './report';
import { DEFAULT_SIZES, runScenario, SCENARIOS, SMOKE_SIZES, type ScenarioName, type Sizes } from './scenarios';
import { benchStack, runBench } from './support';
import { countArgument } from '../platform/settings';
import { workerSettings } from '../cli/worker';
import { MAX_HEAP_GROWTH_PERCENT } from '../worker/config';

/** The worker's STEWARD_HEAP_GROWTH_PERCENT, as its configuration takes it. */
function percentArgument(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > MAX_HEAP_GROWTH_PERCENT)
    throw new InvalidArgumentError(`must be a whole number, 0 to ${MAX_HEAP_GROWTH_PERCENT}.`);
  return Number(value);
}

async function main(): Promise<void> {
  const program = new Command('bench')
    .description('Steward against the direct reconciler (or virsh) in the same run, on one stack')
    .argument(
      '[scenario]',
      `${[...SCENARIOS, 'profiles'].join(' | ')}; none: the default set (burst 200 on 4, peerpods 20)`,
    )
    .option('--pods <n>', 'Pods (burst, churn: those live at the start) or peer pods', countArgument)
    .option('--nodes <m>', 'Nodes', countArgument)
    .option('--rate <r>', 'churn: changes per second', countArgument)
    .option('--duration <s>', 'churn: seconds of churn', countArgument)
    .option(
      '--find-rate <lo:hi>',
      'churn: instead of one run against the baseline, the highest rate Steward sustains between lo and hi changes/s, by bisection (each probe --duration s)',
      rateRangeArgument,
    )
    .option(
      '--cache <n>',
      `burst, churn: each worker's sticky cache in workflows (STEWARD_MAX_CACHED_WORKFLOWS; default ${workerSettings.maxCachedWorkflows.default})`,
      countArgument,
    )
    .option('--workers <n>', 'burst, churn: Steward worker processes (default 1)', countArgument)
    .option(
      '--heap-growth <percent>',
      "burst, churn: how far each worker's heaps grow past their live objects between collections (STEWARD_HEAP_GROWTH_PERCENT; 0: V8's own)",
      percentArgument,
    )
    .option(
      '--heap-snapshot',
      "burst: at the peak, a heap snapshot of each worker's threads, and what holds its memory in the report (the snapshots pause the workers: not a timing run)",
    )
    .addOption(
      new Option(
        '--temporal <profile>',
        "the bench's stack: the Temporal dev server or the cluster profile (PostgreSQL, 3 server hosts)",
      )
        .choices(['dev', 'cluster'])
        .default('dev'),
    )
    .option(
      '--profiles <list>',
      `profiles: the runs, each <dev|cluster>[:<workers>] (default ${DEFAULT_PROFILES})`,
      parseProfiles,
    )
    .option(
      '--smoke',
      'every scenario (or the one named) at 20 Pods for a few seconds; results to the temporary directory',
    )
    .option('--stack <stack.json>', "a running stack's stack.json (else the bench starts its own)")
    .option('--out <dir>', 'where the .md and .svg results go', join(__dirname, 'results'))
    .showHelpAfterError();
  program.parse();
  const opts = program.opts<
    Partial<Sizes> & {
      temporal: TemporalProfile;
      profiles?: ProfileRun[];
      smoke?: boolean;
      stack?: string;
      out: string;
      findRate?: RateRange;
    }
  >();
  const scenario = program.args[0];
  if (scenario !== undefined && scenario !== 'profiles' && !(SCENARIOS as readonly string[]).includes(scenario))
    program.error(`unknown scenario ${scenario}; one of ${[...SCENARIOS, 'profiles'].join(', ')}`);
  if (opts.stack && program.getOptionValueSource('temporal') === 'cli')
    program.error('--temporal and --stack: a running stack has its profile already');
  if (opts.profiles && scenario !== 'profiles') program.error('--profiles goes with the scenario profiles');
  if (opts.heapSnapshot && scenario !== 'burst') program.error('--heap-snapshot goes with the scenario burst');
  if (opts.findRate && (scenario !== 'churn' || opts.rate))
    program.error('--find-rate goes with the scenario churn, and without --rate (it picks the rates)');
  if (scenario === 'profiles' && (opts.stack || opts.workers || program.getOptionValueSource('temporal') === 'cli'))
    program.error(
      'profiles starts a stack per run: give the runs with --profiles, not --stack, --temporal or --workers',
    );
  const out = opts.smoke && opts.out === join(__dirname, 'results') ? join(tmpdir(), 'steward-bench-smoke') : opts.out;
  const flags = Object.fromEntries(
    (['pods', 'nodes', 'rate', 'duration', 'cache', 'workers', 'heapGrowth', 'heapSnapshot'] as const).flatMap((k) =>
      opts[k] === undefined ? [] : [[k, opts[k]]],
    ),
  );
  const args = process.argv.slice(2).join(' ');
  const command = args ? `npm run bench -- ${args}` : 'npm run bench';

  if (scenario === 'profiles') {
    const sizes = { ...DEFAULT_SIZES.burst, ...(opts.smoke ? SMOKE_SIZES.burst : {}), ...flags } as Sizes;
    const { file, failed } = await runProfiles(opts.profiles ?? parseProfiles(DEFAULT_PROFILES), sizes, {
      out,
      command,
    });
    console.log(`  written: ${file}`);
    if (failed) throw new Error(`${failed} of the runs failed (see ${file})`);
    return;
  }
  const names: ScenarioName[] = scenario
    ? [scenario as ScenarioName]
    : opts.smoke
      ? [...SCENARIOS]
      : ['burst', 'peerpods'];
  const { info, stop } = await benchStack(
    opts.temporal === 'dev' ? 'steward-bench' : `steward-bench-${opts.temporal}`,
    { ...(opts.stack ? { stackJson: opts.stack } : {}), temporal: opts.temporal },
  );
  try {
    if (opts.findRate) {
      const sizes = { ...DEFAULT_SIZES.churn, ...(opts.smoke ? SMOKE_SIZES.churn : {}), ...flags } as Sizes;
      const { file } = await findChurnRate(
        info,
        { range: opts.findRate, pods: sizes.pods, nodes: sizes.nodes, duration: sizes.duration },
        { maxCachedWorkflows: sizes.cache, workers: sizes.workers, heapGrowthPercent: sizes.heapGrowth },
        { out, command },
      );
      console.log(`  written: ${file}`);
      return;
    }
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
