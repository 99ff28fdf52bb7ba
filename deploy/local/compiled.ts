import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths';
import { runLogged } from './process';

/**
 * Steward compiled to JavaScript as the image holds it (tsconfig.build.json: each production source on its own, no
 * tsx at run time), with bin/ and package.json, into `dir`; its dependencies are the caller's to add. What
 * `npm run image` packs, and what the bench runs its workers from, so that their memory and CPU are the deployed ones.
 */
export async function compileSteward(dir: string, logFile: string): Promise<void> {
  const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
  await runLogged(process.execPath, [tsc, '-p', join(repoRoot, 'tsconfig.build.json'), '--outDir', dir], {
    step: 'tsc -p tsconfig.build.json',
    logFile,
  });
  for (const file of ['bin', 'package.json', 'package-lock.json'])
    cpSync(join(repoRoot, file), join(dir, file), { recursive: true });
}
