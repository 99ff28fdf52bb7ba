import type { Observation } from '../model/messages';
import { nextIncarnation, type LifecycleContext } from './lifecycle';

const ref = { kind: 'Pod' as const, namespace: 'default', name: 'web' };
const observed = (uid: string, gone = false, source?: string): { type: string; observation: Observation } => ({
  type: 'observed',
  observation: {
    ref,
    uid,
    generation: 1,
    deleting: gone,
    gone,
    finalizers: [],
    projection: source ? { source } : {},
  },
});
const finished = (nextIncarnationUid?: string): LifecycleContext => ({
  ref,
  uid: 'a',
  actions: [],
  ...(nextIncarnationUid ? { nextIncarnation: observed(nextIncarnationUid).observation } : {}),
});

describe('the incarnation a finished lifecycle hands to its next run', () => {
  it("is the machine's own next incarnation when nothing came after its end", () => {
    expect(nextIncarnation({ context: finished('b'), unprocessed: [] })?.uid).toBe('b');
    expect(nextIncarnation({ context: finished(), unprocessed: [] })).toBeUndefined();
  });

  it('is the newest one observed after its end: a new one, its deletion, another (seed 107: Pod default/p-2)', () => {
    // The machine ended serving a, with b next; then came b's deletion, c, and c's deletion, none stepped.
    const after = [observed('b', true), { type: 'backendChanged' }, observed('c'), observed('c'), observed('c', true)];
    expect(nextIncarnation({ context: finished('b'), unprocessed: after })).toMatchObject({ uid: 'c', gone: true });
    expect(nextIncarnation({ context: finished('b'), unprocessed: after.slice(0, 3) })).toMatchObject({
      uid: 'c',
      gone: false,
    });
    // One that came after an end with none next starts the next run.
    expect(nextIncarnation({ context: finished(), unprocessed: [observed('d')] })?.uid).toBe('d');
  });

  it('is never the incarnation it served, nor an observation of something else than its object', () => {
    const isIncarnation = (o: Observation) => (o.projection as { source?: string }).source === 'Pod';
    const after = [observed('a', true, 'Pod'), observed('p', false, 'PeerPod')];
    expect(nextIncarnation({ context: finished(), unprocessed: after }, isIncarnation)).toBeUndefined();
  });
});
