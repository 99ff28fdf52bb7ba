import { initialTransition, transition } from 'xstate';
import type { Observation } from '../../model/messages';
import {
  expectGivingUpOnlyWhenEnding,
  expectOperatorActionsRecorded,
  machineEdges,
  scenarioRunner,
  timerAndOperatorEvents,
} from './testing/lifecycle-machine';
import { objectLifecycleMachine, objectMachine, type ObjectEvent } from './object';

const ref = { kind: 'Pod' as const, namespace: 'default', name: 'web' };
const at = '2026-01-01T00:00:00.000Z';
const request = { requestedBy: 'bob', reason: 'test' };
const node = { kind: 'Node' as const, name: 'node-1' };

const hostId = '7a7b8f2e-1111-4b7c-9d1e-0123456789ab';
/** A Node as midonet-kubernetes' annotator finds it: its tunnel zone set by hand (kept), the rest missing. */
const unannotatedNode = {
  kind: 'Node',
  metadata: { name: 'node-1', uid: 'u1', annotations: { 'midonet.org/tunnel-zone-id': '' } },
  spec: { podCIDR: '10.1.1.0/24' },
  status: { addresses: [{ type: 'InternalIP', address: '192.168.0.11' }] },
};

const observation = (overrides: Partial<Observation> = {}): Observation => ({
  ref,
  uid: 'u1',
  generation: 0,
  deleting: false,
  gone: false,
  finalizers: [],
  projection: { kind: 'Pod', metadata: { name: 'web', namespace: 'default', uid: 'u1' }, spec: { nodeName: 'node-1' } },
  ...overrides,
});

/** One sample of every event, with the variations that lead to different transitions. */
const events: ObjectEvent[] = [
  { type: 'observed', observation: observation(), at },
  {
    type: 'observed',
    observation: observation({
      projection: {
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default', uid: 'u1' },
        spec: { nodeName: 'node-2' },
      },
    }),
    at,
  },
  { type: 'observed', observation: observation({ projection: { invalid: { reason: 'MalformedObject' } } }), at },
  { type: 'observed', observation: observation({ deleting: true }), at },
  { type: 'observed', observation: observation({ gone: true }), at },
  { type: 'observed', observation: observation({ uid: 'u2' }), at },
  { type: 'dependencyChanged', change: { dependency: node, uid: 'n1' }, at },
  { type: 'applied', translations: ['default/pod.4.web'], dependency: node, at },
  { type: 'mustWait', reason: 'Node node-1 does not exist (yet)', at },
  { type: 'invalid', error: { reason: 'InvalidPodIP', message: 'bad' }, at },
  { type: 'referrersNotified', at },
  { type: 'finalized', at },
  { type: 'eventRecorded', at },
  { type: 'actionFailed', action: 'apply', reason: 'KubernetesUnavailable', message: 'down', at },
  {
    type: 'actionFailed',
    action: 'apply',
    reason: 'KubernetesInvalid',
    message: 'metadata.name: must be no more than 253 characters',
    at,
  },
  ...timerAndOperatorEvents(at, request, ['retry', 'orphan']),
  // A lost push attempt's writes may land for 40 s more: the finalization waits them out, then asks again.
  { type: 'lateWrites', until: new Date(Date.parse(at) + 40_000).toISOString(), at },
  { type: 'lateWritesSettled', at },
  // The API server holds the object, not being deleted: its deletion was claimed falsely.
  { type: 'stillLive', at },
  // The node annotator's: a Node without its midonet.org annotations, annotated or waiting for its MidoNet host.
  { type: 'observed', observation: observation({ projection: unannotatedNode }), at },
  { type: 'annotated', annotations: { 'midonet.org/host-id': hostId }, at },
  { type: 'annotated', at },
  { type: 'mustWait', reason: 'MidoNet has no host named node-1 yet', at },
  { type: 'mustWait', reason: 'Node node-1 has no InternalIP address yet for its tunnel endpoint', at },
  // A wait its dependency will end by telling it (registered as its referrer).
  { type: 'mustWait', reason: 'waiting for Node node-1', notified: true, dependency: node, at },
];

