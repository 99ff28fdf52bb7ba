import { initialTransition, transition } from 'xstate';
import type { PushedResource } from '../../activities/midonet/push';
import type { Observation } from '../messages';
import { exploreTransitions } from './testing/explore';
import { translationMachine, type TranslationEvent, type TranslationProjection } from './translation';

const ref = { kind: 'Translation' as const, namespace: 'default', name: 'pod.4.web' };
const at = '2026-01-01T00:00:00.000Z';
const resource = { kind: 'Bridge', parent: '', body: '{"id":"b1"}' };
const pushedResource: PushedResource = { ...resource, key: 'Bridge:b1', id: 'b1', state: 'synced' };
const request = { requestedBy: 'alice', reason: 'test' };

const observation = (overrides: Partial<Observation<TranslationProjection>> = {}): Observation<TranslationProjection> => ({
  ref,
  uid: 'u1',
  generation: 1,
  deleting: false,
  gone: false,
  finalizers: ['midonet.org/deleter'],
  projection: { resources: [resource] },
  ...overrides,
});

/** One sample of every event the machine knows, with the variations that lead to different transitions. */
const events: TranslationEvent[] = [
  { type: 'observed', observation: observation(), at },
  { type: 'observed', observation: observation({ generation: 2, projection: { resources: [resource, { ...resource, body: '{"id":"b2"}' }] } }), at },
  { type: 'observed', observation: observation({ deleting: true }), at },
  { type: 'observed', observation: observation({ deleting: true, finalizers: [] }), at },
  { type: 'observed', observation: observation({ gone: true, deleting: true, finalizers: [] }), at },
  { type: 'observed', observation: observation({ uid: 'u2' }), at },
  { type: 'pushed', pushed: [pushedResource], removed: [], at },
  { type: 'backendDeleted', removed: [pushedResource], at },
  { type: 'released', at },
  { type: 'statusRecorded', at },
  { type: 'actionFailed', action: 'push', reason: 'MidonetUnavailable', message: 'down', at },
  { type: 'retry', at },
  { type: 'driftCheck', at },
  { type: 'cleanup', request: { ...request, mode: 'retry' }, at },
  { type: 'cleanup', request: { ...request, mode: 'orphan' }, at },
  { type: 'cleanup', request: { ...request, mode: 'force' }, at },
  { type: 'pause', request, at },
  { type: 'resume', request, at },
  { type: 'refresh', request, at },
  { type: 'resumed', at },
];

type Snapshot = ReturnType<typeof initialTransition<typeof translationMachine>>[0];

/** States are told apart by their value and the facts guards read, not by growing lists (actions, records). */
const serializeState = (s: Snapshot) => {
  const c = s.context;
  return JSON.stringify([s.value, c.uid, c.generation, c.pushedGeneration, c.inFlightGeneration, c.deleting, c.finalizerPresent, c.gone, c.resumeTo, c.force, c.pushed.length, c.orphaned.length > 0, !!c.nextIncarnation]);
};

const allStates = Object.keys(translationMachine.root.states);

const edges = exploreTransitions(translationMachine, { ref }, events, (s) => serializeState(s as Snapshot)) as { from: Snapshot; event: TranslationEvent; to: Snapshot }[];
const value = (s: Snapshot) => String(s.value);

describe('Translation machine: every transition', () => {
  it('reaches every state it declares (transient deciding/resuming states are passed through)', () => {
    const reached = new Set(edges.map((e) => value(e.to)));
    expect([...reached].sort()).toEqual(allStates.filter((s) => s !== 'deciding' && s !== 'resuming').sort());
    expect(edges.length).toBeGreaterThan(200);
  });

  it('never finishes by releasing the finalizer while resources it pushed are still in MidoNet', () => {
    const leaks = edges.filter((e) => value(e.to) === 'done' && e.event.type === 'released' && e.from.context.pushed.length > 0);
    expect(leaks.map((e) => `${serializeState(e.from)} --released-->`)).toEqual([]);
  });

  it('starts releasing the finalizer only after the backend was deleted, or an operator orphaned it', () => {
    const entries = edges.filter((e) => value(e.to) === 'releasing' && value(e.from) !== 'releasing');
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(e.to.context.pushed).toEqual([]);
  });

  it('records every operator action it accepts, with who asked and why', () => {
    for (const e of edges.filter((e) => ['cleanup', 'pause', 'resume', 'refresh'].includes(e.event.type))) {
      const grew = e.to.context.actions.length - e.from.context.actions.length;
      const stayed = value(e.to) === value(e.from) && e.to.context === e.from.context;
      expect(grew === 1 || stayed || grew === 0).toBe(true);
      if (grew === 1) expect(e.to.context.actions.at(-1)).toMatchObject({ action: e.event.type, requestedBy: 'alice', reason: 'test', at });
    }
  });

  it('a change or deletion observed during a push is acted on after it: never synced with an unpushed generation or a pending deletion', () => {
    const settled = edges.filter((e) => value(e.to) === 'synced');
    for (const e of settled) {
      expect({ state: serializeState(e.to), unpushed: e.to.context.generation !== e.to.context.pushedGeneration || (e.to.context.deleting && e.to.context.finalizerPresent) }).toEqual({
        state: serializeState(e.to),
        unpushed: false,
      });
    }
  });

  it('while pushing, deleting or releasing, an operator pause never loses the result of the running step', () => {
    const afterPause = edges.filter((e) => value(e.from) === 'paused' && ['pushed', 'backendDeleted'].includes(e.event.type));
    expect(afterPause.length).toBeGreaterThan(0);
    for (const e of afterPause) expect(e.to.context).not.toBe(e.from.context);
  });
});

