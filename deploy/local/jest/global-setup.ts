import { rmSync } from 'node:fs';
import { startStack, type Stack } from '..';
import { stderrReporter } from '../progress';
import { testStateDir } from './stack-info';
import { ensureStackTools } from './tools';

/** Starts one embedded stack for every shared-stack test, on free ports, with fresh state. */
export default async function globalSetup(): Promise<void> {
  await ensureStackTools(stderrReporter);
  rmSync(testStateDir, { recursive: true, force: true });
  (globalThis as { stewardStack?: Stack }).stewardStack = await startStack({ stateDir: testStateDir, ports: 'free' });
}
