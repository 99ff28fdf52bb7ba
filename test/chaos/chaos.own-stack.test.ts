// Issue 10's acceptance: a chaos run of 300 operations with every kind of fault, on a stack of its own, holds every
// invariant, within 10 minutes. Seeded, so a failure replays with `npm run chaos -- --seed 10 --ops 300`.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseFaults } from './faults';
import { describeOp, generateOps } from './ops';
import { formatReport } from './report';
import { runChaos } from './run';
import { relevantOps } from './shrink';

const SEED = 10;
const OPS = 300;

it(
  `seed ${SEED}, ${OPS} operations with faults: no invariant violated`,
  async () => {
    const ops = generateOps({ seed: SEED, ops: OPS, peerPods: true });
    const result = await runChaos({
      seed: SEED,
      ops,
      faults: parseFaults('all', { peerPods: true, temporal: 'dev' }),
      peerPods: true,
      temporal: 'dev',
      opDelayMs: 250,
      quiesceMs: 150_000,
      resyncSeconds: 60,
    });
    const logFile = join(tmpdir(), `steward-chaos-seed-${SEED}.log`);
    writeFileSync(logFile, `${result.log.join('\n')}\n`);
    const report = formatReport([result]);
    if (result.violations.length) {
      const involved = relevantOps(ops, result.violations).map(
        (op) => `  ${describeOp(op)} → ${result.outcomes.get(op.index) ?? ''}`,
      );
      throw new Error(
        `${report}\n\nWhat their workflows say:\n${result.diagnosis.join('\n')}\n\nThe operations on the objects involved:\n${involved.join('\n')}\n\nThe whole log (operations, faults, diagnosis): ${logFile}`,
      );
    }
    expect(result.durationMs).toBeLessThan(10 * 60_000);
  },
  12 * 60_000,
);
