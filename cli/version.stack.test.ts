// `steward version` as a process against the shared stack's Temporal: its own version, and the build ID of a worker
// polling a task queue of this file's own, as Temporal reports it.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { stewardVersion } from '../platform/version';
import { runProbeWorker, waitFor } from '../test/support';
import { loadWorkerConfig } from './worker';
import type { RunningWorker } from '../worker';
import { pollersOf } from './pollers';
import type { WorkerBuild } from './version';

const { address } = stackInfo().temporal;
const bin = join(__dirname, '..', 'bin', 'steward.cjs');
const taskQueue = `version-test-${Date.now()}`;

const steward = (...args: string[]) =>
  promisify(execFile)(process.execPath, [bin, 'version', ...args, '--address', address, '--task-queue', taskQueue], {
    env: { ...process.env, NO_COLOR: '1' },
  });

describe('steward version', () => {
  let running: RunningWorker;
  beforeAll(async () => {
    running = await runProbeWorker(taskQueue);
  });
  afterAll(() => running?.shutdown());

  it("prints its version and the build ID of the workers polling Steward's task queues", async () => {
    const workers = await waitFor(
      'the worker among the pollers',
      async () => {
        const { stdout } = await steward('-o', 'json');
        const report = JSON.parse(stdout) as { client: { version: string }; workers: WorkerBuild[] };
        expect(report.client.version).toBe(stewardVersion());
        return report.workers.length === 2 ? report.workers : undefined;
      },
      30_000,
    );
    expect(workers.map((w) => [w.taskQueue, w.buildId, w.workers])).toEqual([
      [taskQueue, running.buildId, 1],
      [`${taskQueue}-peerpods`, running.buildId, 1],
    ]);
    const { stdout } = await steward();
    const [version, header, row] = stdout.split('\n');
    expect(version).toBe(`Client Version: ${stewardVersion()}`);
    expect(header?.split(/ {3,}/)).toEqual(['TASK QUEUE', 'BUILD ID', 'WORKERS', 'LAST SEEN']);
    expect(row?.split(/ {3,}/)).toEqual([taskQueue, running.buildId, '1', expect.stringMatching(/^\d+s$/)]);
  });

  it("polls the peer pods' queue for activities only: a worker process has one workflow thread", async () => {
    const config = loadWorkerConfig({ address, taskQueue }, {}).temporal;
    const kinds = async () => [...new Set((await pollersOf(config)).map((p) => `${p.taskQueue} ${p.type}`))].sort();
    await waitFor('both queues polled', async () => ((await kinds()).length >= 3 ? true : undefined), 30_000);
    expect(await kinds()).toEqual([`${taskQueue} activity`, `${taskQueue} workflow`, `${taskQueue}-peerpods activity`]);
  });

  it('--client asks no Temporal', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      bin,
      'version',
      '--client',
      '--address',
      'nowhere:1',
    ]);
    expect(stdout).toBe(`Client Version: ${stewardVersion()}\n`);
  });
});
