import { and, assign, setup } from 'xstate';
import {
  cleanupGuards,
  driftCheckTimer,
  failureOf,
  interpretedActions,
  lifecycleRoot,
  nextIncarnationOf,
  observeAndDecide,
  observingState,
  pausedMessage,
  pausedState,
  renameStates,
  restingState,
  stuckGuards,
  stuckRetryDelayMs,
  stuckState,
  stuckTransitions,
  versioned,
  withOperatorAction,
  type CommonLifecycleEvent,
} from './common';
import type { ActionRecord, BackendChanged, LifecycleError, Observation } from '../../model/messages';
import type { ObjectRef } from '../../model/naming';
import {
  identifyIfJson,
  MAX_PENDING_BODIES,
  type BackendResource,
  type PushedResource,
  type TranslationReference,
} from '../../model/translation/model';
import { Reason, TRANSLATION_FINALIZER } from '../../model/vocabulary';
import type { TranslationProjection } from '../../model/translation/types';
import { afterFailedPush, type PushOutcome, type PushProgress } from '../../model/translation/push-progress';

/**
 * The pusher (seed 000): one machine per Translation resource. It pushes the Translation's backend resources in
 * order, keeps them there (a periodic re-observation repairs drift), and when the Translation is being deleted with
 * our finalizer it deletes them in reverse order and then releases the finalizer. Failures that outlast the
 * activity retries park the machine in `stuck`, visible everywhere, where it retries slowly and waits for an
 * operator (`cleanup retry | orphan | force`).
 */
/** Timers, in ms; the workflow may shorten them (tests) through its input. */
export interface TranslationTimings {
  driftCheckMs: number;
  stuckRetryMs: number;
}
export const defaultTranslationTimings: TranslationTimings = { driftCheckMs: 30 * 60_000, stuckRetryMs: 60_000 };

export interface TranslationMachineContext {
  ref: ObjectRef;
  timings: TranslationTimings;
  uid?: string;
  generation: number;
  /** Resources the Translation asks for, in order; empty when it is sent by reference. */
  desired: BackendResource[];
  /** A large Translation: its activities read its resources from the API server (absent in older records: false). */
  byReference?: boolean;
  /**
   * Its record of what is in MidoNet is kept in `status.childResources`, written by the push itself, instead of in
   * `pushed` (a large Translation's record would not fit in the history); absent in older records: false.
   */
  recordInStatus?: boolean;
  /** How many resources the last push left in MidoNet (the view's count when the record is in status). */
  pushedCount?: number;
  /** The generation of the resources last pushed successfully (for one sent by reference: the one the push read). */
  pushedGeneration: number;
  /**
   * The generation the status may say Ready for (-1: none): reported after a push, withdrawn before a push of another
   * one, so that Ready never names a generation MidoNet does not hold. Absent in older records: `pushedGeneration`.
   */
  claimedGeneration?: number;
  /** The generation of the push in flight: changes observed meanwhile are pushed after it. */
  inFlightGeneration: number;
  /** What this workflow knows to be in MidoNet: its own record, which makes removals and re-creations safe. */
  pushed: PushedResource[];
  /** The last heartbeat of a push by reference lost with its worker; the next push reads its record by it. */
  lostPush?: PushProgress;
  /** Resources left in MidoNet on purpose by `cleanup --mode orphan`. */
  orphaned: PushedResource[];
  deleting: boolean;
  finalizerPresent: boolean;
  gone: boolean;
  /**
   * Resources it names changed in MidoNet under it since its push started (another Translation's deletion cascaded
   * them away, or created what it waited for): pushed again, which checks every resource. Absent in records
   * persisted before it existed.
   */
  backendChanged?: boolean;
  /** The generation refused whole (InvalidTranslation): not pushed again until it changes or an operator refreshes. */
  invalidGeneration?: number;
  /** Where `stuck` returns to on retry, and where `paused` resumes. */
  resumeTo: 'pushing' | 'deleting' | 'releasing';
  force: boolean;
  lastError?: LifecycleError;
  actions: ActionRecord[];
  /** A newer object with the same name: handled once this one is fully finalized. */
  nextIncarnation?: Observation<TranslationProjection>;
}

