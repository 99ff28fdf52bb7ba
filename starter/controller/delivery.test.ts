import type { Observation } from '../../model/messages';
import {
  afterTakeover,
  delivered,
  isNews,
  recordDelivery,
  stableHash,
  withoutEnded,
  type DeliveryTable,
} from './delivery';
import { observation } from './testing/fakes';

const pod = (projection: unknown, overrides: Partial<Observation> = {}) => observation({ projection, ...overrides });

describe('the delivery table and the change predicate over it', () => {
  const cases: { what: string; steps: (Observation | 'takeover')[]; expected: boolean[] }[] = [
    { what: 'the first Observation of an object is sent', steps: [pod({ ip: 'a' })], expected: [true] },
    {
      what: 'the same projection again is suppressed',
      steps: [pod({ ip: 'a' }), pod({ ip: 'a' })],
      expected: [true, false],
    },
    { what: 'a changed projection is sent', steps: [pod({ ip: 'a' }), pod({ ip: 'b' })], expected: [true, true] },
    {
      what: 'key order inside the projection is not a change',
      steps: [pod({ a: 1, b: 2 }), pod({ b: 2, a: 1 })],
      expected: [true, false],
    },
    {
      what: 'a change outside the projection (deletion started, finalizer removed) is sent',
      steps: [
        pod({ ip: 'a' }),
        pod({ ip: 'a' }, { deleting: true }),
        pod({ ip: 'a' }, { deleting: true, finalizers: ['x'] }),
      ],
      expected: [true, true, true],
    },
    {
      what: 'a new incarnation (same name, new uid) is sent although its projection is equal',
      steps: [pod({ ip: 'a' }), pod({ ip: 'a' }, { uid: 'uid-2' })],
      expected: [true, true],
    },
    {
      what: 'another object with an equal projection is sent',
      steps: [pod({ ip: 'a' }), pod({ ip: 'a' }, { ref: { kind: 'Pod', namespace: 'default', name: 'db' } })],
      expected: [true, true],
    },
    {
      what: 'gone is sent once, whatever projection the watch or a repair gave it',
      steps: [pod({ ip: 'a' }, { gone: true }), pod(undefined, { gone: true })],
      expected: [true, false],
    },
    {
      what: 'gone ends the record: the incarnation seen again is sent',
      steps: [pod({ ip: 'a' }), pod({ ip: 'a' }, { gone: true }), pod({ ip: 'a' })],
      expected: [true, true, true],
    },
    {
      what: "after another starter's term every live object is sent again, but no gone",
      steps: [pod({ ip: 'a' }), pod({ ip: 'a' }, { uid: 'uid-2', gone: true }), 'takeover', pod({ ip: 'a' })],
      expected: [true, true, true],
    },
  ];

  it.each(cases)('$what', ({ steps, expected }) => {
    let table: DeliveryTable = new Map();
    const results: boolean[] = [];
    for (const step of steps) {
      if (step === 'takeover') table = afterTakeover(table, false);
      else {
        // Sent when news, and then delivered.
        results.push(isNews(table, step));
        if (results.at(-1)) recordDelivery(table, step, 1);
      }
    }
    expect(results).toEqual(expected);
  });

  it('one row per workflow and incarnation says what it was delivered, when, and to which run', () => {
    const table: DeliveryTable = new Map();
    recordDelivery(table, pod({ ip: 'a' }), 5, 'run-1');
    recordDelivery(table, pod({ ip: 'b' }), 9);
    recordDelivery(table, pod({ ip: 'a' }, { uid: 'uid-2' }), 7, 'run-2');
    expect([...table.values()].map(({ hash: _hash, ...row }) => row)).toEqual([
      { workflowId: 'pod/default/web', uid: 'uid-1', at: 9 },
      { workflowId: 'pod/default/web', uid: 'uid-2', at: 7, runId: 'run-2' },
    ]);
    expect(delivered(table, pod({ ip: 'b' }))?.at).toBe(9);
    expect(delivered(table, pod({ ip: 'a' }))).toBeUndefined();
  });

  it('after a lapse of its own a leader keeps the whole table: it sends only what changed', () => {
    const table: DeliveryTable = new Map();
    recordDelivery(table, pod({ ip: 'a' }), 1);
    expect(isNews(afterTakeover(table, true), pod({ ip: 'a' }))).toBe(false);
    expect(isNews(afterTakeover(table, false), pod({ ip: 'a' }))).toBe(true);
  });

  it('a delivered gone is remembered, whatever its projection and whoever leads, until its workflow has ended', () => {
    let table: DeliveryTable = new Map();
    recordDelivery(table, pod({ ip: 'a' }, { gone: true }), 7);
    recordDelivery(table, pod({ ip: 'a' }, { uid: 'uid-2' }), 8);
    const rechecked = pod(undefined, { gone: true });
    table = afterTakeover(
      withoutEnded(table, () => true),
      false,
    );
    expect([delivered(table, rechecked)?.at, table.size]).toEqual([7, 1]);
    table = withoutEnded(table, () => false);
    expect([delivered(table, rechecked), table.size]).toEqual([undefined, 0]);
  });

  it('hashes nested objects independently of key order, and arrays by position', () => {
    expect(stableHash({ a: { x: 1, y: [1, 2] }, b: 2 })).toBe(stableHash({ b: 2, a: { y: [1, 2], x: 1 } }));
    expect(stableHash({ a: [1, 2] })).not.toBe(stableHash({ a: [2, 1] }));
  });
});
