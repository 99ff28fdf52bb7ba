import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultStateDir } from '../paths';
import { stackFile, startStack, type Stack, type StackInfo, type StackOptions } from '../stack';

/** `STEWARD_TEST_STATE_DIR` lets two test runs on one machine keep apart (each gets its own stack). */
export const testStateDir = process.env.STEWARD_TEST_STATE_DIR ?? join(defaultStateDir, 'test');

/** The stack that jest's global setup started (tests run in other processes, so it is read from stack.json). */
export function stackInfo(): StackInfo {
  return JSON.parse(readFileSync(stackFile(testStateDir), 'utf8')) as StackInfo;
}

/**
 * A stack of the test file's own (fresh etcd, Temporal, MidoNet emulator, EC2 server) for the own-stack files
 * (`*.own-stack.test.ts`), which assert exactly what the backends hold: nothing another file left running can write
 * there, libvirtd included (each stack runs its own). About ten seconds to start (the dev server; `temporal: 'cluster'` for the cluster profile).
 * Its state directory goes when it stops: some 70 MB each (etcd preallocates its WAL), 200 with PostgreSQL, which a
 * CI run of two dozen such files would otherwise leave on a disk that may be small.
 */
export async function startPrivateStack(options: Pick<StackOptions, 'temporal' | 'report'> = {}): Promise<Stack> {
  const stateDir = mkdtempSync(join(tmpdir(), 'steward-e2e-'));
  const removeState = () => rmSync(stateDir, { recursive: true, force: true });
  try {
    const stack = await startStack({ stateDir, ports: 'free', report: () => {}, ...options });
    return { ...stack, stop: () => stack.stop().finally(removeState) };
  } catch (error) {
    removeState();
    throw error;
  }
}
