// Issue 10's acceptance: a chaos run of 300 operations with every kind of fault, on a stack of its own, holds every
// invariant. Seeded, so a failure replays with `npm run chaos -- --seed 10 --ops 300`.
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { FAULT_KINDS } from './faults';
import { generateOps } from './ops';
import { formatReport } from './report';
import { runChaos } from './run';
import { relevantOps } from './shrink';
import { describeOp } from './ops';

const SEED = 10;
const OPS = 300;

it(`seed ${SEED}, ${OPS} operations with faults: no invariant violated`, async () => {
  const ops = generateOps({ seed: SEED, ops: OPS, peerPods: true });
  const result = await runChaos({
    seed: SEED,
    ops,
    faults: [...FAULT_KINDS],
    peerPods: true,
    // The shared stack's libvirtd (one per machine).
    libvirtUri: stackInfo().libvirt.uri,
    opDelayMs: 250,
    quiesceMs: 150_000,
    resyncSeconds: 60,
  });
  const report = formatReport([result]);
  const involved = relevantOps(ops, result.violations).map((op) => `  ${describeOp(op)} → ${result.outcomes.get(op.index) ?? ''}`);
  // The table and, on failure, the operations on the objects involved, in the assertion's message.
  expect({ report, involved, log: result.violations.length ? result.log : [] }).toEqual({ report: expect.stringContaining('| ok') as unknown, involved: [], log: [] });
  expect(result.durationMs).toBeLessThan(10 * 60_000);
}, 12 * 60_000);