type Snapshot = ReturnType<typeof initialTransition<typeof objectMachine>>[0];
const key = (s: Snapshot) => {
  const c = s.context;
  return JSON.stringify([
    s.value,
    c.uid,
    c.projection,
    c.appliedProjection,
    c.deleting,
    c.gone,
    c.dependency,
    c.resumeTo,
    c.waitNotified,
    !!c.nextIncarnation,
    !!c.lastError,
    c.translations.length,
  ]);
};
const edges = machineEdges(objectMachine, { ref }, events, key);
const value = (s: Snapshot) => String(s.value);

describe('object machine: every transition', () => {
  it('reaches every state it declares (deciding and resuming are passed through)', () => {
    const reached = new Set(edges.map((e) => value(e.to)));
    const declared = Object.keys(objectMachine.root.states).filter((s) => s !== 'deciding' && s !== 'resuming');
    expect([...reached].sort()).toEqual(declared.sort());
    expect(edges.length).toBeGreaterThan(100);
  });

  it('finishes only through finalizing (back-reference removed) or an operator giving up', () => {
    for (const e of edges.filter((e) => value(e.to) === 'done')) {
      const viaFinalize = e.event.type === 'finalized';
      const operator = e.event.type === 'cleanup' && e.event.request.mode !== 'retry';
      expect({ event: e.event.type, from: value(e.from), ok: viaFinalize || operator }).toEqual({
        event: e.event.type,
        from: value(e.from),
        ok: true,
      });
    }
  });

  it('once deletion is observed, it never writes Translations again for that incarnation', () => {
    // Unless the API server disproved it (stillLive): a false claim of its deletion is dropped.
    const afterDeletion = edges.filter(
      (e) =>
        (e.from.context.deleting || e.from.context.gone) && e.actions.includes('apply') && e.event.type !== 'stillLive',
    );
    expect(afterDeletion.map((e) => `${value(e.from)} --${e.event.type}-->`)).toEqual([]);
  });

  it('once deletion is observed, it reaches finalizing after the step in flight', () => {
    const stuckAfterDeletion = edges.filter(
      (e) =>
        e.to.context.deleting &&
        ['ready', 'waitingForDependency', 'invalid'].includes(value(e.to)) &&
        !e.from.context.deleting,
    );
    expect(stuckAfterDeletion.map((e) => `${value(e.from)} --${e.event.type}--> ${value(e.to)}`)).toEqual([]);
  });

  it('never settles in ready with a projection it has not applied (changes observed during an apply are applied after it)', () => {
    const settled = edges.filter((e) => value(e.to) === 'ready' && value(e.from) !== 'ready');
    expect(settled.length).toBeGreaterThan(0);
    const behind = settled.filter((e) => e.to.context.appliedProjection !== JSON.stringify(e.to.context.projection));
    expect(behind.map((e) => `${value(e.from)} --${e.event.type}--> ready`)).toEqual([]);
  });

  it('records every operator action it accepts, with who asked and why', () => {
    expectOperatorActionsRecorded(edges, { requestedBy: 'bob', reason: 'test', at });
  });

  it('gives up (orphan, force) only a lifecycle whose object is on its way out, or when told even if live', () => {
    expectGivingUpOnlyWhenEnding(edges, (c) => c.deleting || c.gone);
  });
});

const run = scenarioRunner(objectMachine, { ref }, (a) => a.type);
/** The delay of the timer the last step started. */
const timerDelay = (...sequence: ObjectEvent[]) => {
  const { actions } = scenarioRunner(objectMachine, { ref }, (a) => a)(...sequence);
  return (actions.find((a) => a.type === 'startTimer')?.params as { delayMs: number } | undefined)?.delayMs;
};
const [
  observed,
  moved,
  invalidObserved,
  deleting,
  ,
  otherIncarnation,
  dependencyChanged,
  applied,
  mustWait,
  invalid,
  notified,
  finalized,
  ,
  failed,
  refused,
  retry,
] = events as [ObjectEvent, ...ObjectEvent[]];

