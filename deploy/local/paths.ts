import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Built tools live outside the repository, keyed by version, so a second start (or another clone) reuses them. */
export const cacheRoot = resolve(
  process.env.STEWARD_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'steward'),
);

/** The repository root (this file is deploy/local/paths.ts). */
export const repoRoot = resolve(__dirname, '..', '..');

/** Where `npm start` keeps data, logs and stack.json; tests use a subfolder of their own. */
export const defaultStateDir = join(repoRoot, '.steward');
