import { POLLER_WINDOW_MS, type Poller } from './pollers';
import { workerBuilds } from './version';

describe('workerBuilds', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  const ago = (ms: number) => new Date(now - ms);
  const poller = (taskQueue: string, identity: string, msAgo: number, buildId?: string): Poller => ({
    taskQueue,
    type: 'workflow',
    identity,
    lastAccessMs: now - msAgo,
    ...(buildId ? { buildId } : {}),
  });

  it('groups the pollers of each task queue by build, counting the workers that polled lately, once each', () => {
    const pollers = [
      // One worker polls workflow and activity tasks: one worker.
      poller('steward', '1@a', 5_000, 'steward@0.2.0+b'),
      { ...poller('steward', '1@a', 1_000, 'steward@0.2.0+b'), type: 'activity' as const },
      poller('steward', '2@b', 30_000, 'steward@0.2.0+b'),
      // A worker of the build before, stopped minutes ago: still listed by Temporal, no longer counted.
      poller('steward', '3@c', POLLER_WINDOW_MS + 1, 'steward@0.1.0+a'),
      poller('steward-peerpods', '1@a', 2_000),
    ];
    expect(workerBuilds(pollers, now)).toEqual([
      {
        taskQueue: 'steward',
        buildId: 'steward@0.1.0+a',
        workers: 0,
        lastSeen: ago(POLLER_WINDOW_MS + 1).toISOString(),
      },
      { taskQueue: 'steward', buildId: 'steward@0.2.0+b', workers: 2, lastSeen: ago(1_000).toISOString() },
      { taskQueue: 'steward-peerpods', buildId: '(none)', workers: 1, lastSeen: ago(2_000).toISOString() },
    ]);
  });

  it('has no row for a task queue nobody polls', () => {
    expect(workerBuilds([], now)).toEqual([]);
  });
});
