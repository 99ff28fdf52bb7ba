// Every tool the stack, the image and the tests use is made once per machine into a folder of Steward's cache named
// by its version. Two processes may need one at the same moment (the unit lane's two jest workers both need helm on a
// fresh machine; `npm start` beside `npm test`): the first makes it holding a lock, the others wait and take what it
// made. Hand-written: the lock is held by a process of this machine for up to the longest build (Kubernetes, 10-25
// min), so whether its holder lives is told exactly by its PID, where proper-lockfile (last released in 2021) guesses
// it from an mtime its holder must keep touching.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Reporter, stderrReporter } from './progress';

export interface CachedToolOptions {
  /** Whether the folder holds a finished tool; by default its existence (every build here is renamed into place). */
  ready?: (dir: string) => boolean;
  /** How long to wait for another process's build of the same tool before failing. */
  waitMs?: number;
  /** How often a waiting process looks again. */
  pollMs?: number;
  /** Where a process waiting for another's build says so: that wait can be the whole of a Kubernetes build. */
  report?: Reporter;
}

// Longer than the longest build on two cores.
const WAIT_MS = 60 * 60_000;

/**
 * The folder `dir`, made first if it is not ready: `build` fills a staging folder renamed to `dir` when it succeeds,
 * so an interrupted build is never taken for a cache (a failed one is removed), while `<dir>.lock` is held so that no
 * two processes build it at once. One waiting for another's build returns what that build made, or builds it itself
 * if that one failed.
 */
export async function cachedTool(
  dir: string,
  build: (staging: string) => Promise<void>,
  { ready = existsSync, waitMs = WAIT_MS, pollMs = 1_000, report = stderrReporter }: CachedToolOptions = {},
): Promise<string> {
  if (ready(dir)) return dir;
  const waiting = (holder: number) => report(`waiting for process ${holder}, which is making ${dir}`);
  return holding(`${dir}.lock`, { waitMs, pollMs, waiting }, async () => {
    if (ready(dir)) return dir;
    const staging = `${dir}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    try {
      await build(staging);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      throw error;
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
    return dir;
  });
}

const PID_FILE = 'pid';

/**
 * Runs `work` holding the lock `lock`: a folder naming its holder's PID, put in place by one rename so that it never
 * exists without that PID. A lock whose holder is gone (killed mid-build) is moved aside under that holder's PID and
 * left there until the work is done: another process that found the same holder gone moves nothing then, as the
 * name it would move to is taken, not the lock taken over meanwhile.
 */
async function holding<T>(
  lock: string,
  { waitMs, pollMs, waiting }: { waitMs: number; pollMs: number; waiting: (holder: number) => void },
  work: () => Promise<T>,
): Promise<T> {
  const mine = `${lock}.${process.pid}-${Math.random().toString(36).slice(2)}`;
  const deadline = Date.now() + waitMs;
  const asides: string[] = [];
  const waitedFor = new Set<number>();
  const cleanUp = () => [mine, ...asides].forEach((path) => rmSync(path, { recursive: true, force: true }));
  for (;;) {
    rmSync(mine, { recursive: true, force: true });
    mkdirSync(mine, { recursive: true });
    writeFileSync(join(mine, PID_FILE), String(process.pid));
    if (tryRename(mine, lock)) break;
    const holder = holderOf(lock);
    if (holder !== undefined && !alive(holder)) {
      const aside = `${lock}.gone-${holder}`;
      if (tryRename(lock, aside)) asides.push(aside);
      continue;
    }
    if (holder !== undefined && !waitedFor.has(holder)) {
      waitedFor.add(holder);
      waiting(holder);
    }
    if (Date.now() > deadline) {
      cleanUp();
      throw new Error(
        `${lock} has been held by process ${holder ?? '(unknown)'} for over ${Math.round(waitMs / 60_000)} min; if no build of it is running, remove it: rm -rf ${lock}`,
      );
    }
    await sleep(pollMs);
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
    cleanUp();
  }
}

/** A rename that fails only because the target is there (a lock held, or moved aside already). */
function tryRename(from: string, to: string): boolean {
  try {
    renameSync(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'ENOENT') return false;
    throw error;
  }
}

function holderOf(lock: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(lock, PID_FILE), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined; // released between the rename and this read
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it lives, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