describe('object machine: scenarios', () => {
  it.each([
    ['a first observation translates and applies', [observed], 'translating', ['apply']],
    [
      'a first apply tells the referrers (the projection is new)',
      [observed, applied!],
      'notifying',
      ['notifyReferrers'],
    ],
    ['then it is ready, with a drift timer', [observed, applied!, notified!], 'ready', ['startTimer']],
    ['a missing dependency makes it wait, with a timer', [observed, mustWait!], 'waitingForDependency', ['startTimer']],
    [
      'the wait ends when the dependency changes',
      [observed, mustWait!, dependencyChanged!],
      'translating',
      ['cancelTimer', 'apply'],
    ],
    [
      'an object that cannot be translated is shown invalid with a Warning Event',
      [observed, invalid!],
      'invalid',
      ['recordEvent'],
    ],
    [
      'a projection the watcher could not build goes straight to invalid',
      [invalidObserved!],
      'invalid',
      ['recordEvent'],
    ],
    [
      'a change of the object re-applies',
      [observed, applied!, notified!, moved!],
      'translating',
      ['cancelTimer', 'apply'],
    ],
    [
      'deletion finalizes (drops the back-reference)',
      [observed, applied!, notified!, deleting!],
      'finalizing',
      ['cancelTimer', 'finalize'],
    ],
    ['finalized ends it', [observed, applied!, notified!, deleting!, finalized!], 'done', []],
    [
      'a pause says so in an Event on the object',
      [observed, applied!, notified!, { type: 'pause', request, at }],
      'paused',
      ['cancelTimer', 'recordEvent'],
    ],
    ['a failed apply is stuck, retried by a timer', [observed, failed!], 'stuck', ['recordEvent', 'startTimer']],
    ['the stuck timer retries', [observed, failed!, retry!], 'translating', ['cancelTimer', 'apply']],
    [
      'a stuck object acts on its deletion at once, not on its timer',
      [observed, failed!, deleting!],
      'finalizing',
      ['cancelTimer', 'finalize'],
    ],
    [
      'a stuck object tries again at once when its dependency changed',
      [observed, failed!, dependencyChanged!],
      'translating',
      ['cancelTimer', 'apply'],
    ],
    [
      'Translations the API server refuses as such (422: a name too long) are shown invalid, not retried for ever in stuck',
      [observed, refused!],
      'invalid',
      ['recordEvent'],
    ],
  ] as const)('%s', (_, sequence, state, actions) => {
    const result = run(...(sequence as unknown as ObjectEvent[]));
    expect(result.state).toBe(state);
    expect(result.actions).toEqual(actions);
  });

  it('a change observed while the apply runs (a burst of Endpoints changes) is applied after it, not taken as applied', () => {
    expect(run(observed, moved!, applied!, notified!)).toMatchObject({ state: 'translating', actions: ['apply'] });
  });

  it('an unchanged re-apply (drift check) does not bother the referrers again', () => {
    expect(run(observed, applied!, notified!, { type: 'driftCheck', at }, applied!).state).toBe('ready');
  });

  it("waits out a lost attempt's late writes with a timer, then finalizes again the same way", () => {
    const late = events.find((e) => e.type === 'lateWrites')!;
    const settled = { type: 'lateWritesSettled', at } as const;
    expect(run(observed, applied!, notified!, deleting!, late)).toMatchObject({
      state: 'waitingForLateWrites',
      actions: ['startTimer'],
    });
    expect(timerDelay(observed, applied!, notified!, deleting!, late)).toBe(40_000);
    expect(run(observed, applied!, notified!, deleting!, late, settled)).toMatchObject({
      state: 'finalizing',
      actions: ['cancelTimer', 'finalize'],
    });
    // An operator's force cleanup keeps its mode across the wait.
    const force = { type: 'cleanup', request: { ...request, mode: 'force' }, at } as ObjectEvent;
    const trace = scenarioRunner(objectMachine, { ref }, (a) => a);
    const givenUp = trace(observed, applied!, notified!, deleting!, failed!, force, late, settled);
    expect(givenUp.state).toBe('givingUp');
    expect(givenUp.actions.find((a) => a.type === 'finalize')?.params).toMatchObject({ mode: 'force' });
  });

  it('drops a false claim of its deletion that the finalization disproved, and goes on translating', () => {
    const gone = events.find((e) => e.type === 'observed' && e.observation.gone)!;
    const live = { type: 'stillLive', at } as const;
    expect(run(observed, applied!, notified!, gone).state).toBe('finalizing');
    const after = scenarioRunner(objectMachine, { ref }, (a) => a.type)(observed, applied!, notified!, gone, live);
    expect(after).toMatchObject({ state: 'translating', actions: ['apply'] });
    expect(after.context).toMatchObject({ deleting: false, gone: false });
  });

  it('keeps a new incarnation for after this one is finalized', () => {
    const { context } = run(observed, otherIncarnation!);
    expect(context.uid).toBe('u1');
    expect(context.nextIncarnation?.uid).toBe('u2');
  });

  it('takes a new incarnation as proof the old one is gone, even with its deletion unseen: a ready object finalizes', () => {
    const { state, context } = run(observed, applied!, notified!, otherIncarnation!);
    expect(state).toBe('finalizing');
    expect(context.nextIncarnation?.uid).toBe('u2');
  });

  it('remembers its dependency, to drop the back-reference when it goes', () => {
    expect(run(observed, applied!).context.dependency).toEqual(node);
  });

  it('remembers the dependency an invalid object registered on, and drops the back-reference when it goes', () => {
    const invalidOn: ObjectEvent = {
      type: 'invalid',
      error: { reason: 'InvalidMacAddress', message: 'bad' },
      dependency: node,
      at,
    };
    const { actions } = scenarioRunner(objectMachine, { ref }, (a) => a)(observed, invalidOn, deleting!);
    expect(actions.find((a) => a.type === 'finalize')?.params).toMatchObject({ dependency: node, mode: 'delete' });
  });

  it('gives the next apply the notes an Event has told, so that only a change of them is told again', () => {
    const toldNotes = [{ reason: 'IPv6AddressSkipped' as const, message: 'InternalIP fd00::10' }];
    let [snapshot] = initialTransition(objectMachine, { ref });
    for (const event of [observed, { ...applied!, toldNotes }, notified!])
      [snapshot] = transition(objectMachine, snapshot, event);
    const [, actions] = transition(objectMachine, snapshot, { type: 'driftCheck', at });
    expect(actions.find((a) => a.type === 'apply')?.params).toMatchObject({ toldNotes });
  });
});

