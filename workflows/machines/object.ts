import { assign, setup } from 'xstate';
import {
  cleanupGuards,
  dependencyRetryTimer,
  driftCheckTimer,
  hostRetryTimer,
  failureOf,
  interpretedActions,
  lifecycleRoot,
  nextIncarnationOf,
  observeAndDecide,
  observingState,
  pausedEvent,
  pausedState,
  renameStates,
  restingState,
  stuckGuards,
  stuckState,
  stateTimer,
  stuckTransitions,
  versioned,
  withOperatorAction,
  type CommonLifecycleEvent,
  type RecordEventParams,
} from './common';
import type {
  ActionRecord,
  BackendChanged,
  CleanupRequest,
  DependencyChanged,
  LifecycleError,
  Observation,
  ResourceRef,
} from '../../model/messages';
import type { ObjectRef } from '../../model/naming';
import type { TranslationNote } from '../../model/translation/errors';
import { missingNodeAnnotations } from '../../model/translation/node-annotator';
import { Reason, REFUSED_REQUEST_REASONS } from '../../model/vocabulary';

/**
 * The lifecycle of a Kubernetes object that Steward translates (Node, Pod, Service, Endpoints): translate it into
 * Translation resources, apply them (owned by the object) and push their MidoNet resources, all in one step; keep
 * them current as the object, its dependency and MidoNet change; and on deletion delete what they pushed, let them
 * go, and drop the back-reference it left on its dependency (seed 003). One workflow per object: its Translations
 * have none of their own (machines/translation.ts is for those no object owns).
 */
export interface ObjectTimings {
  /** How long to wait before looking at a missing dependency (or a terminating Translation) again. */
  dependencyRetryMs: number;
  /** Periodic re-apply: repairs Translations changed or deleted by hand. */
  driftCheckMs: number;
  stuckRetryMs: number;
}
export const defaultObjectTimings: ObjectTimings = {
  dependencyRetryMs: 5_000,
  driftCheckMs: 30 * 60_000,
  stuckRetryMs: 60_000,
};

export interface ObjectContext {
  ref: ObjectRef;
  timings: ObjectTimings;
  /** MidoNet tenant of the translation; the default one when absent. */
  tenant?: string;
  uid?: string;
  /** The watcher's trimmed projection (or `{ invalid }` when the object could not be projected). */
  projection?: unknown;
  /** Projection of the last successful apply: referrers are told only when it changes. */
  appliedProjection?: string;
  /** Projection of the apply in flight: one observed meanwhile is translated after it, not taken as applied. */
  inFlightProjection?: string;
  deleting: boolean;
  gone: boolean;
  /** `<namespace>/<name>` of the Translations applied last. */
  translations: string[];
  /** Resources in MidoNet after the last push, over all its Translations. */
  pushedCount?: number;
  /** The first of them by name (activities/midonet/push.ts `NAMED_RESOURCES`), for the UI page; absent in older histories. */
  pushedResources?: ResourceRef[];
  /**
   * Since the apply in flight started, MidoNet changed under what its Translations name, or its dependency told it of
   * a change (its Translations pushed): applied again after it. Unheeded, the word of a dependency landing while the
   * apply found it not yet pushed was lost, and the object waited for its drift check (chaos seed 10: a Pod 30 min
   * without its port).
   */
  changedInFlight?: boolean;
  /** The dependency this object registered itself on as a referrer (to be removed when it goes). */
  dependency?: ObjectRef;
  /** What the translation left out that an Event on the object has told (e.g. IPv6 addresses): told once per change. */
  toldNotes?: TranslationNote[];
  waitingFor?: string;
  /** The dependency tells it when what it waits for changes: it rests on the drift check, not the retry timer. */
  waitNotified?: boolean;
  /** Looks in a row for the Node's MidoNet host (the node annotator's wait), for its backoff. */
  hostLooks?: number;
  resumeTo: 'translating' | 'finalizing';
  /** How the finalization in progress treats what was pushed: `delete`, or an operator's cleanup. */
  finalizeMode?: FinalizeMode;
  /** A lost push attempt's MidoNet writes may land this long after the finalization was asked (model/fence.ts). */
  lateWritesMs?: number;
  lastError?: LifecycleError;
  actions: ActionRecord[];
  nextIncarnation?: Observation;
}