/** Every event carries `at`, the workflow time it was taken in (stamped by the interpreter: machines read no clock). */
export type TranslationMachineEvent = (
  | { type: 'observed'; observation: Observation<TranslationProjection> }
  | {
      type: 'pushed';
      pushed: PushedResource[];
      removed: PushedResource[];
      recordInStatus?: boolean;
      count?: number;
      /** The generation the push read its resources at (sent by reference); else the one it was given. */
      generation?: number;
    }
  /** A push failed: how far it got (workflows/translation-lifecycle.ts), beside the reason. */
  | {
      type: 'actionFailed';
      action: 'push';
      reason: string;
      message: string;
      outcome?: PushOutcome;
      /** A push by reference lost with its worker: its last heartbeat, for the next push to read its record by. */
      lostPush?: PushProgress;
    }
  | { type: 'backendDeleted'; removed: PushedResource[] }
  | { type: 'released' }
  | { type: 'backendChanged'; notice: BackendChanged }
  /** The finalizer is on the Translation, or (not added) it is being deleted or gone, so nothing may be pushed. */
  | { type: 'finalizerAdded'; added: true }
  | { type: 'finalizerAdded'; added: false; reason: 'NotFound' | 'UidMismatch' | 'Deleting' }
  /** Status, conditions and the Event written (recordStatus). */
  | { type: 'eventRecorded' }
  | CommonLifecycleEvent
) & { at: string };

export interface PusherInput {
  ref: ObjectRef;
  timings?: Partial<TranslationTimings>;
}

/** Parameters of the actions the interpreter executes, shared with the workflow's executors. */
export interface TranslationActionParams {
  /** The push reports on the Translation itself (record, Ready and Synced in one status write: activities/midonet/push.ts). */
  push: {
    owner: string;
    resources: BackendResource[];
    previous: PushedResource[];
    reference?: TranslationReference;
    generation: number;
    lostPush?: PushProgress;
  };
  /** `resources`: the record, never what is only asked for (an invalid or refused Translation pushed nothing of it). */
  deleteBackend: { owner: string; resources: PushedResource[]; force: boolean; reference?: TranslationReference };
  releaseFinalizer: { ref: ObjectRef; uid: string; finalizer: string };
  addFinalizer: { ref: ObjectRef; uid: string; finalizer: string };
  recordStatus: {
    ref: ObjectRef;
    /** The incarnation it is about: a Translation made since under the name is not written (its own workflow reports). */
    uid?: string;
    generation: number;
    /** `pushing`: Ready and Synced withdrawn before a push of another generation than the one they name. */
    state: 'synced' | 'stuck' | 'invalid' | 'paused' | 'pushing';
    /** Paused: whether MidoNet holds this generation (Ready stays true) or a change or deletion waits. */
    readyWhilePaused?: boolean;
    resources: PushedResource[];
    /** The push wrote `status.childResources` itself: they are left as they are. */
    keepChildResources?: boolean;
    error?: LifecycleError;
    eventReason: string;
    eventMessage: string;
  };
}

/** Paused with nothing waiting: MidoNet holds the generation observed, and Ready says so. */
const readyWhilePaused = (context: TranslationMachineContext) =>
  context.pushedGeneration === context.generation && !context.deleting && context.lastError === undefined;

/** Being deleted, or gone: what an operator's giving up and a stuck lifecycle's waking are about. */
const isEnding = (context: TranslationMachineContext) => context.deleting || context.gone;

/** The status of a Translation that cannot go on by itself: its state, its last error, and the Warning Event's words. */
const failureStatus = (
  state: 'invalid' | 'stuck',
  warning: (context: TranslationMachineContext) => { reason: string; message: string },
) => ({
  type: 'recordStatus' as const,
  params: ({ context }: { context: TranslationMachineContext }): TranslationActionParams['recordStatus'] => ({
    ref: context.ref,
    ...(context.uid ? { uid: context.uid } : {}),
    generation: context.generation,
    state,
    // A push that failed checked some resources and not others: none is claimed to be there any more.
    resources:
      state === 'stuck' && context.resumeTo === 'pushing'
        ? context.pushed.map((r) => (r.state === 'synced' ? { ...r, state: 'unverified' as const } : r))
        : context.pushed,
    ...keptRecord(context),
    ...(context.lastError ? { error: context.lastError } : {}),
    eventReason: warning(context).reason,
    eventMessage: warning(context).message,
  }),
});

