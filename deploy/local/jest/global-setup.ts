import { rmSync } from 'node:fs';
import { startStack, type Stack } from '..';
import { testStateDir } from './stack-info';

/** Starts one embedded stack for every stack test, on free ports, with fresh state. */
export default async function globalSetup(): Promise<void> {
  rmSync(testStateDir, { recursive: true, force: true });
  (globalThis as { stewardStack?: Stack }).stewardStack = await startStack({ stateDir: testStateDir, ports: 'free' });
}