/** Runs events from the start and returns the final snapshot and the action types of the last step. */
function run(...sequence: TranslationEvent[]) {
  let [snapshot, actions] = initialTransition(translationMachine, { ref });
  for (const event of sequence) [snapshot, actions] = transition(translationMachine, snapshot, event);
  return { state: String(snapshot.value), context: snapshot.context, actions: actions.map((a) => a.type) };
}
const [observed, , deletingObserved, , , otherIncarnation, pushed, backendDeleted, released, statusRecorded, failed, retry, driftCheck] = events as [TranslationEvent, ...TranslationEvent[]];
const cleanup = (mode: 'retry' | 'orphan' | 'force'): TranslationEvent => ({ type: 'cleanup', request: { ...request, mode }, at });
const pause: TranslationEvent = { type: 'pause', request, at };
const resume: TranslationEvent = { type: 'resume', request, at };

describe('Translation machine: scenarios', () => {
  it.each([
    ['a first observation pushes the resources', [observed], 'pushing', ['push']],
    ['a successful push records status, then waits in synced with a drift timer', [observed, pushed!, statusRecorded!], 'synced', ['startTimer']],
    ['the drift timer re-pushes (ensure repairs drift)', [observed, pushed!, statusRecorded!, driftCheck!], 'pushing', ['cancelTimer', 'push']],
    ['deletion with our finalizer deletes the backend in reverse order', [observed, pushed!, statusRecorded!, deletingObserved!], 'deleting', ['cancelTimer', 'deleteBackend']],
    ['after the backend is gone the finalizer is released', [observed, pushed!, statusRecorded!, deletingObserved!, backendDeleted!], 'releasing', ['releaseFinalizer']],
    ['release ends the lifecycle', [observed, pushed!, statusRecorded!, deletingObserved!, backendDeleted!, released!], 'done', []],
    ['a failed push parks the machine in stuck with a retry timer and a Warning', [observed, failed!], 'stuck', ['recordStatus', 'startTimer']],
    ['the stuck timer retries the step that failed', [observed, failed!, retry!], 'pushing', ['cancelTimer', 'push']],
    ['cleanup retry retries at once', [observed, failed!, cleanup('retry')], 'pushing', ['cancelTimer', 'push']],
    ['cleanup orphan releases the finalizer and keeps the record of what stays', [observed, pushed!, statusRecorded!, deletingObserved!, failed!, cleanup('orphan')], 'releasing', ['cancelTimer', 'releaseFinalizer']],
    ['cleanup force deletes ignoring refusals', [observed, pushed!, statusRecorded!, deletingObserved!, failed!, cleanup('force')], 'deleting', ['cancelTimer', 'deleteBackend']],
    ['a pause during a push keeps the push result', [observed, pause, pushed!], 'paused', []],
    ['resume after such a pause pushes again (idempotent)', [observed, pause, pushed!, resume], 'pushing', ['push']],
    ['a new incarnation waits while the old one is pushed', [observed, otherIncarnation!], 'pushing', []],
  ] as const)('%s', (_, sequence, state, actions) => {
    const result = run(...(sequence as unknown as TranslationEvent[]));
    expect(result.state).toBe(state);
    expect(result.actions).toEqual(actions);
  });

  it('orphaning keeps the resources recorded as orphaned, not pushed', () => {
    const { context } = run(observed, pushed!, statusRecorded!, deletingObserved!, failed!, cleanup('orphan'));
    expect(context.orphaned.map((r) => r.id)).toEqual(['b1']);
    expect(context.pushed).toEqual([]);
  });

  it('the next incarnation is kept for when this one is finalized', () => {
    const { context } = run(observed, otherIncarnation!);
    expect(context.uid).toBe('u1');
    expect(context.nextIncarnation?.uid).toBe('u2');
  });

  it('refuses, by having no transition, what the state does not allow (the update validators rely on it)', () => {
    const advance = (...sequence: TranslationEvent[]) =>
      sequence.reduce((snapshot, event) => transition(translationMachine, snapshot, event)[0], initialTransition(translationMachine, { ref })[0]);
    const synced = advance(observed, pushed!, statusRecorded!);
    expect(String(synced.value)).toBe('synced');
    expect(synced.can(cleanup('orphan'))).toBe(false);
    expect(synced.can(resume)).toBe(false);
    expect(synced.can({ type: 'refresh', request, at })).toBe(true);
    const stuck = advance(observed, failed!);
    expect(String(stuck.value)).toBe('stuck');
    expect(stuck.can(cleanup('orphan'))).toBe(true);
  });
});
