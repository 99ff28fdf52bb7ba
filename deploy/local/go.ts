import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './paths';

/**
 * Runs a Go build of one of the stack's tools (`name`: `<tool>-<version>`) with Go's build and module caches in a
 * scratch folder of Steward's cache, removed when the build ends: the binaries are cached by version, so the caches
 * would only hold the disk (some 8 GB for every tool the tests build, on a CI machine whose disk is its own limit). A
 * scratch folder an interrupted build left is removed by the next; two builds of one tool take turns (tool-cache.ts).
 * `env` is the build's own settings; its `GOFLAGS` gain `-modcacherw` (the module cache is read-only by default, which
 * a plain removal cannot delete).
 */
export async function inGoScratch<T>(
  name: string,
  env: Record<string, string>,
  build: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const scratch = join(cacheRoot, 'go-scratch', name);
  rmSync(scratch, { recursive: true, force: true });
  try {
    return await build({
      ...env,
      GOCACHE: join(scratch, 'build'),
      GOMODCACHE: join(scratch, 'mod'),
      GOFLAGS: [env.GOFLAGS, '-modcacherw'].filter(Boolean).join(' '),
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
