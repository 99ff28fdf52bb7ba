import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLogged } from './process';

/**
 * Installs `requirements` (lines of a requirements file, each pinned) into `target` with the machine's python3, none
 * of their dependencies but those listed: a tool's cached folder (tool-cache.ts), put on PYTHONPATH or run from it.
 * A line with its `--hash=` puts pip in its hash-checking mode, which then requires one on every line.
 */
export async function pipInstall(
  target: string,
  requirements: readonly string[],
  log: { step: string; logFile: string },
): Promise<void> {
  const file = join(target, 'requirements.txt');
  writeFileSync(file, requirements.join('\n') + '\n');
  await runLogged('python3', ['-m', 'pip', 'install', '--quiet', '--no-deps', '--target', target, '-r', file], {
    ...log,
    env: { PIP_ROOT_USER_ACTION: 'ignore', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
  });
}