describe('object machine: the node annotator', () => {
  const [nodeObserved, annotatedNow, annotatorOff, noHost, noAddress] = events.slice(-6);

  it('annotates a Node that lacks a midonet.org annotation before translating it', () => {
    expect(run(nodeObserved!)).toMatchObject({ state: 'annotating', actions: ['annotate'] });
  });

  it('translates at once with the annotations written, keeping the one set by hand', () => {
    const { state, actions, context } = run(nodeObserved!, annotatedNow!);
    expect({ state, actions }).toEqual({ state: 'translating', actions: ['apply'] });
    expect((context.projection as typeof unannotatedNode).metadata.annotations).toEqual({
      'midonet.org/tunnel-zone-id': '',
      'midonet.org/host-id': hostId,
    });
  });

  it('translates the Node as it is when the annotator is off (the translation then says what is missing)', () => {
    expect(run(nodeObserved!, annotatorOff!)).toMatchObject({ state: 'translating', actions: ['apply'] });
  });

  it('waits for MidoNet to list its host, says so once in an Event, and looks again with backoff', () => {
    expect(run(nodeObserved!, noHost!)).toMatchObject({
      state: 'waitingForMidonetHost',
      actions: ['recordEvent', 'startTimer'],
    });
    expect(timerDelay(nodeObserved!, noHost!)).toBe(5_000);
    expect(run(nodeObserved!, noHost!, retry!, noHost!)).toMatchObject({
      state: 'waitingForMidonetHost',
      actions: ['startTimer'],
    });
    expect(timerDelay(nodeObserved!, noHost!, retry!, noHost!)).toBe(10_000);
    expect(timerDelay(nodeObserved!, noHost!, retry!, noHost!, retry!, noHost!, retry!, noHost!)).toBe(40_000);
  });

  it('tells another reason to wait in a new Event', () => {
    expect(run(nodeObserved!, noHost!, retry!, noAddress!).actions).toEqual(['recordEvent', 'startTimer']);
  });

  it('looks again at once when the Node changes, and finalizes a Node deleted while it waits', () => {
    expect(run(nodeObserved!, noHost!, nodeObserved!)).toMatchObject({
      state: 'annotating',
      actions: ['cancelTimer', 'annotate'],
    });
    const deletedNode = {
      type: 'observed',
      observation: observation({ projection: unannotatedNode, deleting: true }),
      at,
    };
    expect(run(nodeObserved!, noHost!, deletedNode as ObjectEvent).state).toBe('finalizing');
  });
});

