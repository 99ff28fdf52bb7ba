import type { Observation } from '../../model/messages';
import { sleep } from '../../platform/backoff';
import { createWorkQueue, type Work, type WorkQueue } from './queue';
import { observation } from './testing/fakes';

interface Delivery {
  at: number;
  name: string;
  uid: string;
  v: number;
  gone?: boolean;
}

const obs = (name: string, v: number, extra: Partial<Observation> = {}) =>
  observation({ ref: { kind: 'Pod', namespace: 'default', name }, projection: { v }, ...extra });
/** Pod `name` changed to `{ v }` (or, `gone`, was deleted) `at` ms into the case. */
const event = (at: number, name: string, v: number, extra: Partial<Observation> = {}) => ({
  at,
  obs: obs(name, v, extra),
});

/** A work function that "sends" each pending Observation for `sendMs`, following the queue's contract. */
function recordingWork(t0: number, sendMs: number, deliveries: Delivery[]): Work {
  return async (pending, signal) => {
    for (const uid of pending.keys()) {
      for (let o = pending.get(uid); o && !signal.aborted; o = pending.get(uid)) {
        deliveries.push({
          at: Date.now() - t0,
          name: o.ref.name,
          uid,
          v: (o.projection as { v: number }).v,
          ...(o.gone ? { gone: true } : {}),
        });
        await (sendMs ? sleep(sendMs) : Promise.resolve());
        if (pending.get(uid) === o) pending.delete(uid);
      }
    }
  };
}

/**
 * The informer's cache as the queue reads it (`resolve`): a changed object is put in it and its key offered; a deleted
 * one leaves it and its gone is told, as the starter does.
 */
function cached() {
  const objects = new Map<string, Observation>();
  return {
    resolve: (_id: string, key: string) => (objects.has(key) ? [objects.get(key)!] : []),
    offerTo(queue: WorkQueue, o: Observation) {
      const id = `pod/${o.ref.name}`;
      if (o.gone) {
        objects.delete(o.ref.name);
        queue.tell(id, o);
      } else {
        objects.set(o.ref.name, o);
        queue.offer(id, o.ref.name);
      }
    },
  };
}

