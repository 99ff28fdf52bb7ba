import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runLogged } from './process';

/**
 * Installs `requirements` (lines of a requirements file, each pinned) into `target` with the machine's python3, none
 * of their dependencies but those listed: a tool's cached folder (tool-cache.ts), put on PYTHONPATH or run from it.
 * `requireHashes` refuses any line without its `--hash=`, so a pinned download cannot lose its check by an edit; moto's
 * lines carry none (a wheel for each platform).
 */
export async function pipInstall(
  target: string,
  requirements: readonly string[],
  options: { step: string; logFile: string; requireHashes?: boolean },
): Promise<void> {
  const { requireHashes = false, ...log } = options;
  const file = join(target, 'requirements.txt');
  writeFileSync(file, requirements.join('\n') + '\n');
  const checks = requireHashes ? ['--require-hashes'] : [];
  await runLogged(
    'python3',
    ['-m', 'pip', 'install', '--quiet', '--no-deps', ...checks, '--target', target, '-r', file],
    {
      ...log,
      env: { PIP_ROOT_USER_ACTION: 'ignore', PIP_DISABLE_PIP_VERSION_CHECK: '1' },
    },
  );
}