/** Paused, on the Translation: Ready as long as MidoNet holds the generation observed and nothing waits. */
const pausedStatus = [
  'claimIfReadyWhilePaused' as const,
  {
    type: 'recordStatus' as const,
    params: ({ context }: { context: TranslationMachineContext }): TranslationActionParams['recordStatus'] => ({
      ref: context.ref,
      ...(context.uid ? { uid: context.uid } : {}),
      generation: context.generation,
      state: 'paused' as const,
      readyWhilePaused: readyWhilePaused(context),
      resources: context.pushed,
      ...keptRecord(context),
      eventReason: Reason.Paused,
      eventMessage: pausedMessage(context.actions),
    }),
  },
];

export const translationMachine = setup({
  types: { context: {} as TranslationMachineContext, events: {} as TranslationMachineEvent, input: {} as PusherInput },
  actions: {
    ...interpretedActions<TranslationActionParams>([
      'push',
      'deleteBackend',
      'releaseFinalizer',
      'addFinalizer',
      'recordStatus',
    ]),
    observe: assign(({ context, event }) => {
      if (event.type !== 'observed') return {};
      const o = event.observation;
      // Gone while our finalizer held it can only mean someone removed the finalizer: nothing is assumed after that.
      const next = nextIncarnationOf(context.uid, o);
      if (next) return next;
      return {
        uid: o.uid,
        generation: o.generation,
        desired: o.projection.resources ?? [],
        byReference: o.projection.resources === undefined,
        // Deletion cannot be undone: a late or replayed observation without it does not resurrect the object.
        deleting: context.deleting || o.deleting,
        gone: context.gone || o.gone,
        finalizerPresent: o.finalizers.includes(TRANSLATION_FINALIZER),
      };
    }),
    recordPushed: assign(({ context, event }) =>
      event.type === 'pushed'
        ? {
            pushed: event.pushed,
            pushedGeneration: event.generation ?? context.inFlightGeneration,
            lastError: undefined,
            lostPush: undefined,
            recordInStatus: event.recordInStatus ?? false,
            pushedCount: event.count ?? event.pushed.length,
          }
        : {},
    ),
    // What this push may create is recorded before it starts: a push cut short (worker killed, retries run out) leaves
    // no result, and what it did create must still be removed when it is no longer wanted or the Translation goes.
    startPush: assign(({ context }) => ({
      inFlightGeneration: context.generation,
      backendChanged: false,
      pushed: withPending(context.pushed, context.desired),
    })),
    recordBackendChange: assign({ backendChanged: true }),
    // Claimed from the moment the report is sent: its answer may be lost after the write.
    claimPushed: assign(({ context }) => ({ claimedGeneration: context.pushedGeneration })),
    withdrawClaim: assign({ claimedGeneration: -1 }),
    claimIfReadyWhilePaused: assign(({ context }) =>
      readyWhilePaused(context) ? { claimedGeneration: context.pushedGeneration } : {},
    ),
    recordDeleted: assign(({ event }) =>
      event.type === 'backendDeleted'
        ? { pushed: [], lastError: undefined, recordInStatus: false, pushedCount: 0 }
        : {},
    ),
    recordFailure: assign(({ context, event }) => failureOf(event, context.lastError)),
    // What a failed push made, found someone else's or may have written, as far as it got (push-progress.ts).
    recordPushFailure: assign(({ context, event }) => {
      if (event.type !== 'actionFailed' || event.action !== 'push') return {};
      // A record in the status is refined by the push itself, or, for one lost with its worker, by the next push.
      const lost = { lostPush: 'lostPush' in event ? event.lostPush : undefined };
      return 'outcome' in event && event.outcome
        ? { ...lost, pushed: afterFailedPush(context.pushed, event.outcome) }
        : lost;
    }),
    // Refused whole before anything was pushed: what this push recorded as pending was never created.
    recordInvalid: assign(({ context }) => ({
      invalidGeneration: context.inFlightGeneration,
      pushed: context.pushed.filter((p) => p.state !== 'pending'),
    })),
    forgetInvalid: assign({ invalidGeneration: undefined }),
    recordFinalizer: assign(({ event }) => {
      if (event.type !== 'finalizerAdded') return {};
      if (event.added) return { finalizerPresent: true };
      // Refused only for an object going or gone: nothing was pushed without the finalizer, so nothing is left to do.
      return event.reason === 'Deleting' ? { deleting: true } : { gone: true };
    }),
    recordAction: assign(({ context, event }) => withOperatorAction(context.actions, event)),
    orphanResources: assign(({ context }) => ({ orphaned: [...context.orphaned, ...context.pushed], pushed: [] })),
    forceDelete: assign({ force: true }),
    resumeToPushing: assign({ resumeTo: 'pushing' as const }),
    resumeToDeleting: assign({ resumeTo: 'deleting' as const }),
    resumeToReleasing: assign({ resumeTo: 'releasing' as const }),
  },
  guards: {
    /** Being deleted and still ours to clean: our finalizer holds the object. */
    mustDelete: ({ context }) => context.deleting && context.finalizerPresent,
    /** Deleted without our finalizer (it was removed by hand): nothing may be assumed about the backend any more. */
    isGoneWithoutUs: ({ context }) => context.gone || (context.deleting && !context.finalizerPresent),
    hasUnpushedChange: ({ context }) =>
      context.generation !== context.pushedGeneration || context.backendChanged === true,
    /** A Translation written without our finalizer (by hand): it gets it before anything is pushed. */
    lacksFinalizer: ({ context }) => !context.finalizerPresent && !context.deleting,
    wasAdded: ({ event }) => event.type === 'finalizerAdded' && event.added,
    /** Refused whole before anything was pushed (activities/midonet/validate.ts): only a change of it can help. */
    isInvalidTranslation: ({ event }) => event.type === 'actionFailed' && event.reason === Reason.InvalidTranslation,
    isRefusedGeneration: ({ context }) => context.invalidGeneration === context.generation,
    resumesPushing: ({ context }) => context.resumeTo === 'pushing',
    /**
     * The status says Ready for a generation this push may replace in MidoNet: another one, or any for a Translation
     * sent by reference (the push reads whichever generation the API server has then).
     */
    claimsAnother: ({ context }) => {
      const claimed = context.claimedGeneration ?? context.pushedGeneration;
      return claimed >= 0 && (claimed !== context.generation || context.byReference === true);
    },
    /** Nothing observed stands in a push's way: our finalizer holds a Translation that is not going. */
    mayPush: ({ context }) => context.finalizerPresent && !isEnding(context),
    /** The watcher saw the Translation being deleted or gone: a push running is called off. */
    observesEnd: ({ event }) => event.type === 'observed' && (event.observation.deleting || event.observation.gone),
    resumesDeleting: ({ context }) => context.resumeTo === 'deleting',
    resumesReleasing: ({ context }) => context.resumeTo === 'releasing',
    /** No observation yet: nothing to resume but waiting for one. */
    isUnobserved: ({ context }) => context.uid === undefined,
    ...stuckGuards(isEnding),
    ...cleanupGuards(isEnding),
    isForce: ({ event }) => event.type === 'cleanup' && event.request.mode === 'force',
  },
}).createMachine({
  id: 'translation',
  context: ({ input }) => ({
    ref: input.ref,
    timings: { ...defaultTranslationTimings, ...input.timings },
    generation: 0,
    desired: [],
    pushedGeneration: -1,
    claimedGeneration: -1,
    inFlightGeneration: -1,
    pushed: [],
    orphaned: [],
    deleting: false,
    finalizerPresent: false,
    gone: false,
    resumeTo: 'pushing',
    force: false,
    actions: [],
  }),
  ...lifecycleRoot,
  on: { ...lifecycleRoot.on, backendChanged: { actions: 'recordBackendChange' } },
  states: {
    observing: observingState,
    /** Picks the work the latest observation calls for. */
    deciding: {
      always: [
        { guard: 'isGoneWithoutUs', target: 'done' },
        { guard: 'mustDelete', target: 'deleting' },
        { guard: 'lacksFinalizer', target: 'addingFinalizer' },
        { guard: 'isRefusedGeneration', target: 'invalid' },
        { guard: 'hasUnpushedChange', target: 'startingPush' },
        { target: 'synced' },
      ],
    },
    /** Nothing is pushed before the finalizer holds the Translation: what is pushed can then never outlive its record. */
    addingFinalizer: {
      entry: [
        'resumeToPushing',
        {
          type: 'addFinalizer',
          params: ({ context }) => ({ ref: context.ref, uid: context.uid ?? '', finalizer: TRANSLATION_FINALIZER }),
        },
      ],
      on: {
        finalizerAdded: [
          { guard: 'wasAdded', target: 'startingPush', actions: 'recordFinalizer' },
          { target: 'deciding', actions: 'recordFinalizer' },
        ],
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    /** Every push starts here: a Ready naming a generation it may replace is withdrawn first. */
    startingPush: {
      always: [{ guard: 'claimsAnother', target: 'withdrawingClaim' }, { target: 'pushing' }],
    },
    /**
     * Ready and Synced say False (pushing) before MidoNet is changed: while the push runs, MidoNet holds neither the
     * generation they named nor yet the new one. Not written, they would go on claiming it: the push waits in stuck.
     */
    withdrawingClaim: {
      entry: [
        'resumeToPushing',
        {
          type: 'recordStatus',
          params: ({ context }) => ({
            ref: context.ref,
            ...(context.uid ? { uid: context.uid } : {}),
            generation: context.claimedGeneration ?? context.pushedGeneration,
            state: 'pushing' as const,
            resources: context.pushed,
            ...keptRecord(context),
            eventReason: Reason.Pushing,
            eventMessage: `pushing generation ${context.generation} to MidoNet`,
          }),
        },
      ],
      on: {
        // An observation taken meanwhile (its deletion, its finalizer removed) is decided on first.
        eventRecorded: [
          { guard: 'mayPush', target: 'pushing', actions: 'withdrawClaim' },
          { target: 'deciding', actions: 'withdrawClaim' },
        ],
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    pushing: {
      entry: [
        'resumeToPushing',
        'startPush',
        {
          type: 'push',
          params: ({ context }) => ({
            owner: `translation/${context.ref.namespace}/${context.ref.name}`,
            resources: context.desired,
            previous: context.pushed,
            ...referenceOf(context),
            generation: context.generation,
            ...(context.lostPush ? { lostPush: context.lostPush } : {}),
          }),
        },
      ],
      on: {
        // A deletion does not wait for the push (it may be retrying on a parent that never comes): it is called off.
        observed: [
          {
            guard: 'observesEnd',
            target: 'abandoningPush',
            actions: ['observe', { type: 'abandon', params: { action: 'push' } }],
          },
          { actions: 'observe' },
        ],
        // The push said Ready for what it pushed (the generation it pushed): claimed from here on. Back through
        // deciding: a change or a deletion observed during the push is acted on now.
        pushed: { target: 'deciding', actions: ['recordPushed', 'claimPushed'] },
        // Through deciding: a deletion observed during the push is acted on rather than shown as invalid.
        actionFailed: [
          { guard: 'isInvalidTranslation', target: 'deciding', actions: ['recordFailure', 'recordInvalid'] },
          { target: 'stuck', actions: ['recordFailure', 'recordPushFailure'] },
        ],
      },
    },
    /**
     * The push is called off for a deletion: once it has stopped (what it sent is answered, nothing of it can land
     * later) the deletion goes on. A push that ended first counts as it ended.
     */
    abandoningPush: {
      on: {
        abandoned: 'deciding',
        pushed: { target: 'deciding', actions: ['recordPushed', 'claimPushed'] },
        actionFailed: { target: 'deciding', actions: ['recordFailure', 'recordPushFailure'] },
      },
    },
    /**
     * The Translation was refused whole (its condition and a Warning Event say which resource and field): nothing of
     * it was pushed, nothing is retried. A change of it is pushed again; its deletion deletes what an earlier, valid
     * generation pushed, and releases the finalizer.
     */
    invalid: {
      tags: ['continueAsNewSafe'],
      entry: failureStatus('invalid', (c) => ({
        reason: Reason.InvalidTranslation,
        message: `${c.lastError?.message ?? 'invalid'}; fix the Translation: it is pushed again when it changes`,
      })),
      on: {
        observed: observeAndDecide,
        refresh: { target: 'deciding', actions: ['recordAction', 'forgetInvalid'] },
        eventRecorded: {},
        actionFailed: {},
      },
    },
    synced: restingState('synced', driftCheckTimer, {
      observed: observeAndDecide,
      driftCheck: 'startingPush',
      backendChanged: { target: 'startingPush', actions: 'recordBackendChange' },
      refresh: { target: 'startingPush', actions: 'recordAction' },
    }),
    deleting: {
      entry: [
        'resumeToDeleting',
        {
          type: 'deleteBackend',
          params: ({ context }) => ({
            owner: `translation/${context.ref.namespace}/${context.ref.name}`,
            // What a push cut short may have made is in the record too, pending (startPush).
            resources: context.pushed,
            force: context.force,
            ...referenceOf(context),
          }),
        },
      ],
      on: {
        backendDeleted: { target: 'releasing', actions: 'recordDeleted' },
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    releasing: {
      entry: [
        'resumeToReleasing',
        {
          type: 'releaseFinalizer',
          params: ({ context }) => ({ ref: context.ref, uid: context.uid ?? '', finalizer: TRANSLATION_FINALIZER }),
        },
      ],
      on: {
        released: 'done',
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    stuck: {
      ...stuckState(
        failureStatus('stuck', (c) => ({
          reason: c.lastError?.reason ?? Reason.Stuck,
          message: `stuck while ${c.resumeTo}: ${c.lastError?.message ?? 'unknown error'}; retrying in about ${Math.round(stuckRetryDelayMs(c) / 1000)}s (longer after each failure), or run steward cleanup`,
        })),
      ),
      // Status writes fail too when the API server is the problem: the stuck state itself is what matters. New desired
      // resources observed meanwhile are pushed by the next retry; a change in MidoNet (what it waits for was created)
      // retries now.
      on: { ...stuckTransitions, backendChanged: { target: 'resuming', actions: 'recordBackendChange' } },
    },
    /**
     * An operator gave up (cleanup orphan or force). Eventless, so the guard reads the cleanup that led here: `force`
     * deletes the resources ignoring refusals, `orphan` leaves them in MidoNet recorded as orphaned; either way the
     * finalizer is released after.
     */
    givingUp: {
      always: [
        { guard: 'isForce', target: 'deleting', actions: 'forceDelete' },
        { target: 'releasing', actions: 'orphanResources' },
      ],
    },
    resuming: {
      always: [
        { guard: 'isUnobserved', target: 'observing' },
        { guard: 'isGoneWithoutUs', target: 'done' },
        { guard: 'mustDelete', target: 'deleting' },
        { guard: and(['resumesPushing', 'lacksFinalizer']), target: 'addingFinalizer' },
        { guard: 'resumesPushing', target: 'startingPush' },
        { guard: 'resumesDeleting', target: 'deleting' },
        { target: 'releasing' },
      ],
    },
    paused: pausedState(
      {
        // The push reported Synced on the Translation: it is said paused again, over that report.
        pushed: { guard: 'resumesPushing', actions: ['recordPushed', 'claimPushed', ...pausedStatus] },
        backendDeleted: { guard: 'resumesDeleting', actions: ['recordDeleted', 'resumeToReleasing'] },
        released: { guard: 'resumesReleasing', target: 'done' },
        finalizerAdded: { actions: 'recordFinalizer' },
        eventRecorded: {},
      },
      pausedStatus,
    ),
    done: { type: 'final' },
  },
});

/** The persisted record's versions: 2 renamed the first state `pending` to `observing`, as the other machines say. */
export const translationLifecycleMachine = versioned<
  TranslationMachineContext,
  TranslationMachineEvent,
  TranslationTimings,
  TranslationActionParams
>(translationMachine, [renameStates({ pending: 'observing' })]);

/**
 * The Translation the activities report on, and where they find what the workflow does not carry: its resources, or
 * its record.
 */
function referenceOf(context: TranslationMachineContext): { reference: TranslationReference } {
  return {
    reference: {
      ref: context.ref,
      uid: context.uid ?? '',
      readResources: context.byReference === true,
      readRecord: context.recordInStatus === true,
    },
  };
}

const keptRecord = (context: TranslationMachineContext): { keepChildResources?: true } =>
  context.recordInStatus ? { keepChildResources: true } : {};

function withPending(pushed: PushedResource[], desired: BackendResource[]): PushedResource[] {
  const asked = new Map<string, { resource: BackendResource; identity: { key: string; id: string } }>();
  for (const resource of desired) {
    const identity = identifyIfJson(resource);
    if (identity && !asked.has(identity.key)) asked.set(identity.key, { resource, identity });
  }
  // A push asking another body of what is still pending may write it before failing: each body is a candidate.
  const kept = pushed.map((entry) => {
    const body = asked.get(entry.key)?.resource.body;
    if (entry.state !== 'pending' || body === undefined || [entry.body, ...(entry.alsoAsked ?? [])].includes(body))
      return entry;
    const alsoAsked = [...(entry.alsoAsked ?? []), body].slice(1 - MAX_PENDING_BODIES);
    return { ...entry, alsoAsked };
  });
  const known = new Set(pushed.map((p) => p.key));
  const pending = [...asked.values()].flatMap(({ resource, identity }): PushedResource[] =>
    known.has(identity.key)
      ? []
      : [{ kind: resource.kind, parent: resource.parent ?? '', body: resource.body, ...identity, state: 'pending' }],
  );
  return [...kept, ...pending];
}
