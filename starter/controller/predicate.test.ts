import type { Observation } from '../../model/messages';
import { createChangePredicate, stableHash } from './predicate';
import { observation } from './testing/fakes';

const pod = (projection: unknown, overrides: Partial<Observation> = {}) => observation({ projection, ...overrides });

describe('change predicate', () => {
  const cases: { what: string; steps: (Observation | 'reset')[]; expected: boolean[] }[] = [
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
      what: 'gone is always sent, even twice',
      steps: [pod({ ip: 'a' }, { gone: true }), pod({ ip: 'a' }, { gone: true })],
      expected: [true, true],
    },
    {
      what: 'gone ends the record: the incarnation seen again is sent',
      steps: [pod({ ip: 'a' }), pod({ ip: 'a' }, { gone: true }), pod({ ip: 'a' })],
      expected: [true, true, true],
    },
    {
      what: 'after a reset (leadership changed) everything is sent again',
      steps: [pod({ ip: 'a' }), 'reset', pod({ ip: 'a' })],
      expected: [true, true],
    },
  ];

  it.each(cases)('$what', ({ steps, expected }) => {
    const predicate = createChangePredicate();
    const results: boolean[] = [];
    for (const step of steps) {
      if (step === 'reset') predicate.reset();
      else results.push(predicate.accept(step));
    }
    expect(results).toEqual(expected);
  });

  it('forgets one incarnation so its next Observation is sent (after a permanent send failure)', () => {
    const predicate = createChangePredicate();
    const obs = pod({ ip: 'a' });
    const other = pod({ ip: 'a' }, { uid: 'uid-2' });
    predicate.accept(obs);
    predicate.accept(other);
    predicate.forget(obs);
    expect([predicate.accept(obs), predicate.accept(other)]).toEqual([true, false]);
  });

  it('a re-list lets through again what was let through but never confirmed as delivered, and only that', () => {
    const predicate = createChangePredicate(() => 42);
    const delivered = pod({ ip: 'a' });
    const dropped = pod({ ip: 'a' }, { uid: 'uid-2' });
    predicate.accept(delivered);
    predicate.accept(dropped);
    predicate.confirm(delivered);
    expect([predicate.confirmedAt(delivered), predicate.confirmedAt(dropped), predicate.unconfirmed()]).toEqual([
      42,
      undefined,
      1,
    ]);
    predicate.forgetUnconfirmed();
    expect([predicate.accept(delivered), predicate.accept(dropped)]).toEqual([false, true]);
  });

  it('a confirmation of an older Observation does not confirm the newer one let through since', () => {
    const predicate = createChangePredicate();
    const older = pod({ ip: 'a' });
    const newer = pod({ ip: 'b' });
    predicate.accept(older);
    predicate.accept(newer);
    predicate.confirm(older);
    expect(predicate.confirmedAt(newer)).toBeUndefined();
    predicate.forgetUnconfirmed();
    expect(predicate.accept(newer)).toBe(true);
  });

  it('a delivered gone is remembered, whatever its projection and whoever leads, until its workflow has ended', () => {
    const predicate = createChangePredicate(() => 7);
    const watched = pod({ ip: 'a' }, { gone: true });
    const rechecked = pod(undefined, { gone: true });
    const undelivered = pod({ ip: 'a' }, { gone: true, uid: 'uid-2' });
    predicate.accept(watched);
    predicate.accept(undelivered);
    predicate.confirm(watched);
    expect([predicate.confirmedAt(rechecked), predicate.confirmedAt(undelivered)]).toEqual([7, undefined]);
    predicate.forgetEnded(() => true);
    predicate.reset();
    expect(predicate.confirmedAt(rechecked)).toBe(7);
    predicate.forgetEnded(() => false);
    expect([predicate.confirmedAt(rechecked), predicate.size()]).toEqual([undefined, 0]);
  });

  it('hashes nested objects independently of key order, and arrays by position', () => {
    expect(stableHash({ a: { x: 1, y: [1, 2] }, b: 2 })).toBe(stableHash({ b: 2, a: { y: [1, 2], x: 1 } }));
    expect(stableHash({ a: [1, 2] })).not.toBe(stableHash({ a: [2, 1] }));
  });
});