/** Every event carries `at`, the workflow time it was taken in (stamped by the interpreter). */
export type ObjectEvent = (
  | { type: 'observed'; observation: Observation }
  | { type: 'dependencyChanged'; change: DependencyChanged }
  | { type: 'backendChanged'; notice: BackendChanged }
  | {
      type: 'applied';
      translations: string[];
      pushed?: number;
      resources?: ResourceRef[];
      dependency?: ObjectRef;
      toldNotes?: TranslationNote[];
    }
  | { type: 'mustWait'; reason: string; notified?: boolean; dependency?: ObjectRef }
  /** The node annotator filled these annotations (none: it is off, the Node is translated as it is). */
  | { type: 'annotated'; annotations?: Record<string, string> }
  /** `dependency`: the one it registered on before its translation failed. */
  | { type: 'invalid'; error: Omit<LifecycleError, 'at'>; dependency?: ObjectRef }
  | { type: 'referrersNotified' }
  | { type: 'finalized' }
  /** Nothing was finalized: a lost push attempt's writes may land until `until` (its Translation's fence). */
  | { type: 'lateWrites'; until: string }
  /** Nothing was finalized: the API server holds the object, not being deleted (a false claim of its deletion). */
  | { type: 'stillLive' }
  /** Its timer: they can have landed. */
  | { type: 'lateWritesSettled' }
  | { type: 'eventRecorded' }
  | CommonLifecycleEvent
) & { at: string };

export interface ObjectInput {
  ref: ObjectRef;
  timings?: Partial<ObjectTimings>;
  tenant?: string;
}

/** How a finalization treats what the Translations pushed (activities/object.ts). */
export type FinalizeMode = 'delete' | Exclude<CleanupRequest['mode'], 'retry'>;

/** Parameters of the actions the workflow executes. */
export interface ObjectActionParams {
  apply: {
    ref: ObjectRef;
    uid: string;
    projection: unknown;
    tenant?: string;
    previousDependency?: ObjectRef;
    toldNotes?: TranslationNote[];
    waitingFor?: string;
  };
  /** midonet-kubernetes' node annotator, for a Node that lacks a midonet.org annotation. */
  annotate: { ref: ObjectRef; uid: string };
  notifyReferrers: { ref: ObjectRef; uid: string };
  /**
   * `delete` what its Translations pushed, or an operator's cleanup (`orphan`: leave it in MidoNet; `force`: skip what
   * MidoNet refuses); then let them go.
   */
  finalize: { ref: ObjectRef; uid: string; dependency?: ObjectRef; mode: FinalizeMode };
  recordEvent: RecordEventParams;
}

/** Deletes or lets go of what the Translations pushed, as `finalizeMode` says. */
const finalizeAction = {
  type: 'finalize',
  params: ({ context }: { context: ObjectContext }) => ({
    ref: context.ref,
    uid: context.uid ?? '',
    ...(context.dependency && context.finalizeMode === 'delete' ? { dependency: context.dependency } : {}),
    mode: context.finalizeMode ?? ('delete' as const),
  }),
} as const;

const finalizeTransitions = {
  finalized: 'done',
  // A false claim of its deletion (anyone with Temporal access can signal one) is dropped; the object goes on.
  stillLive: { target: 'deciding', actions: 'dropDeletionClaim' },
  lateWrites: { target: 'waitingForLateWrites', actions: 'recordLateWrites' },
  actionFailed: { target: 'stuck', actions: 'recordFailure' },
} as const;

const finalizeAgain = [{ guard: 'isGivingUp', target: 'givingUp' }, { target: 'finalizing' }] as const;

/** Waits out a lost attempt's late writes, then finalizes again. */
const lateWritesTimer = stateTimer('lateWrites', (c: { lateWritesMs?: number }) => c.lateWritesMs ?? 1_000, {
  type: 'lateWritesSettled',
});

/** Being deleted, or gone (another incarnation proves it). */
const isGone = (context: ObjectContext) => context.gone || context.deleting;

/** In a state that rests, a change of the object or of its dependency, or an operator's refresh, translates again. */
const translateAgain = {
  observed: observeAndDecide,
  dependencyChanged: 'deciding',
  backendChanged: 'deciding',
  refresh: { target: 'deciding', actions: 'recordAction' },
} as const;

