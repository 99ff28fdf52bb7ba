import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultStateDir } from '../paths';
import { stackFile, type StackInfo } from '../stack';

/** `STEWARD_TEST_STATE_DIR` lets two test runs on one machine keep apart (each gets its own stack). */
export const testStateDir = process.env.STEWARD_TEST_STATE_DIR ?? join(defaultStateDir, 'test');

/** The stack that jest's global setup started (tests run in other processes, so it is read from stack.json). */
export function stackInfo(): StackInfo {
  return JSON.parse(readFileSync(stackFile(testStateDir), 'utf8')) as StackInfo;
}
