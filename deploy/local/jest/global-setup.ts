import { rmSync } from 'node:fs';
import { startStack, type Stack } from '..';
import { stderrReporter, step } from '../progress';
import { ensureTemporalServerBinaries } from '../temporal-cluster';
import { testStateDir } from './stack-info';

/**
 * Starts one embedded stack for every stack test, on free ports, with fresh state. The cluster profile's binaries are
 * built here, once per machine (about 10 minutes), so that no test that starts a cluster times out building them.
 */
export default async function globalSetup(): Promise<void> {
  await step(stderrReporter, 'Temporal cluster binaries (built once per machine)', () =>
    ensureTemporalServerBinaries(stderrReporter),
  );
  rmSync(testStateDir, { recursive: true, force: true });
  (globalThis as { stewardStack?: Stack }).stewardStack = await startStack({ stateDir: testStateDir, ports: 'free' });
}