describe('object machine: waiting for a dependency', () => {
  const notifiedWait = events.at(-1)!;

  it('polls a dependency that cannot tell it (a Node that does not exist) every few seconds', () => {
    expect(timerDelay(observed, mustWait!)).toBe(5_000);
  });

  it('rests on the drift check when the dependency will tell it (registered as its referrer), and remembers it', () => {
    const { state, context } = run(observed, notifiedWait);
    expect(state).toBe('waitingForDependency');
    expect(timerDelay(observed, notifiedWait)).toBe(30 * 60_000);
    expect(context.dependency).toEqual(node);
  });

  it("looks again at once when its dependency's word came while the apply found it not ready (not at the drift check)", () => {
    expect(run(observed, dependencyChanged!, notifiedWait)).toMatchObject({ state: 'translating', actions: ['apply'] });
  });

  it.each([
    ['while the apply ran', [observed, dependencyChanged!, applied!, notified!]],
    ['while it told its own referrers', [observed, applied!, dependencyChanged!, notified!]],
  ] as const)('applies again when its dependency changed %s', (_, sequence) => {
    expect(run(...(sequence as unknown as ObjectEvent[]))).toMatchObject({ state: 'translating', actions: ['apply'] });
  });

  it('gives the next apply what it waited for, so the same wait is not told in another Event', () => {
    const { actions } = scenarioRunner(objectMachine, { ref }, (a) => a)(observed, notifiedWait, dependencyChanged!);
    expect(actions.find((a) => a.type === 'apply')?.params).toMatchObject({ waitingFor: 'waiting for Node node-1' });
  });
});

describe('object machine: persisted record', () => {
  it('reads a version 1 record: the state an operator gave up in, `releasing`, is `givingUp` now, and goes on from there', () => {
    const { context } = run(observed, failed!, { type: 'cleanup', request: { ...request, mode: 'orphan' }, at });
    const migrated = objectLifecycleMachine.migrate({ version: 1, value: 'releasing', context });
    expect(migrated).toEqual({ version: 2, value: 'givingUp', context });
    expect(transition(objectMachine, objectMachine.resolveState(migrated), finalized!)[0].value).toBe('done');
  });

  it('keeps a record of its own version as it is, and refuses one newer than this code', () => {
    const record = {
      version: objectLifecycleMachine.version,
      value: 'ready',
      context: run(observed, applied!, notified!).context,
    };
    expect(objectLifecycleMachine.migrate(record)).toEqual(record);
    expect(() => objectLifecycleMachine.migrate({ ...record, version: record.version + 1 })).toThrow(/version 3/);
  });
});
