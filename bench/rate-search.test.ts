import { bracket, finding, nextRate, rateRangeArgument, SUSTAINED, verdictOf, type RateRange } from './rate-search';
import type { ChurnOutcome } from './scenarios/churn';

/** The probes of a search whose probes `sustains` answers. */
function search(range: RateRange, sustains: (rate: number) => boolean) {
  const probes: { rate: number; sustained: boolean }[] = [];
  for (let rate = nextRate(range, probes); rate !== undefined; rate = nextRate(range, probes)) {
    if (probes.length > 20) throw new Error(`no end: ${JSON.stringify(probes)}`);
    probes.push({ rate, sustained: sustains(rate) });
  }
  return probes;
}

describe('the bisection', () => {
  test.each([7, 20, 21, 31, 33, 47])(
    'finds a capacity of %i changes/s between 20 and 48 to within a tenth, in a handful of probes',
    (capacity) => {
      const probes = search({ lo: 20, hi: 48 }, (rate) => rate <= capacity);
      const { sustained, failed } = bracket(probes);
      if (capacity < 20) {
        expect(probes).toEqual([{ rate: 20, sustained: false }]);
        expect(finding({ lo: 20, hi: 48 }, probes)).toBe(
          'No rate sustained: the lowest probed, 20 changes/s, was not.',
        );
        return;
      }
      expect(probes.slice(0, 2).map((p) => p.rate)).toEqual([20, 48]);
      expect(sustained).toBeLessThanOrEqual(capacity);
      expect(failed).toBeGreaterThan(capacity);
      expect(failed! - sustained!).toBeLessThanOrEqual(Math.max(1, sustained! / 10));
      expect(probes.length).toBeLessThanOrEqual(7);
      expect(new Set(probes.map((p) => p.rate)).size).toBe(probes.length);
      expect(finding({ lo: 20, hi: 48 }, probes)).toBe(
        `The highest rate sustained: ${sustained} changes/s (${failed} was not).`,
      );
    },
  );

  test('stops at the upper bound when it is sustained', () => {
    const probes = search({ lo: 10, hi: 30 }, () => true);
    expect(probes.map((p) => p.rate)).toEqual([10, 30]);
    expect(finding({ lo: 10, hi: 30 }, probes)).toBe('At least 30 changes/s: the highest probed was sustained.');
  });

  test('stops when a noisy machine puts the results out of order, and says so', () => {
    // Within a tenth of 25 after five probes; then a rerun of the same range met 24 failing and 29 holding.
    const answers = new Map([
      [20, true],
      [40, false],
      [30, false],
      [25, true],
      [27, false],
    ]);
    const probes = search({ lo: 20, hi: 40 }, (rate) => answers.get(rate) ?? false);
    expect(probes.map((p) => p.rate)).toEqual([20, 40, 30, 25, 27]);
    expect(
      nextRate({ lo: 20, hi: 40 }, [...probes, { rate: 24, sustained: false }, { rate: 29, sustained: true }]),
    ).toBe(undefined);
    expect(
      finding({ lo: 20, hi: 40 }, [
        { rate: 20, sustained: true },
        { rate: 29, sustained: true },
        { rate: 24, sustained: false },
      ]),
    ).toBe('Out of order: 29 changes/s was sustained but 24 was not (a noisy machine); run again.');
  });
});

describe("a probe's verdict", () => {
  const kept: ChurnOutcome = { rate: 20, achieved: 20, p50: 0.4, p95: 0.9, p99: 1.6, max: 6, drain: 1.8, backlog: 0 };

  test('a churn that kept up within the SLO is sustained', () => {
    expect(verdictOf(kept)).toEqual({ sustained: true, missed: [] });
  });

  test('each limit missed is named', () => {
    expect(verdictOf({ ...kept, drain: SUSTAINED.drainSeconds + 0.5 }).missed).toEqual([
      'the last change landed 10.5 s after the last write (limit 10 s)',
    ]);
    expect(verdictOf({ ...kept, p99: 5.01 }).missed).toEqual(['p99 5.01 s (limit 5 s)']);
    expect(verdictOf({ ...kept, achieved: 18.9 }).missed).toEqual(['the driver wrote 18.9 changes/s of 20']);
    // A backlog given up on is named as such, not as a long drain.
    expect(verdictOf({ ...kept, backlog: 120, drain: 60.2, p99: 48 })).toEqual({
      sustained: false,
      missed: ['120 changes not landed 60 s after the last write', 'p99 48.00 s (limit 5 s)'],
    });
  });
});

describe('--find-rate', () => {
  test('takes <lo>:<hi>, whole changes a second, lo below hi', () => {
    expect(rateRangeArgument('10:60')).toEqual({ lo: 10, hi: 60 });
  });

  test.each([
    ['60:10', 'the lower rate (60) must be below the upper one (10).'],
    ['10:10', 'the lower rate (10) must be below the upper one (10).'],
    ['10', 'must be <lo>:<hi>, whole changes a second, e.g. 10:60.'],
    ['0:10', 'must be <lo>:<hi>, whole changes a second, e.g. 10:60.'],
    ['1.5:10', 'must be <lo>:<hi>, whole changes a second, e.g. 10:60.'],
  ])('refuses %s', (value, message) => {
    expect(() => rateRangeArgument(value)).toThrow(message);
  });
});
