import type { AnyStateMachine, StateValue } from 'xstate';
import { builtInActions, type PersistedMachine } from '../interpreter';
import type { ActionRecord, CleanupRequest, LifecycleError, Observation, OperatorRequest } from '../../model/messages';
import type { ObjectRef } from '../../model/naming';
import { Reason } from '../../model/vocabulary';

/**
 * Pieces every lifecycle machine shares, so that they speak one language: the actions the interpreter carries out,
 * the first state (`observing`), how an operator action is recorded (who asked, why, when), how a failed step becomes
 * the lifecycle's last error, the states that rest on a timer, what `stuck` and `paused` do with the operator's
 * actions (`givingUp` is where `cleanup orphan | force` leads in every machine), and how a persisted record of an
 * older version is read.
 */
type OperatorEvent =
  | { type: 'cleanup'; request: CleanupRequest; at: string }
  | { type: 'pause' | 'resume' | 'refresh'; request: OperatorRequest; at: string };

/** A Kubernetes Event on the object a lifecycle serves (or on one of its own: the peer pod's Pod or PeerPod). */
export interface RecordEventParams {
  ref: ObjectRef;
  /** The incarnation it is about, when known: then it is attached to it without a read. */
  uid?: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Events every lifecycle machine handles: a failed step, its timers, the operator's actions, a continue-as-new. */
export type CommonLifecycleEvent =
  | { type: 'actionFailed'; action: string; reason: string; message: string }
  /** An action the machine called off (`abandon`) has stopped. */
  | { type: 'abandoned'; action: string }
  | { type: 'retry' }
  | { type: 'driftCheck' }
  | { type: 'cleanup'; request: CleanupRequest }
  | { type: 'pause'; request: OperatorRequest }
  | { type: 'resume'; request: OperatorRequest }
  | { type: 'refresh'; request: OperatorRequest }
  | { type: 'resumed' };

export function withOperatorAction(
  actions: ActionRecord[],
  event: { type: string; at: string },
): { actions: ActionRecord[] } | Record<string, never> {
  if (!['cleanup', 'pause', 'resume', 'refresh'].includes(event.type)) return {};
  const { type, request, at } = event as OperatorEvent;
  const cleanup = 'mode' in request ? { mode: request.mode, ...(request.evenIfLive ? { evenIfLive: true } : {}) } : {};
  return {
    actions: [...actions, { action: type, ...cleanup, requestedBy: request.requestedBy, reason: request.reason, at }],
  };
}

/**
 * Another UID under an object's name proves the incarnation a lifecycle serves gone (names are unique at any time),
 * even when its deletion was never observed (the watcher was down): the lifecycle finalizes it, then serves the newest
 * next one. Undefined for an observation of the incarnation served (or the first one).
 */
export function nextIncarnationOf<TObservation extends Observation>(
  uid: string | undefined,
  observation: TObservation,
): { nextIncarnation: TObservation; gone: true } | undefined {
  return uid !== undefined && observation.uid !== uid ? { nextIncarnation: observation, gone: true } : undefined;
}

/**
 * What a `gone` observation claims: that the incarnation `uid` of `subject` (the object it observes, or the one a peer
 * pod's observation stands for) has left the API server. Anyone with Temporal access can send one, so a lifecycle
 * believes it only once a read of `subject` shows no object or another UID (`claimHolds`); undefined when the
 * observation claims no end.
 */
export function goneClaim(
  observation: Observation,
  subject: ObjectRef = observation.ref,
): { subject: ObjectRef; uid: string } | undefined {
  return observation.gone ? { subject, uid: observation.uid } : undefined;
}

/** A `gone` claim holds when the API server has no object under the name, or one of another UID. */
export const claimHolds = (claim: { uid: string }, held: { uid?: string }): boolean => held.uid !== claim.uid;

/** A failed step as the last error, counted with the failures before it since the last success (`previous`). */
export function failureOf(
  event: { type: string; at: string },
  previous?: LifecycleError,
): { lastError: LifecycleError } | Record<string, never> {
  if (event.type !== 'actionFailed') return {};
  const { action, reason, message, at } = event as unknown as {
    action: string;
    reason: string;
    message: string;
    at: string;
  };
  return { lastError: { reason, message: `${action}: ${message}`, at, failures: (previous?.failures ?? 0) + 1 } };
}

/**
 * A state value as one name, as the `state` query, the UI and the `LifecycleState` search attribute show it: `ready`,
 * or the path of a nested one, `own.tracking` (the peer-pod machine's states by whose VM it is).
 */
export function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  const [parent, child] = Object.entries(value as Exclude<StateValue, string>)[0] ?? ['', undefined];
  return child === undefined ? parent : `${parent}.${stateName(child)}`;
}

