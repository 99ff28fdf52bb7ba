import { ATTEMPT_SETTLE_MS, LOCAL_WAIT_MS, nextFence, openFence, settlesLater, unsettledUntil } from './fence';
import { objectOptions } from '../workflows/activities';
import { transportDefaults } from '../activities/midonet/http';

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

describe("the fence's window", () => {
  // The timeouts are read where they are used: one changed there without the window fails here.
  it("covers a local attempt's run, its last exchange and MidoNet's late writes", () => {
    const run = objectOptions.startToCloseTimeout;
    const exchange = transportDefaults.timeoutMs;
    const late = transportDefaults.lateWriteMs(exchange);
    expect(typeof run).toBe('number');
    expect(ATTEMPT_SETTLE_MS).toBeGreaterThanOrEqual(run + exchange + late);
    expect(openFence('a', Date.parse('2026-11-27T12:00:00Z'))).toEqual({
      attempt: 'a',
      until: new Date(Date.parse('2026-11-27T12:00:00Z') + run + exchange + late).toISOString(),
    });
  });

  it('leaves to the workflow a wait longer than a local activity should do', () => {
    const now = Date.parse('2026-11-27T12:00:00Z');
    expect(settlesLater(new Date(now + LOCAL_WAIT_MS + 1).toISOString(), now)).toBe(true);
    expect(settlesLater(new Date(now + LOCAL_WAIT_MS).toISOString(), now)).toBe(false);
    expect(settlesLater(undefined, now)).toBe(false);
  });
});
