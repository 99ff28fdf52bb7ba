import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { cachedTool } from './tool-cache';

let root: string;
let dir: string;
/** What the calls reported: a process waiting for another's build says so. */
let reported: string[];
let fast: { pollMs: number; report: (line: string) => void };
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-tool-cache-'));
  dir = join(root, 'tool-v1');
  reported = [];
  fast = { pollMs: 10, report: (line) => reported.push(line) };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A lock as a process `pid` holds it. */
const lockHeldBy = (pid: number) => {
  mkdirSync(`${dir}.lock`);
  writeFileSync(join(`${dir}.lock`, 'pid'), String(pid));
};
const builds = () => {
  const made: string[] = [];
  const build = async (staging: string) => {
    made.push(staging);
    await sleep(100);
    writeFileSync(join(staging, 'bin'), 'built');
  };
  return { made, build };
};

it('builds once for callers at the same time: the later one waits for the lock and takes what the first made', async () => {
  const { made, build } = builds();
  const answers = await Promise.all([cachedTool(dir, build, fast), cachedTool(dir, build, fast)]);
  expect(answers).toEqual([dir, dir]);
  expect(made).toEqual([`${dir}.partial`]);
  expect(readdirSync(root)).toEqual(['tool-v1']);
  expect(reported).toEqual([`waiting for process ${process.pid}, which is making ${dir}`]);
});

it('leaves no folder after a failed build, and the next caller builds again', async () => {
  await expect(cachedTool(dir, () => Promise.reject(new Error('go build failed')), fast)).rejects.toThrow(
    'go build failed',
  );
  expect(readdirSync(root)).toEqual([]);
  const { made, build } = builds();
  await cachedTool(dir, build, fast);
  expect(made).toHaveLength(1);
  expect(readdirSync(root)).toEqual(['tool-v1']);
});

it('takes over a lock whose holder is gone (killed mid-build), and removes it when done', async () => {
  const gone = spawnSync('true').pid;
  lockHeldBy(gone);
  const { made, build } = builds();
  await cachedTool(dir, build, fast);
  expect(made).toHaveLength(1);
  expect(readdirSync(root)).toEqual(['tool-v1']);
  expect(reported).toEqual([]);
});

it('waits for a live holder, and past the bound says which process holds the lock and how to clear it', async () => {
  lockHeldBy(process.ppid);
  const { made, build } = builds();
  await expect(cachedTool(dir, build, { ...fast, waitMs: 200 })).rejects.toThrow(
    `held by process ${process.ppid} for over 0 min; if no build of it is running, remove it: rm -rf ${dir}.lock`,
  );
  expect(made).toHaveLength(0);
  expect(readdirSync(root)).toEqual(['tool-v1.lock']);
  // Once, not at every look.
  expect(reported).toEqual([`waiting for process ${process.ppid}, which is making ${dir}`]);
});

it('returns what a live holder made once it lets go', async () => {
  lockHeldBy(process.ppid);
  const { made, build } = builds();
  const waiting = cachedTool(dir, build, fast);
  await sleep(100);
  mkdirSync(dir);
  rmSync(`${dir}.lock`, { recursive: true });
  await expect(waiting).resolves.toBe(dir);
  expect(made).toHaveLength(0);
});

it('builds again a folder that is there but not ready (one an older build left half made)', async () => {
  mkdirSync(dir);
  writeFileSync(join(dir, 'etcd'), 'one binary of three');
  const { made, build } = builds();
  await cachedTool(dir, build, { ...fast, ready: (d) => existsSync(join(d, 'bin')) });
  expect(made).toHaveLength(1);
  expect(readdirSync(dir)).toEqual(['bin']);
});