/**
 * The top of every lifecycle machine: it starts in `observing`, always takes an observation in (each state decides
 * whether it calls for work), and pauses from any state.
 */
export const lifecycleRoot = {
  initial: 'observing',
  on: {
    observed: { actions: 'observe' },
    pause: { target: '.paused', actions: 'recordAction' },
  },
} as const;

/**
 * The actions the interpreter carries out (activities, through the workflow's executors, and the built-in timers),
 * for `setup({ actions })`: declared with their params' types so that states name them with typed params. The machine
 * only names them; these bodies never run.
 */
export function interpretedActions<TParams>(names: readonly (keyof TParams & string)[]) {
  const declared = Object.fromEntries(names.map((name) => [name, () => {}])) as unknown as {
    [K in keyof TParams]: (_: unknown, params: TParams[K]) => void;
  };
  return { ...declared, ...builtInActions };
}

/**
 * The guards of `cleanupTransitions`, for `setup({ guards })`: which mode of cleanup an operator asked for. Giving up
 * (`orphan`, `force`) ends the lifecycle, so it is taken for an object on its way out (`ending`, each machine's) and,
 * for a live one, only when the operator said `evenIfLive`: otherwise the workflow would end while its object lives.
 */
export const cleanupGuards = <TContext>(ending: (context: TContext) => boolean) => ({
  isRetry: ({ event }: { event: { type: string } }) => isCleanup(event) && event.request.mode === 'retry',
  isGiveUp: ({ context, event }: { context: TContext; event: { type: string } }) =>
    isCleanup(event) && event.request.mode !== 'retry' && (ending(context) || event.request.evenIfLive === true),
});
const isCleanup = (event: { type: string }): event is { type: 'cleanup'; request: CleanupRequest } =>
  event.type === 'cleanup';

/**
 * For `stuckTransitions`, in `setup({ guards })`: an observation that the object is being deleted or gone, news to a
 * lifecycle not yet `ending` (each machine's): a lifecycle stuck while deleting does not retry on every observation.
 */
export const stuckGuards = <TContext>(ending: (context: TContext) => boolean) => ({
  observesDeletion: ({ context, event }: { context: TContext; event: { type: string; observation?: Observation } }) =>
    event.type === 'observed' &&
    !ending(context) &&
    (event.observation?.deleting === true || event.observation?.gone === true),
});

/** A new observation: taken in, then `deciding` picks the work it calls for. */
export const observeAndDecide = { actions: 'observe', target: 'deciding' } as const;

/** The first state: waits for the first observation. */
export const observingState = { on: { observed: observeAndDecide } } as const;

/**
 * A state the lifecycle rests in while `timer` runs (continue-as-new is safe there). A run continued in it is sent
 * `resumed`, which re-enters it: the timer of the run before is gone, and the entry starts it again.
 */
export const restingState = <const TState extends string, TStart, TCancel, const TOn extends object>(
  state: TState,
  timer: { start: TStart; cancel: TCancel },
  on: TOn,
) =>
  ({
    tags: ['continueAsNewSafe'],
    entry: timer.start,
    exit: timer.cancel,
    on: { ...on, resumed: { target: state, reenter: true } },
  }) as const;

/** An operator's cleanup of a stuck or paused lifecycle: `retry` resumes (through `resuming`), `orphan` and `force` give up. */
const cleanupTransitions = [
  { guard: 'isRetry', target: 'resuming', actions: 'recordAction' },
  { guard: 'isGiveUp', target: 'givingUp', actions: 'recordAction' },
] as const;

