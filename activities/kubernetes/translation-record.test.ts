import { nextFence, unsettledUntil } from './translation-record';

describe("a Translation's fence (status.unsettledWrites)", () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1_000).toISOString();

  it('adds and removes an attempt, and forgets the entries whose time has passed', () => {
    const current = [
      { attempt: 'old', until: at(-1) },
      { attempt: 'lost', until: at(30) },
    ];
    expect(nextFence(current, { add: { attempt: 'mine', until: at(50) } }, now)).toEqual([
      { attempt: 'lost', until: at(30) },
      { attempt: 'mine', until: at(50) },
    ]);
    expect(nextFence(current, { remove: 'lost' }, now)).toEqual([]);
    expect(nextFence(undefined, undefined, now)).toEqual([]);
  });

  it('says until when the latest one lasts, or nothing when all have passed', () => {
    expect(
      unsettledUntil(
        [
          { attempt: 'a', until: at(10) },
          { attempt: 'b', until: at(40) },
        ],
        now,
      ),
    ).toBe(at(40));
    expect(unsettledUntil([{ attempt: 'a', until: at(-5) }], now)).toBeUndefined();
    expect(unsettledUntil(undefined, now)).toBeUndefined();
  });
});
