// `npm run chaos -- --seed N --ops K [--temporal dev|cluster] [--faults list] [--no-peer-pods] [--shrink]`: the chaos
// run of issue 10 on an embedded stack of its own, on the dev server or the cluster profile (issue 25). Prints the
// operation log as it goes, a table per seed, and for a failing seed the violations and the reduced operation log (see
// shrink.ts). Exits 1 when an invariant is violated.
import { Command, InvalidArgumentError, Option } from 'commander';
import type { TemporalProfile } from '../../deploy/local/stack';
import { CLUSTER_FAULTS, FAULT_KINDS, parseFaults, type FaultKind } from './faults';
import { describeOp, generateOps } from './ops';
import { formatReport } from './report';
import { runChaos, type RunOptions, type RunResult } from './run';
import { ddmin, relevantOps, sameFailure } from './shrink';

const whole = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('not a whole number');
  return n;
};

async function main(): Promise<void> {
  const program = new Command('chaos')
    .description(
      "issue 10's chaos run: seeded operations on Nodes, Pods, peer pods, Services, Endpoints and hand-written Translations while faults are injected, then the invariants",
    )
    .option('--seed <n>', 'seed (repeat for several; each runs on a fresh stack)', (v: string, prev: number[] = []) => [
      ...prev,
      whole(v),
    ])
    .option('--ops <k>', 'operations per seed', whole, 100)
    .addOption(
      new Option(
        '--temporal <profile>',
        'the Temporal dev server, or the cluster profile (server processes on PostgreSQL)',
      )
        .choices(['dev', 'cluster'])
        .default('dev'),
    )
    .option(
      '--faults <list>',
      `all, none, or some of ${FAULT_KINDS.join(',')} (${CLUSTER_FAULTS.join(', ')}: cluster profile only)`,
      'all',
    )
    .option('--no-peer-pods', 'no peer pods (no libvirt needed)')
    .option('--op-delay-ms <ms>', 'mean pause between operations', whole, 500)
    .option('--quiesce-seconds <s>', 'bound of the wait for quiescence', whole, 180)
    .option('--resync-seconds <s>', "the starter's re-list period", whole, 60)
    .option('--shrink', 'delta-debug a failing operation log by re-running it')
    .option('--shrink-runs <n>', 'budget of re-runs for --shrink', whole, 8)
    .parse();
  const opts = program.opts<{
    seed?: number[];
    ops: number;
    temporal: TemporalProfile;
    faults: string;
    peerPods: boolean;
    opDelayMs: number;
    quiesceSeconds: number;
    resyncSeconds: number;
    shrink?: boolean;
    shrinkRuns: number;
  }>();

  const seeds = opts.seed ?? [1];
  let faults: FaultKind[] = [];
  try {
    faults = parseFaults(opts.faults, { peerPods: opts.peerPods, temporal: opts.temporal });
  } catch (error) {
    program.error(`error: --faults: ${(error as Error).message}`);
  }
  const results: RunResult[] = [];
  for (const seed of seeds) {
    const base: Omit<RunOptions, 'ops'> = {
      seed,
      faults,
      peerPods: opts.peerPods,
      temporal: opts.temporal,
      opDelayMs: opts.opDelayMs,
      quiesceMs: opts.quiesceSeconds * 1000,
      resyncSeconds: opts.resyncSeconds,
    };
    const ops = generateOps({ seed, ops: opts.ops, peerPods: opts.peerPods });
    const result = await runChaos({ ...base, ops, print: (line) => console.log(`[seed ${seed}] ${line}`) });
    results.push(result);
    console.log(formatReport([result]));
    if (result.violations.length === 0) continue;
    let reduced = relevantOps(ops, result.violations);
    console.log(`\nseed ${seed}: the ${reduced.length} operations on the objects involved (of ${ops.length}):`);
    for (const op of reduced) console.log(`  ${describeOp(op)} → ${result.outcomes.get(op.index) ?? ''}`);
    if (opts.shrink && reduced.length > 1) {
      const fails = sameFailure(result.violations);
      reduced = await ddmin(
        reduced,
        async (candidate) => fails((await runChaos({ ...base, ops: candidate })).violations),
        opts.shrinkRuns,
        (line) => console.log(`[seed ${seed}] ${line}`),
      );
      console.log(`\nseed ${seed}: shortest failing log found by ddmin (${reduced.length} operations):`);
      for (const op of reduced) console.log(`  ${describeOp(op)}`);
    }
  }
  if (results.length > 1) console.log(`\n${formatReport(results)}`);
  process.exitCode = results.some((r) => r.violations.length) ? 1 : 0;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 2;
});