/**
 * `stuck`'s transitions: the retry timer, a refresh and `cleanup --mode retry` resume the failed step, and so does
 * the object's deletion, at once (a deletion may need no backend call at all, and never waits for the timer);
 * `orphan` and `force` go to `givingUp`. Everything else only updates what is known: a stuck lifecycle waits.
 */
export const stuckTransitions = {
  eventRecorded: {},
  actionFailed: {},
  observed: [{ guard: 'observesDeletion', target: 'resuming', actions: 'observe' }, { actions: 'observe' }],
  retry: 'resuming',
  refresh: { target: 'resuming', actions: 'recordAction' },
  resumed: { target: 'stuck', reenter: true },
  cleanup: cleanupTransitions,
} as const;

/**
 * `paused`: `resume` and `cleanup` as in `stuck`; observations and failures are recorded, nothing else is started. A pause
 * can arrive while an action runs: its result still counts, as `ownResults` (each machine's) take it in.
 */
export const pausedState = <const TOwnResults extends object, const TEntry = never>(
  ownResults: TOwnResults,
  /** What the lifecycle tells on entering (its status, an Event); a run continued while paused does not tell again. */
  entry?: TEntry,
) =>
  ({
    ...(entry === undefined ? {} : { entry }),
    tags: ['continueAsNewSafe'],
    on: {
      pause: {},
      resume: { target: 'resuming', actions: 'recordAction' },
      observed: { actions: 'observe' },
      actionFailed: { actions: 'recordFailure' },
      cleanup: cleanupTransitions,
      ...ownResults,
    },
  }) as const;

/** What a paused lifecycle says (its status, an Event): who paused it and why, and that its work waits. */
export function pausedMessage(actions: readonly ActionRecord[]): string {
  const pause = actions.at(-1);
  return `paused by ${pause?.requestedBy ?? 'an operator'} (${pause?.reason ?? 'no reason given'}): changes and deletion wait for steward resume`;
}

/** The Event a paused lifecycle records on its object (`target`), as `pausedState`'s entry. */
export const pausedEvent = <TContext extends { actions: ActionRecord[] }>(
  target: (context: TContext) => ObjectRef,
) => ({
  type: 'recordEvent' as const,
  params: ({ context }: { context: TContext }): RecordEventParams => ({
    ref: target(context),
    type: 'Normal',
    reason: Reason.Paused,
    message: pausedMessage(context.actions),
  }),
});

/**
 * The timers every lifecycle rests on, each named for what it waits for (the name is its summary in the Temporal
 * UI): started on a state's entry, cancelled on its exit.
 */
export const stateTimer = <TContext>(
  id: string,
  delayMs: (context: TContext) => number,
  event: { type: string },
  shape: { jitter?: number; periodic?: boolean } = {},
) =>
  ({
    start: {
      type: 'startTimer',
      params: ({ context }: { context: TContext }) => ({
        id,
        delayMs: delayMs(context),
        event,
        ...shape,
      }),
    },
    cancel: { type: 'cancelTimer', params: { id } },
  }) as const;
/**
 * Level-based repair: a settled lifecycle re-observes its backend now and then, jittered so many objects spread out.
 * Periodic: coming back to a settled state keeps the running timer's deadline instead of cancelling and starting one.
 */
export const driftCheckTimer = stateTimer(
  'driftCheck',
  (c: { timings: { driftCheckMs: number } }) => c.timings.driftCheckMs,
  { type: 'driftCheck' },
  { jitter: 0.2, periodic: true },
);
/** Doublings of a stuck lifecycle's retry delay at most: 60 s, 2, 4, 8, then every 16 minutes. */
const STUCK_BACKOFF_DOUBLINGS = 4;
/** The stuck retry's delay before jitter, by the failures in a row. */
export function stuckRetryDelayMs(c: { timings: { stuckRetryMs: number }; lastError?: LifecycleError }): number {
  return c.timings.stuckRetryMs * 2 ** Math.min(STUCK_BACKOFF_DOUBLINGS, Math.max(0, (c.lastError?.failures ?? 1) - 1));
}
/**
 * A stuck lifecycle retries its failed step slowly until it succeeds or an operator acts: `stuckRetryMs` after the
 * first failure, doubled with each failure in a row up to a cap, jittered so that many stuck at once spread out. What
 * it waits for coming back (its deletion, its dependency, MidoNet answering again) wakes it at once instead.
 */
