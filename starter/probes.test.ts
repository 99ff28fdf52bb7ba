import { LEASE_LOOP_STALLED_MS, starterLiveness, starterReadiness } from './probes';

describe("the starter's probes", () => {
  const startedAt = 1_000_000;

  it.each([
    ['alive before the first Lease round, for a while', undefined, startedAt + LEASE_LOOP_STALLED_MS, []],
    [
      'dead when no round ended since it started, long after',
      undefined,
      startedAt + LEASE_LOOP_STALLED_MS + 1_000,
      ['the Lease loop has not gone round for 61 s'],
    ],
    [
      'alive while the rounds fail (the API server is down: a restart would not help)',
      { at: startedAt + 100_000, leaseKnown: false },
      startedAt + 105_000,
      [],
    ],
    [
      'dead when the last round is long past',
      { at: startedAt + 100_000, leaseKnown: true },
      startedAt + 100_000 + LEASE_LOOP_STALLED_MS + 1,
      ['the Lease loop has not gone round for 60 s'],
    ],
  ] as const)('%s', (_what, leaseRound, now, expected) => {
    expect(starterLiveness({ leaseRound }, startedAt, now)).toEqual(expected);
  });

  it.each([
    ['ready once synced and the Lease read: a follower too', true, { at: 1, leaseKnown: true }, []],
    [
      'not ready before the informers listed every kind',
      false,
      { at: 1, leaseKnown: true },
      ['the informers have not listed every watched kind since their last error'],
    ],
    ['not ready before the Lease was read', true, undefined, ['the Lease has not been read yet']],
    [
      'not ready when the last Lease round failed, and says both',
      false,
      { at: 1, leaseKnown: false },
      [
        'the informers have not listed every watched kind since their last error',
        'the Lease could not be read at the last try',
      ],
    ],
  ] as const)('%s', (_what, synced, leaseRound, expected) => {
    expect(starterReadiness({ synced, leaseRound })).toEqual(expected);
  });
});