export const objectMachine = setup({
  types: { context: {} as ObjectContext, events: {} as ObjectEvent, input: {} as ObjectInput },
  actions: {
    ...interpretedActions<ObjectActionParams>(['apply', 'annotate', 'notifyReferrers', 'finalize', 'recordEvent']),
    observe: assign(({ context, event }) => {
      if (event.type !== 'observed') return {};
      const o = event.observation;
      const next = nextIncarnationOf(context.uid, o);
      if (next) return next;
      // Deletion cannot be undone: a late or replayed observation without it does not resurrect the object.
      return {
        uid: o.uid,
        projection: o.projection,
        deleting: context.deleting || o.deleting,
        gone: context.gone || o.gone,
      };
    }),
    recordApplied: assign(({ context, event }) =>
      event.type === 'applied'
        ? {
            translations: event.translations,
            dependency: event.dependency,
            toldNotes: event.toldNotes,
            pushedCount: event.pushed,
            pushedResources: event.resources,
            appliedProjection: context.inFlightProjection,
            waitingFor: undefined,
            lastError: undefined,
          }
        : {},
    ),
    startApply: assign(({ context }) => ({
      inFlightProjection: JSON.stringify(context.projection),
      changedInFlight: false,
    })),
    recordChangeInFlight: assign({ changedInFlight: true }),
    recordWait: assign(({ context, event }) =>
      event.type === 'mustWait'
        ? {
            waitingFor: event.reason,
            waitNotified: event.notified === true,
            dependency: event.dependency ?? context.dependency,
          }
        : {},
    ),
    recordHostWait: assign(({ context, event }) =>
      event.type === 'mustWait' ? { waitingFor: event.reason, hostLooks: (context.hostLooks ?? 0) + 1 } : {},
    ),
    /** The annotations written are the Node's now: translated at once, before the watcher's next observation. */
    recordAnnotations: assign(({ context, event }) => {
      const node = context.projection as { metadata?: { annotations?: Record<string, string> } } | undefined;
      if (event.type !== 'annotated' || !node?.metadata) return {};
      const annotations = { ...node.metadata.annotations, ...event.annotations };
      return {
        projection: { ...node, metadata: { ...node.metadata, annotations } },
        hostLooks: undefined,
        waitingFor: undefined,
      };
    }),
    recordInvalid: assign(({ context, event }) =>
      event.type === 'invalid'
        ? { lastError: { ...event.error, at: event.at }, dependency: event.dependency ?? context.dependency }
        : {},
    ),
    recordFailure: assign(({ context, event }) => failureOf(event, context.lastError)),
    recordAction: assign(({ context, event }) => withOperatorAction(context.actions, event)),
    resumeToTranslating: assign({ resumeTo: 'translating' as const }),
    resumeToFinalizing: assign({ resumeTo: 'finalizing' as const }),
    dropDeletionClaim: assign({ deleting: false, gone: false }),
    finalizeDeleting: assign({ finalizeMode: 'delete' as const }),
    // givingUp is entered by a cleanup orphan or force only (common.ts cleanupTransitions), and again after a wait.
    finalizeGivingUp: assign(({ context, event }) =>
      event.type === 'cleanup'
        ? { finalizeMode: event.request.mode === 'force' ? ('force' as const) : ('orphan' as const) }
        : { finalizeMode: context.finalizeMode ?? ('orphan' as const) },
    ),
    recordLateWrites: assign(({ event }) =>
      event.type === 'lateWrites'
        ? { lateWritesMs: Math.max(Date.parse(event.until) - Date.parse(event.at), 1_000) }
        : {},
    ),
  },
  guards: {
    isGone: ({ context }) => isGone(context),
    isRefusedRequest: ({ event }) =>
      event.type === 'actionFailed' && (REFUSED_REQUEST_REASONS as readonly string[]).includes(event.reason),
    isInvalid: ({ context }) =>
      typeof context.projection === 'object' && context.projection !== null && 'invalid' in context.projection,
    /** Only a change of what the translation reads is worth telling the referrers about. */
    changedSinceApplied: ({ context }) => context.appliedProjection !== context.inFlightProjection,
    /** The object, MidoNet or its dependency changed while its apply ran: the result is of an older world. */
    observedSinceApply: ({ context }) =>
      context.changedInFlight === true || JSON.stringify(context.projection) !== context.inFlightProjection,
    isUnobserved: ({ context }) => context.uid === undefined,
    /** A Node without a midonet.org annotation its translation reads: the node annotator's turn first. */
    needsAnnotation: ({ context }) => {
      const node = context.projection as { kind?: string; metadata?: { annotations?: Record<string, string> } };
      return node?.kind === 'Node' && missingNodeAnnotations(node.metadata?.annotations).length > 0;
    },
    /** The wait is news (its first look, or another reason): told in an Event; the same wait again is not. */
    isNewWait: ({ context, event }) => event.type === 'mustWait' && event.reason !== context.waitingFor,
    resumesFinalizing: ({ context }) => context.resumeTo === 'finalizing',
    isGivingUp: ({ context }) => context.finalizeMode === 'orphan' || context.finalizeMode === 'force',
    ...stuckGuards(isGone),
    ...cleanupGuards(isGone),
  },
}).createMachine({
  id: 'object',
  context: ({ input }) => ({
    ref: input.ref,
    timings: { ...defaultObjectTimings, ...input.timings },
    ...(input.tenant ? { tenant: input.tenant } : {}),
    deleting: false,
    gone: false,
    translations: [],
    resumeTo: 'translating',
    actions: [],
  }),
  ...lifecycleRoot,
  states: {
    observing: observingState,
    deciding: {
      always: [
        { guard: 'isGone', target: 'finalizing' },
        { guard: 'isInvalid', target: 'invalid' },
        { guard: 'needsAnnotation', target: 'annotating' },
        { target: 'translating' },
      ],
    },
    /**
     * midonet-kubernetes' node annotator as a step of the Node's lifecycle: the missing annotations filled (host by
     * name from MidoNet, first InternalIP, default zone) and translated at once; while MidoNet has no host of its
     * name, it waits, looking again with backoff and at once when the Node changes.
     */
    annotating: {
      entry: [
        'resumeToTranslating',
        { type: 'annotate', params: ({ context }) => ({ ref: context.ref, uid: context.uid ?? '' }) },
      ],
      on: {
        annotated: [
          { guard: 'isGone', target: 'finalizing' },
          { target: 'translating', actions: 'recordAnnotations' },
        ],
        mustWait: [
          { guard: 'isGone', target: 'finalizing' },
          {
            guard: 'isNewWait',
            target: 'waitingForMidonetHost',
            actions: [
              {
                type: 'recordEvent',
                params: ({ context, event }) => ({
                  ref: context.ref,
                  type: 'Normal' as const,
                  reason: Reason.WaitingForMidonetHost,
                  message: event.type === 'mustWait' ? event.reason : '',
                }),
              },
              'recordHostWait',
            ],
          },
          { target: 'waitingForMidonetHost', actions: 'recordHostWait' },
        ],
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    waitingForMidonetHost: restingState('waitingForMidonetHost', hostRetryTimer, {
      ...translateAgain,
      retry: 'deciding',
      eventRecorded: {},
      actionFailed: {},
    }),
    translating: {
      entry: [
        'resumeToTranslating',
        'startApply',
        {
          type: 'apply',
          params: ({ context }) => ({
            ref: context.ref,
            uid: context.uid ?? '',
            projection: context.projection,
            ...(context.tenant ? { tenant: context.tenant } : {}),
            ...(context.dependency ? { previousDependency: context.dependency } : {}),
            ...(context.toldNotes ? { toldNotes: context.toldNotes } : {}),
            ...(context.waitingFor ? { waitingFor: context.waitingFor } : {}),
          }),
        },
      ],
      on: {
        // Deletion may be observed while the apply runs: its result then only matters for the back-reference.
        applied: [
          { guard: 'isGone', target: 'finalizing', actions: 'recordApplied' },
          { guard: 'changedSinceApplied', target: 'notifying', actions: 'recordApplied' },
          { guard: 'observedSinceApply', target: 'deciding', actions: 'recordApplied' },
          { target: 'ready', actions: 'recordApplied' },
        ],
        mustWait: [
          { guard: 'isGone', target: 'finalizing' },
          { guard: 'observedSinceApply', target: 'deciding' },
          { target: 'waitingForDependency', actions: 'recordWait' },
        ],
        invalid: [
          { guard: 'isGone', target: 'finalizing' },
          { guard: 'observedSinceApply', target: 'deciding' },
          { target: 'invalid', actions: 'recordInvalid' },
        ],
        // The API server refused the Translations themselves (e.g. a name over 253 characters): no retry can help.
        actionFailed: [
          { guard: 'isRefusedRequest', target: 'invalid', actions: 'recordFailure' },
          { target: 'stuck', actions: 'recordFailure' },
        ],
        backendChanged: { actions: 'recordChangeInFlight' },
        dependencyChanged: { actions: 'recordChangeInFlight' },
      },
    },
    /** A dependency (Node, Service) tells its referrers (Pods, Endpoints) to repair their resources. */
    notifying: {
      entry: { type: 'notifyReferrers', params: ({ context }) => ({ ref: context.ref, uid: context.uid ?? '' }) },
      on: {
        referrersNotified: [
          { guard: 'isGone', target: 'finalizing' },
          { guard: 'observedSinceApply', target: 'deciding' },
          { target: 'ready' },
        ],
        // Referrers also re-check on their own timer; a failed notification must not block this object.
        actionFailed: [
          { guard: 'isGone', target: 'finalizing' },
          { guard: 'observedSinceApply', target: 'deciding', actions: 'recordFailure' },
          { target: 'ready', actions: 'recordFailure' },
        ],
        backendChanged: { actions: 'recordChangeInFlight' },
        dependencyChanged: { actions: 'recordChangeInFlight' },
      },
    },
    ready: restingState('ready', driftCheckTimer, { ...translateAgain, driftCheck: 'deciding' }),
    waitingForDependency: restingState('waitingForDependency', dependencyRetryTimer, {
      ...translateAgain,
      retry: 'deciding',
    }),
    /** The object cannot be translated (e.g. a Node without its host-id annotation): shown until it changes. */
    invalid: {
      tags: ['continueAsNewSafe'],
      entry: {
        type: 'recordEvent',
        params: ({ context }) => ({
          ref: context.ref,
          type: 'Warning' as const,
          reason: context.lastError?.reason ?? Reason.Invalid,
          message: context.lastError?.message ?? 'cannot be translated',
        }),
      },
      on: { eventRecorded: {}, actionFailed: {}, ...translateAgain },
    },
    finalizing: {
      entry: ['resumeToFinalizing', 'finalizeDeleting', finalizeAction],
      on: finalizeTransitions,
    },
    /** A lost push attempt's writes may still land: nothing is deleted before they can have (model/fence.ts). */
    waitingForLateWrites: {
      tags: ['continueAsNewSafe'],
      entry: lateWritesTimer.start,
      exit: lateWritesTimer.cancel,
      // In a new run (its timer gone) the finalization asks again: it says whether the writes have landed by now.
      on: { lateWritesSettled: finalizeAgain, resumed: finalizeAgain },
    },
    stuck: {
      ...stuckState({
        type: 'recordEvent',
        params: ({ context }: { context: ObjectContext }) => ({
          ref: context.ref,
          type: 'Warning' as const,
          reason: context.lastError?.reason ?? Reason.Stuck,
          message: `stuck while ${context.resumeTo}: ${context.lastError?.message ?? 'unknown error'}`,
        }),
      }),
      // A change in MidoNet (what it waits for was created) retries now.
      on: { ...stuckTransitions, backendChanged: 'resuming', dependencyChanged: 'resuming' },
    },
    /**
     * An operator gave up (cleanup orphan or force): `orphan` leaves what its Translations pushed in MidoNet, `force`
     * deletes it skipping what MidoNet refuses; either way its Translations are let go and the object is released.
     */
    givingUp: {
      entry: ['finalizeGivingUp', finalizeAction],
      on: finalizeTransitions,
    },
    resuming: {
      always: [
        { guard: 'isUnobserved', target: 'observing' },
        { guard: 'isGone', target: 'finalizing' },
        { guard: 'resumesFinalizing', target: 'finalizing' },
        { target: 'deciding' },
      ],
    },
    paused: pausedState(
      {
        applied: { actions: 'recordApplied' },
        annotated: { actions: 'recordAnnotations' },
        finalized: { guard: 'resumesFinalizing', target: 'done' },
        eventRecorded: {},
      },
      pausedEvent((context: ObjectContext) => context.ref),
    ),
    done: { type: 'final' },
  },
});

/** The persisted record's versions: 2 renamed `releasing` (an operator gave up) to `givingUp`, as the other machines say. */
export const objectLifecycleMachine = versioned<ObjectContext, ObjectEvent, ObjectTimings, ObjectActionParams>(
  objectMachine,
  [renameStates({ releasing: 'givingUp' })],
);