export const stuckRetryTimer = stateTimer('stuckRetry', stuckRetryDelayMs, { type: 'retry' }, { jitter: 0.2 });
/**
 * An object waiting for its dependency looks again: soon, unless the dependency tells it when it changes (then only as
 * the drift check would, a level-based backstop).
 */
export const dependencyRetryTimer = stateTimer(
  'dependencyRetry',
  (c: { timings: { dependencyRetryMs: number; driftCheckMs: number }; waitNotified?: boolean }) =>
    c.waitNotified ? c.timings.driftCheckMs : c.timings.dependencyRetryMs,
  { type: 'retry' },
);
/** Doublings of the wait for a Node's MidoNet host at most: 5 s, 10 s, … then every 5 minutes 20 s. */
const HOST_BACKOFF_DOUBLINGS = 6;
/** A Node whose MidoNet host is not registered yet looks again, less often as it stays away. */
export const hostRetryTimer = stateTimer(
  'midonetHostRetry',
  (c: { timings: { dependencyRetryMs: number }; hostLooks?: number }) =>
    c.timings.dependencyRetryMs * 2 ** Math.min(HOST_BACKOFF_DOUBLINGS, Math.max(0, (c.hostLooks ?? 1) - 1)),
  { type: 'retry' },
  { jitter: 0.2 },
);

/**
 * `stuck`: `report` tells why (the machine's own status or Warning Event), and the failed step is retried on a slow
 * timer until it succeeds or an operator acts (`stuckTransitions`, which each machine may extend).
 */
export const stuckState = <const TReport extends object>(report: TReport) =>
  ({
    tags: ['continueAsNewSafe'],
    entry: [report, stuckRetryTimer.start],
    exit: stuckRetryTimer.cancel,
    on: stuckTransitions,
  }) as const;

/** One change of a machine's persisted record: reads the record of one version, writes the next version's. */
export type Migration = (persisted: PersistedMachine) => PersistedMachine;

/** A migration that renames top-level states (the machines are flat: a state value is its name). */
export const renameStates =
  (names: Record<string, string>): Migration =>
  (persisted) => ({
    ...persisted,
    value: typeof persisted.value === 'string' ? (names[persisted.value] ?? persisted.value) : persisted.value,
  });

/**
 * A machine as a lifecycle workflow runs it: its persisted record's version, and how an older record is read. Its type
 * says what the workflow gives it (events, timings) and carries out for it (the params of its actions).
 */
export interface VersionedMachine<TContext, TEvent = unknown, TTimings = unknown, TParams = unknown> {
  machine: AnyStateMachine;
  version: number;
  /** Pure: a persisted record (continue-as-new input) of this or an earlier version, in this version's shape. */
  migrate: (persisted: PersistedMachine) => PersistedMachine<TContext>;
  /** Types only, never set: what the lifecycle workflow infers its events, timings and executors from. */
  types?: { event: TEvent; timings: TTimings; params: TParams };
}

/**
 * `migrations[i]` reads version i + 1, so the machine's version is one more than their number. A record newer than
 * this code (a worker rolled back) is refused with a plain error: the workflow task fails and is retried until a
 * worker that knows it picks it up, instead of guessing.
 */
export function versioned<TContext, TEvent, TTimings, TParams>(
  machine: AnyStateMachine,
  migrations: readonly Migration[],
): VersionedMachine<TContext, TEvent, TTimings, TParams> {
  const version = migrations.length + 1;
  return {
    machine,
    version,
    migrate: (persisted) => {
      if (persisted.version > version)
        throw new Error(
          `persisted ${machine.id} machine of version ${persisted.version}; this worker knows up to ${version}`,
        );
      const migrated = migrations
        .slice(persisted.version - 1)
        .reduce((record, step) => ({ ...step(record), version: record.version + 1 }), persisted);
      return migrated as PersistedMachine<TContext>;
    },
  };
}
