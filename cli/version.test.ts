import { LIVE_MS, workerBuilds } from './version';

describe('workerBuilds', () => {
  const now = new Date('2026-12-01T12:00:00Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);

  it('groups the pollers of each task queue by build, counting the workers that polled lately, once each', () => {
    const pollers = new Map([
      [
        'steward',
        [
          // One worker polls workflow and activity tasks: one worker.
          { identity: '1@a', buildId: 'steward@0.2.0+b', lastSeen: ago(5_000) },
          { identity: '1@a', buildId: 'steward@0.2.0+b', lastSeen: ago(1_000) },
          { identity: '2@b', buildId: 'steward@0.2.0+b', lastSeen: ago(30_000) },
          // A worker of the build before, stopped minutes ago: still listed by Temporal, no longer counted.
          { identity: '3@c', buildId: 'steward@0.1.0+a', lastSeen: ago(LIVE_MS + 1) },
        ],
      ],
      ['steward-peerpods', [{ identity: '1@a', lastSeen: ago(2_000) }]],
    ]);
    expect(workerBuilds(pollers, now)).toEqual([
      { taskQueue: 'steward', buildId: 'steward@0.1.0+a', workers: 0, lastSeen: ago(LIVE_MS + 1).toISOString() },
      { taskQueue: 'steward', buildId: 'steward@0.2.0+b', workers: 2, lastSeen: ago(1_000).toISOString() },
      { taskQueue: 'steward-peerpods', buildId: '(none)', workers: 1, lastSeen: ago(2_000).toISOString() },
    ]);
  });

  it('has no row for a task queue nobody polls', () => {
    expect(workerBuilds(new Map([['steward', []]]), now)).toEqual([]);
  });
});
