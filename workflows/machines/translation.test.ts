import { initialTransition, transition } from 'xstate';
import type { PushedResource } from '../../model/translation/types';
import type { Observation } from '../../model/messages';
import {
  expectGivingUpOnlyWhenEnding,
  expectOperatorActionsRecorded,
  machineEdges,
  scenarioRunner,
  timerAndOperatorEvents,
} from './testing/lifecycle-machine';
import { translationLifecycleMachine, translationMachine, type TranslationMachineEvent } from './translation';
import type { TranslationProjection } from '../../model/translation/types';

const ref = { kind: 'Translation' as const, namespace: 'default', name: 'pod.4.web' };
const at = '2026-01-01T00:00:00.000Z';
const resource = { kind: 'Bridge' as const, parent: '', body: '{"id":"b1"}' };
const pushedResource: PushedResource = { ...resource, key: 'Bridge:b1', id: 'b1', state: 'synced' };
const request = { requestedBy: 'alice', reason: 'test' };

const observation = (
  overrides: Partial<Observation<TranslationProjection>> = {},
): Observation<TranslationProjection> => ({
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
const events: TranslationMachineEvent[] = [
  { type: 'observed', observation: observation(), at },
  {
    type: 'observed',
    observation: observation({
      generation: 2,
      projection: { resources: [resource, { ...resource, body: '{"id":"b2"}' }] },
    }),
    at,
  },
  { type: 'observed', observation: observation({ deleting: true }), at },
  { type: 'observed', observation: observation({ deleting: true, finalizers: [] }), at },
  { type: 'observed', observation: observation({ gone: true, deleting: true, finalizers: [] }), at },
  { type: 'observed', observation: observation({ uid: 'u2' }), at },
  { type: 'observed', observation: observation({ finalizers: [] }), at },
  { type: 'finalizerAdded', added: true, at },
  { type: 'finalizerAdded', added: false, reason: 'Deleting', at },
  { type: 'finalizerAdded', added: false, reason: 'NotFound', at },
  {
    type: 'actionFailed',
    action: 'push',
    reason: 'InvalidTranslation',
    message: 'resources[1] (Vtep) kind: unknown kind',
    at,
  },
  { type: 'pushed', pushed: [pushedResource], removed: [], at },
  { type: 'backendDeleted', removed: [pushedResource], at },
  { type: 'released', at },
  { type: 'eventRecorded', at },
  { type: 'actionFailed', action: 'push', reason: 'MidonetUnavailable', message: 'down', at },
  { type: 'abandoned', action: 'push', at },
  ...timerAndOperatorEvents(at, request, ['retry', 'orphan', 'force']),
  { type: 'backendChanged', notice: { by: 'translation/default/node.4.n1', ids: ['b0'] }, at }, // A failed push that says how far it got.
  {
    type: 'actionFailed',
    action: 'push',
    reason: 'MidonetUnavailable',
    message: 'down',
    outcome: { made: ['Bridge:b1'], foreign: [], maybe: [] },
    at,
  },
  // A push by reference lost with its worker.
  {
    type: 'actionFailed',
    action: 'push',
    reason: 'TimeoutFailure',
    message: 'heartbeat timeout',
    lostPush: { done: 2, foreign: [1], writing: true, generation: 1 },
    at,
  },
];

type Snapshot = ReturnType<typeof initialTransition<typeof translationMachine>>[0];

/** States are told apart by their value and the facts guards read, not by growing lists (actions, records). */
const serializeState = (s: Snapshot) => {
  const c = s.context;
  return JSON.stringify([
    s.value,
    c.uid,
    c.generation,
    c.pushedGeneration,
    // What the claimsAnother guard reads, not the number: the generations would multiply the states.
    (c.claimedGeneration ?? c.pushedGeneration) === c.generation
      ? 'same'
      : (c.claimedGeneration ?? c.pushedGeneration) < 0
        ? 'none'
        : 'other',
    c.inFlightGeneration,
    c.deleting,
    c.finalizerPresent,
    c.gone,
    c.resumeTo,
    c.force,
    c.pushed.length,
    c.orphaned.length > 0,
    !!c.nextIncarnation,
    c.invalidGeneration,
    c.backendChanged,
  ]);
};

const allStates = Object.keys(translationMachine.root.states);

const edges = machineEdges(translationMachine, { ref }, events, serializeState);
const value = (s: Snapshot) => String(s.value);

describe('Translation machine: every transition', () => {
  it('reaches every state it declares (transient deciding/resuming/givingUp/startingPush states are passed through)', () => {
    const reached = new Set(edges.map((e) => value(e.to)));
    const transient = ['deciding', 'resuming', 'givingUp', 'startingPush'];
    expect([...reached].sort()).toEqual(allStates.filter((s) => !transient.includes(s)).sort());
    expect(edges.length).toBeGreaterThan(200);
  });

  it('never finishes by releasing the finalizer while resources it pushed are still in MidoNet', () => {
    const leaks = edges.filter(
      (e) => value(e.to) === 'done' && e.event.type === 'released' && e.from.context.pushed.length > 0,
    );
    expect(leaks.map((e) => `${serializeState(e.from)} --released-->`)).toEqual([]);
  });

  it('starts releasing the finalizer only after the backend was deleted, or an operator orphaned it', () => {
    const entries = edges.filter((e) => value(e.to) === 'releasing' && value(e.from) !== 'releasing');
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) expect(e.to.context.pushed).toEqual([]);
  });

  it('records every operator action it accepts, with who asked and why', () => {
    expectOperatorActionsRecorded(edges, { requestedBy: 'alice', reason: 'test', at });
  });

  it('gives up (orphan, force) only a lifecycle whose object is on its way out, or when told even if live', () => {
    expectGivingUpOnlyWhenEnding(edges, (c) => c.deleting || c.gone);
  });

  it('a change or deletion observed during a push is acted on after it: never synced with an unpushed generation or a pending deletion', () => {
    const settled = edges.filter((e) => value(e.to) === 'synced');
    for (const e of settled) {
      expect({
        state: serializeState(e.to),
        unpushed:
          e.to.context.generation !== e.to.context.pushedGeneration ||
          e.to.context.backendChanged === true ||
          (e.to.context.deleting && e.to.context.finalizerPresent),
      }).toEqual({
        state: serializeState(e.to),
        unpushed: false,
      });
    }
  });

  it('never starts a push of a Translation our finalizer does not hold, so nothing pushed can outlive its record', () => {
    const pushes = edges.filter((e) => value(e.to) === 'pushing' && value(e.from) !== 'pushing');
    expect(pushes.length).toBeGreaterThan(0);
    expect(
      pushes.filter((e) => !e.to.context.finalizerPresent).map((e) => `${serializeState(e.from)} --${e.event.type}-->`),
    ).toEqual([]);
  });

  it('Ready never names a generation MidoNet may not hold: a push starts only once no other generation is claimed, and a report names the one pushed', () => {
    const pushes = edges.filter((e) => value(e.to) === 'pushing' && value(e.from) !== 'pushing');
    const claims = (e: (typeof edges)[number]) => {
      const c = e.to.context;
      const claimed = c.claimedGeneration ?? c.pushedGeneration;
      return claimed >= 0 && claimed !== c.generation;
    };
    expect(pushes.filter(claims).map((e) => `${serializeState(e.from)} --${e.event.type}-->`)).toEqual([]);
    // The push reports on the Translation itself (activities/midonet/push.ts), naming the generation it pushed.
    const reports = edges.filter((e) => e.event.type === 'pushed' && e.to.context !== e.from.context);
    expect(new Set(reports.map((e) => value(e.from)))).toEqual(new Set(['pushing', 'abandoningPush', 'paused']));
    for (const e of reports) expect(e.to.context.claimedGeneration).toBe(e.to.context.pushedGeneration);
  });

  it('a deletion observed while pushing calls the push off and is acted on once it stopped, whatever its outcome', () => {
    const calledOff = edges.filter((e) => value(e.from) === 'pushing' && value(e.to) === 'abandoningPush');
    expect(calledOff.length).toBeGreaterThan(0);
    for (const e of calledOff) expect(e.to.context.deleting || e.to.context.gone).toBe(true);
    // What it takes in meanwhile (a change, MidoNet's news) keeps it waiting for the push to stop.
    const stopped = edges.filter(
      (e) => value(e.from) === 'abandoningPush' && !['paused', 'abandoningPush'].includes(value(e.to)),
    );
    expect(new Set(stopped.map((e) => e.event.type))).toEqual(new Set(['abandoned', 'pushed', 'actionFailed']));
    for (const e of stopped) expect(['deleting', 'done']).toContain(value(e.to));
  });

  it('an invalid Translation is never retried by a timer: only a change, a refresh or its deletion moves it on', () => {
    const leaving = edges.filter(
      (e) => value(e.from) === 'invalid' && value(e.to) !== 'invalid' && value(e.to) !== 'paused',
    );
    expect(leaving.length).toBeGreaterThan(0);
    for (const e of leaving) expect(['observed', 'refresh']).toContain(e.event.type);
  });

  it('while pushing, deleting or releasing, an operator pause never loses the result of the running step', () => {
    const afterPause = edges.filter(
      (e) => value(e.from) === 'paused' && ['pushed', 'backendDeleted'].includes(e.event.type),
    );
    expect(afterPause.length).toBeGreaterThan(0);
    for (const e of afterPause) expect(e.to.context).not.toBe(e.from.context);
  });
});

/** Runs events from the start and returns the final snapshot and the action types of the last step. */
const run = scenarioRunner(translationMachine, { ref }, (a) => a.type);
const [
  observed,
  changed,
  deletingObserved,
  ,
  ,
  otherIncarnation,
  withoutFinalizer,
  finalizerAdded,
  refusedDeleting,
  ,
  invalidFailed,
  pushed,
  backendDeleted,
  released,
  eventRecorded,
  failed,
  ,
  retry,
  driftCheck,
] = events as [TranslationMachineEvent, ...TranslationMachineEvent[]];
const cleanup = (mode: 'retry' | 'orphan' | 'force', evenIfLive?: true): TranslationMachineEvent => ({
  type: 'cleanup',
  request: { ...request, mode, ...(evenIfLive ? { evenIfLive } : {}) },
  at,
});
const pause: TranslationMachineEvent = { type: 'pause', request, at };
const backendChanged = events.find((e) => e.type === 'backendChanged')!;
const abandoned = events.find((e) => e.type === 'abandoned')!;
const resume: TranslationMachineEvent = { type: 'resume', request, at };

describe('Translation machine: scenarios', () => {
  it.each([
    ['a first observation pushes the resources', [observed], 'pushing', ['push']],
    [
      'a successful push records status, then waits in synced with a drift timer',
      [observed, pushed!],
      'synced',
      ['startTimer'],
    ],
    [
      'the drift timer re-pushes (ensure repairs drift)',
      [observed, pushed!, driftCheck!],
      'pushing',
      ['cancelTimer', 'push'],
    ],
    [
      'deletion with our finalizer deletes the backend in reverse order',
      [observed, pushed!, deletingObserved!],
      'deleting',
      ['cancelTimer', 'deleteBackend'],
    ],
    [
      'after the backend is gone the finalizer is released',
      [observed, pushed!, deletingObserved!, backendDeleted!],
      'releasing',
      ['releaseFinalizer'],
    ],
    ['release ends the lifecycle', [observed, pushed!, deletingObserved!, backendDeleted!, released!], 'done', []],
    [
      'a failed push parks the machine in stuck with a retry timer and a Warning',
      [observed, failed!],
      'stuck',
      ['recordStatus', 'startTimer'],
    ],
    ['the stuck timer retries the step that failed', [observed, failed!, retry!], 'pushing', ['cancelTimer', 'push']],
    [
      'a stuck Translation acts on its deletion at once, not on its timer',
      [observed, failed!, deletingObserved!],
      'deleting',
      ['cancelTimer', 'deleteBackend'],
    ],
    ['cleanup retry retries at once', [observed, failed!, cleanup('retry')], 'pushing', ['cancelTimer', 'push']],
    [
      'cleanup orphan releases the finalizer and keeps the record of what stays',
      [observed, pushed!, deletingObserved!, failed!, cleanup('orphan')],
      'releasing',
      ['cancelTimer', 'releaseFinalizer'],
    ],
    [
      'cleanup force deletes ignoring refusals',
      [observed, pushed!, deletingObserved!, failed!, cleanup('force')],
      'deleting',
      ['cancelTimer', 'deleteBackend'],
    ],
    [
      "a pause during a push keeps the push result, and says paused again over the push's report",
      [observed, pause, pushed!],
      'paused',
      ['recordStatus'],
    ],
    ['resume after such a pause pushes again (idempotent)', [observed, pause, pushed!, resume], 'pushing', ['push']],
    ['a new incarnation waits while the old one is pushed', [observed, otherIncarnation!], 'pushing', []],
    [
      'a new incarnation proves the old one gone (its deletion unseen): the old lifecycle ends, the new one is served next',
      [observed, pushed!, otherIncarnation!],
      'done',
      ['cancelTimer'],
    ],
    [
      'a Translation written without our finalizer (by hand) gets it before anything is pushed',
      [withoutFinalizer!],
      'addingFinalizer',
      ['addFinalizer'],
    ],
    ['once the finalizer holds it, it is pushed', [withoutFinalizer!, finalizerAdded!], 'pushing', ['push']],
    [
      'one deleted before the finalizer could be added ends: nothing was pushed',
      [withoutFinalizer!, refusedDeleting!],
      'done',
      [],
    ],
    [
      'a Translation refused whole waits in invalid with a Warning, no retry timer',
      [observed, invalidFailed!],
      'invalid',
      ['recordStatus'],
    ],
    [
      'a change of an invalid Translation is pushed again',
      [observed, invalidFailed!, eventRecorded!, changed!],
      'pushing',
      ['push'],
    ],
    [
      'deleting an invalid Translation deletes what was pushed and releases',
      [observed, invalidFailed!, eventRecorded!, deletingObserved!],
      'deleting',
      ['deleteBackend'],
    ],
    [
      'resources it names changed in MidoNet under a synced Translation: it is pushed again',
      [observed, pushed!, backendChanged],
      'pushing',
      ['cancelTimer', 'push'],
    ],
    [
      'a change in MidoNet during a push is pushed again after it',
      [observed, backendChanged, pushed!],
      'pushing',
      ['push'],
    ],
    [
      'a change in MidoNet before the push started is covered by that push',
      [backendChanged, observed, pushed!],
      'synced',
      ['startTimer'],
    ],
    [
      'a stuck Translation retries at once when what it names changed in MidoNet',
      [observed, failed!, backendChanged],
      'pushing',
      ['cancelTimer', 'push'],
    ],
    [
      'a deletion observed during a push calls it off (it may be retrying on a parent that never comes)',
      [observed, deletingObserved!],
      'abandoningPush',
      ['abandon'],
    ],
    [
      'once the push called off has stopped, the deletion goes on',
      [observed, deletingObserved!, abandoned],
      'deleting',
      ['deleteBackend'],
    ],
    [
      'a push that failed before it stopped: the deletion goes on, not stuck',
      [observed, deletingObserved!, failed!],
      'deleting',
      ['deleteBackend'],
    ],
    [
      'a push that ended before it stopped: what it pushed is recorded and deleted',
      [observed, deletingObserved!, pushed!],
      'deleting',
      ['deleteBackend'],
    ],
    [
      'a change of a synced Translation: Ready is withdrawn before MidoNet is changed',
      [observed, pushed!, changed!],
      'withdrawingClaim',
      ['cancelTimer', 'recordStatus'],
    ],
    ['once withdrawn, the change is pushed', [observed, pushed!, changed!, eventRecorded!], 'pushing', ['push']],
    [
      'a deletion observed while Ready is withdrawn is acted on instead of the push',
      [observed, pushed!, changed!, deletingObserved!, eventRecorded!],
      'deleting',
      ['deleteBackend'],
    ],
    [
      'a drift check pushes the generation Ready names: nothing to withdraw',
      [observed, pushed!, driftCheck!],
      'pushing',
      ['cancelTimer', 'push'],
    ],
    [
      'Ready not written (the API server fails): nothing is pushed while it may name another generation',
      [observed, pushed!, changed!, failed!],
      'stuck',
      ['recordStatus', 'startTimer'],
    ],
    [
      'an invalid Translation stays refused whatever changes in MidoNet',
      [observed, invalidFailed!, eventRecorded!, backendChanged],
      'invalid',
      [],
    ],
  ] as const)('%s', (_, sequence, state, actions) => {
    const result = run(...(sequence as unknown as TranslationMachineEvent[]));
    expect(result.state).toBe(state);
    expect(result.actions).toEqual(actions);
  });

  it('a pause writes a paused status (who and why; Ready as MidoNet holds it), once, even across a continue-as-new', () => {
    const withParams = scenarioRunner(translationMachine, { ref }, (a) => ({
      type: a.type,
      params: a.params,
    }));
    const paused = (...sequence: TranslationMachineEvent[]) =>
      withParams(...sequence).actions.find((a) => a.type === 'recordStatus')?.params;
    expect(paused(observed, pushed!, pause)).toMatchObject({
      state: 'paused',
      readyWhilePaused: true,
      eventReason: 'Paused',
      eventMessage: 'paused by alice (test): changes and deletion wait for steward resume',
    });
    // Paused before anything was pushed: Ready says so.
    expect(paused(observed, pause)).toMatchObject({ state: 'paused', readyWhilePaused: false });
    expect(withParams(observed, pushed!, pause, { type: 'resumed', at }).actions).toEqual([]);
  });

  it('the push is asked to report the generation it pushes, and Ready is claimed for the one it pushed: not one observed during the push; one read by reference is the one read', () => {
    const withParams = scenarioRunner(translationMachine, { ref }, (a) => ({ type: a.type, params: a.params }));
    const push = (...sequence: TranslationMachineEvent[]) =>
      withParams(...sequence).actions.find((a) => a.type === 'push')?.params;
    expect(push(observed)).toMatchObject({
      generation: 1,
      reference: { ref, readResources: false, readRecord: false },
    });
    expect(run(observed, changed!, pushed!).context).toMatchObject({
      pushedGeneration: 1,
      claimedGeneration: 1,
    });
    const readAt3 = { ...(pushed as Extract<TranslationMachineEvent, { type: 'pushed' }>), generation: 3 };
    expect(run(observed, readAt3).context).toMatchObject({ pushedGeneration: 3, claimedGeneration: 3 });
    // The change observed meanwhile is pushed next, Ready withdrawn first (it names generation 1).
    const next = withParams(observed, changed!, pushed!).actions;
    expect(next.find((a) => a.type === 'recordStatus')?.params).toMatchObject({ state: 'pushing', generation: 1 });
  });

  it('every status it writes names the incarnation it is about: one made since under the name is not written over', () => {
    const withParams = scenarioRunner(translationMachine, { ref }, (a) => ({ type: a.type, params: a.params }));
    const statuses = (...sequence: TranslationMachineEvent[]) =>
      withParams(...sequence).actions.filter((a) => a.type === 'recordStatus');
    for (const sequence of [
      [observed, failed!],
      [observed, pushed!, pause],
      [observed, changed!, pushed!],
    ]) {
      const written = statuses(...sequence);
      expect(written).not.toHaveLength(0);
      for (const status of written) expect(status.params).toMatchObject({ uid: 'u1' });
    }
  });

  it('a stuck lifecycle retries after stuckRetryMs, doubled with each failure in a row up to 16 times it, jittered; a success starts over', () => {
    const withParams = scenarioRunner(translationMachine, { ref }, (a) => ({
      type: a.type,
      params: a.params,
    }));
    const delayAfter = (...sequence: TranslationMachineEvent[]) =>
      withParams(...sequence).actions.find((a) => a.type === 'startTimer')?.params as {
        delayMs: number;
        jitter: number;
      };
    const stuckAgain = (n: number) => Array.from({ length: n }, () => [retry!, failed!]).flat();
    const delays = [0, 1, 2, 3, 4, 5, 8].map((n) => delayAfter(observed, failed!, ...stuckAgain(n)));
    expect(delays.map((d) => d.delayMs / 60_000)).toEqual([1, 2, 4, 8, 16, 16, 16]);
    expect(delays[0]!.jitter).toBe(0.2);
    expect(withParams(observed, failed!, retry!, failed!).context.lastError?.failures).toBe(2);
    // A push that succeeds clears the count: the next failure waits the first delay again.
    expect(delayAfter(observed, failed!, retry!, failed!, retry!, pushed!, driftCheck!, failed!).delayMs).toBe(60_000);
  });

  it('orphaning keeps the resources recorded as orphaned, not pushed', () => {
    const { context } = run(observed, pushed!, deletingObserved!, failed!, cleanup('orphan'));
    expect(context.orphaned.map((r) => r.id)).toEqual(['b1']);
    expect(context.pushed).toEqual([]);
  });

  it('what a push may create is recorded as pending before it starts, so a push cut short leaves nothing unrecorded', () => {
    const cutShort = run(observed, failed!);
    expect(cutShort.context.pushed.map((r) => [r.id, r.state])).toEqual([['b1', 'pending']]);
    expect(run(observed, pushed!).context.pushed.map((r) => [r.id, r.state])).toEqual([['b1', 'synced']]);
    // Refused whole before anything was pushed: nothing is pending.
    expect(run(observed, invalidFailed!).context.pushed).toEqual([]);
  });

  it('a failed push leaves in the record what it made (unverified), found made by someone else (foreign) and was writing (pending, tried); what it never reached is only asked for again', () => {
    const four = ['b1', 'b2', 'b3', 'b4'].map((id) => ({ ...resource, body: JSON.stringify({ id }) }));
    const asked: TranslationMachineEvent = {
      type: 'observed',
      observation: observation({ projection: { resources: four } }),
      at,
    };
    const failedAt3: TranslationMachineEvent = {
      type: 'actionFailed',
      action: 'push',
      reason: 'MidonetDependencyMissing',
      message: 'no parent',
      outcome: { made: ['Bridge:b1'], foreign: ['Bridge:b2'], maybe: ['Bridge:b3'] },
      at,
    };
    const states = (events: TranslationMachineEvent[]) =>
      run(...events).context.pushed.map((r) => [r.id, r.state, r.tried]);
    expect(states([asked, failedAt3])).toEqual([
      ['b1', 'unverified', undefined],
      ['b2', 'foreign', undefined],
      ['b3', 'pending', true],
    ]);
    // Pushed again: what may be created is pending once more; what was tried stays so until a push reports.
    expect(states([asked, failedAt3, retry!])).toEqual([
      ['b1', 'unverified', undefined],
      ['b2', 'foreign', undefined],
      ['b3', 'pending', true],
      ['b4', 'pending', undefined],
    ]);
    // Its deletion is asked to delete what it made and may have made, never what it found someone else's.
    const deleting = run(asked, failedAt3, deletingObserved!);
    expect(deleting.context.pushed.filter((r) => r.state !== 'foreign').map((r) => r.id)).toEqual(['b1', 'b3']);
  });

  it('a push by reference lost with its worker hands its last heartbeat to the next push, which reads its record by it; one that ends otherwise forgets it', () => {
    const withParams = scenarioRunner(translationMachine, { ref }, (a) => ({ type: a.type, params: a.params }));
    const lostPush = { done: 2, foreign: [1], writing: true, generation: 1 };
    const lost: TranslationMachineEvent = {
      type: 'actionFailed',
      action: 'push',
      reason: 'TimeoutFailure',
      message: 'heartbeat timeout',
      lostPush,
      at,
    };
    const pushes = (...sequence: TranslationMachineEvent[]) =>
      withParams(...sequence)
        .actions.filter((a) => a.type === 'push')
        .map((a) => (a.params as { lostPush?: unknown }).lostPush);
    // The actions of the last event.
    expect(pushes(observed)).toEqual([undefined]);
    expect(pushes(observed, lost, retry!)).toEqual([lostPush]);
    // The push after it reported, or failed itself (its own failure report refines the record): forgotten.
    expect(pushes(observed, lost, retry!, pushed!, changed!)).toEqual([undefined]);
    expect(pushes(observed, lost, retry!, failed!, retry!)).toEqual([undefined]);
  });

  it('a resource still pending when a push asks another body of it remembers both: the failed push may have written either', () => {
    const renamed = { ...resource, body: '{"id":"b1","name":"n2"}' };
    const renaming: TranslationMachineEvent = {
      type: 'observed',
      observation: observation({ generation: 2, projection: { resources: [renamed] } }),
      at,
    };
    const { context } = run(observed, failed!, renaming, retry!, failed!);
    expect(context.pushed.map((r) => [r.id, r.state, r.body, r.alsoAsked])).toEqual([
      ['b1', 'pending', resource.body, [renamed.body]],
    ]);
    // Pushed at last: what MidoNet holds is vouched for, the candidates go.
    expect(run(observed, failed!, renaming, retry!, pushed!).context.pushed.map((r) => [r.state, r.alsoAsked])).toEqual(
      [['synced', undefined]],
    );
  });

  it('a Translation stuck on a failed push no longer says its resources are synced in its status: they are unverified', () => {
    let [snapshot] = initialTransition(translationMachine, { ref });
    for (const event of [observed, pushed!, driftCheck!]) [snapshot] = transition(translationMachine, snapshot, event);
    const [, actions] = transition(translationMachine, snapshot, failed!);
    const status = actions.find((a) => a.type === 'recordStatus') as unknown as {
      params: { state: string; resources: { id: string; state: string }[] };
    };
    expect(status.params.state).toBe('stuck');
    expect(status.params.resources.map((r) => [r.id, r.state])).toEqual([['b1', 'unverified']]);
  });

  it('the next incarnation is kept for when this one is finalized', () => {
    const { context } = run(observed, otherIncarnation!);
    expect(context.uid).toBe('u1');
    expect(context.nextIncarnation?.uid).toBe('u2');
  });

  it('refuses, by having no transition, what the state does not allow (the update validators rely on it)', () => {
    const advance = (...sequence: TranslationMachineEvent[]) =>
      sequence.reduce(
        (snapshot, event) => transition(translationMachine, snapshot, event)[0],
        initialTransition(translationMachine, { ref })[0],
      );
    const synced = advance(observed, pushed!);
    expect(String(synced.value)).toBe('synced');
    expect(synced.can(cleanup('orphan'))).toBe(false);
    expect(synced.can(resume)).toBe(false);
    expect(synced.can({ type: 'refresh', request, at })).toBe(true);
    // Stuck while live: retrying is fine; giving up would end the lifecycle of a live Translation, so only if said.
    const stuck = advance(observed, failed!);
    expect(String(stuck.value)).toBe('stuck');
    expect(stuck.can(cleanup('retry'))).toBe(true);
    expect(stuck.can(cleanup('orphan'))).toBe(false);
    expect(stuck.can(cleanup('force'))).toBe(false);
    expect(stuck.can(cleanup('orphan', true))).toBe(true);
    const stuckDeleting = advance(observed, pushed!, deletingObserved!, failed!);
    expect(String(stuckDeleting.value)).toBe('stuck');
    expect(stuckDeleting.can(cleanup('orphan'))).toBe(true);
    expect(stuckDeleting.can(cleanup('force'))).toBe(true);
  });
});

describe('Translation machine: persisted record', () => {
  it('reads a version 1 record: its first state, `pending`, is `observing` now, and goes on from there', () => {
    const { context } = run();
    const migrated = translationLifecycleMachine.migrate({ version: 1, value: 'pending', context });
    expect(migrated).toEqual({ version: 2, value: 'observing', context });
    expect(transition(translationMachine, translationMachine.resolveState(migrated), observed)[0].value).toBe(
      'pushing',
    );
  });
});