describe('work queue of object keys (debounce and coalescing, window 200 ms)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const cases: {
    what: string;
    sendMs?: number;
    events: { at: number; obs: Observation }[];
    expected: Omit<Delivery, 'uid'>[];
  }[] = [
    {
      what: 'one event goes out when its window closes, not before',
      events: [event(0, 'web', 1)],
      expected: [{ at: 200, name: 'web', v: 1 }],
    },
    {
      what: 'a burst of updates of one object becomes one delivery of the newest, read when it is sent',
      events: [event(0, 'web', 1), event(50, 'web', 2), event(150, 'web', 3)],
      expected: [{ at: 200, name: 'web', v: 3 }],
    },
    {
      what: 'the window is not extended by later events: an event after it closed opens a new one',
      events: [event(0, 'web', 1), event(100, 'web', 2), event(250, 'web', 3)],
      expected: [
        { at: 200, name: 'web', v: 2 },
        { at: 450, name: 'web', v: 3 },
      ],
    },
    {
      what: 'different objects have their own windows',
      events: [event(0, 'web', 1), event(100, 'db', 1)],
      expected: [
        { at: 200, name: 'web', v: 1 },
        { at: 300, name: 'db', v: 1 },
      ],
    },
    {
      what: 'an event during a send waits for it, then goes out at once with the latest',
      sendMs: 100,
      events: [event(0, 'web', 1), event(220, 'web', 2), event(250, 'web', 3)],
      expected: [
        { at: 200, name: 'web', v: 1 },
        { at: 300, name: 'web', v: 3 },
      ],
    },
    {
      what: 'a new incarnation of the same name queues behind the gone of the old one instead of replacing it',
      events: [event(0, 'web', 1, { gone: true }), event(50, 'web', 2, { uid: 'uid-2' })],
      expected: [
        { at: 200, name: 'web', v: 1, gone: true },
        { at: 200, name: 'web', v: 2 },
      ],
    },
  ];

  it.each(cases)('$what', async ({ events, expected, sendMs = 0 }) => {
    const t0 = Date.now();
    const deliveries: Delivery[] = [];
    const cache = cached();
    const work = recordingWork(t0, sendMs, deliveries);
    const queue = createWorkQueue({ debounceMs: 200, resolve: cache.resolve, isNews: () => true, work });
    for (const event of events) {
      await jest.advanceTimersByTimeAsync(event.at - (Date.now() - t0));
      cache.offerTo(queue, event.obs);
    }
    await jest.advanceTimersByTimeAsync(2_000);
    expect(deliveries.map(({ uid: _uid, ...rest }) => rest)).toEqual(expected);
    expect(queue.size()).toBe(0);
  });

  describe('a group that awaits a change sure to follow (hold 1,000 ms)', () => {
    // A gone waits for a deletion of another uid under the same name: a peer pod's Pod and its PeerPod.
    const awaits = (pending: ReadonlyMap<string, Observation>) =>
      [...pending.values()].some((o) => o.gone) && ![...pending.values()].some((o) => o.deleting);
    const run = async (events: { at: number; obs: Observation }[]) => {
      const t0 = Date.now();
      const deliveries: Delivery[] = [];
      const cache = cached();
      const work = recordingWork(t0, 0, deliveries);
      const queue = createWorkQueue({
        debounceMs: 200,
        resolve: cache.resolve,
        isNews: () => true,
        work,
        hold: { awaits, ms: 1_000 },
      });
      for (const e of events) {
        await jest.advanceTimersByTimeAsync(e.at - (Date.now() - t0));
        cache.offerTo(queue, e.obs);
      }
      await jest.advanceTimersByTimeAsync(3_000);
      expect(queue.size()).toBe(0);
      return deliveries.map((d) => `${d.at} ${d.uid}`);
    };
    const deletion = (at: number) => event(at, 'web', 2, { uid: 'peer-uid', deleting: true });

    it('waits whole windows until it comes, then sends both at once', async () => {
      expect(await run([event(0, 'web', 1, { gone: true }), deletion(500)])).toEqual(['600 uid-1', '600 peer-uid']);
    });

    it('sends what it has when the hold is over and nothing came', async () => {
      expect(await run([event(0, 'web', 1, { gone: true })])).toEqual(['1200 uid-1']);
    });

    it('holds again from the start after a send', async () => {
      expect(
        await run([
          event(0, 'web', 1, { gone: true }),
          deletion(500),
          event(1_000, 'web', 3, { uid: 'uid-3', gone: true }),
        ]),
      ).toEqual(['600 uid-1', '600 peer-uid', '2200 uid-3']);
    });
  });

  it('counts a key offered again while it waited as coalesced', async () => {
    let coalesced = 0;
    const cache = cached();
    const queue = createWorkQueue({
      debounceMs: 200,
      resolve: cache.resolve,
      isNews: () => true,
      work: recordingWork(Date.now(), 0, []),
      onCoalesced: () => coalesced++,
    });
    cache.offerTo(queue, obs('web', 1));
    cache.offerTo(queue, obs('web', 2));
    cache.offerTo(queue, obs('db', 1));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(coalesced).toBe(1);
  });

  it('sends what the workflow has not got: an object back to what was delivered is not sent again', async () => {
    const deliveries: Delivery[] = [];
    const cache = cached();
    const queue = createWorkQueue({
      debounceMs: 200,
      resolve: cache.resolve,
      // The workflow of `web` has { v: 1 } already.
      isNews: (o) => (o.projection as { v: number }).v !== 1,
      work: recordingWork(Date.now(), 0, deliveries),
    });
    cache.offerTo(queue, obs('web', 2));
    cache.offerTo(queue, obs('web', 1));
    cache.offerTo(queue, obs('db', 3));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(deliveries.map((d) => `${d.name}:${d.v}`)).toEqual(['db:3']);
    expect(queue.size()).toBe(0);
  });

  it('clear() drops what waits and aborts the work in flight; stop() then refuses new offers', async () => {
    const deliveries: Delivery[] = [];
    const signals: AbortSignal[] = [];
    const cache = cached();
    const queue = createWorkQueue({
      debounceMs: 200,
      resolve: cache.resolve,
      isNews: () => true,
      work: async (pending, signal) => {
        signals.push(signal);
        await recordingWork(0, 1_000, deliveries)(pending, signal);
      },
    });
    cache.offerTo(queue, obs('web', 1));
    await jest.advanceTimersByTimeAsync(300);
    cache.offerTo(queue, obs('db', 1));
    queue.clear();
    expect(signals[0]?.aborted).toBe(true);
    expect(queue.size()).toBe(0);
    const stopped = queue.stop();
    cache.offerTo(queue, obs('web', 2));
    await jest.advanceTimersByTimeAsync(2_000);
    await stopped;
    expect(deliveries.map((d) => `${d.name}:${d.v}`)).toEqual(['web:1']);
  });
});
