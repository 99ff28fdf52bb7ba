import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { stewardVersion } from '../platform/version';

/**
 * What a worker reports as its build: Temporal records it on every workflow task it completes and lists it with the
 * task queue's pollers, so a history says which code made each step, and `temporal task-queue describe` which builds
 * serve. The Worker Deployment it names is Steward's; versioning stays off (every worker takes every task, histories
 * stay replayable through patches), so the ID only reports.
 */
export const STEWARD_DEPLOYMENT = 'steward';

/**
 * `steward@<version>+<12 hex of the workflow code's SHA-256>`: two workers with the same ID run the same workflow
 * code, and a change of it shows even when the version was not bumped.
 */
export function defaultBuildId(bundle: { code: string } | { codePath: string }): string {
  const code = 'code' in bundle ? bundle.code : readFileSync(bundle.codePath, 'utf8');
  return `steward@${stewardVersion()}+${createHash('sha256').update(code).digest('hex').slice(0, 12)}`;
}
