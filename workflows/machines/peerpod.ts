import { and, assign, not, setup } from 'xstate';
import {
  cleanupGuards,
  driftCheckTimer,
  failureOf,
  interpretedActions,
  lifecycleRoot,
  observingState,
  pausedEvent,
  pausedState,
  restingState,
  stuckGuards,
  stuckState,
  stuckTransitions,
  versioned,
  withOperatorAction,
  type CommonLifecycleEvent,
  type RecordEventParams,
} from './common';
import type { ActionRecord, BackendChanged, LifecycleError, Observation } from '../../model/messages';
import type { ObjectRef } from '../../model/naming';
import type { PeerPodProjection } from '../../model/peerpod-projection';
import { PEERPOD_FINALIZER, Reason, VM_DOWN_STATES } from '../../model/vocabulary';
import { vmName } from '../../model/vm-naming';

/**
 * The lifecycle of one peer pod's cloud VM (seed 002), in the workflow `peerpod/<ns>/<name>`. Two objects feed it:
 *
 * - a Pod of the peer-pod runtime class (the workflow is named after it): Steward creates the VM behind a create
 *   guard (the VM's name is chosen and recorded before the cloud is called, and every retry finds the VM by its
 *   pod-UID tag), records it in a PeerPod (owned by the Pod, held by `peer.pod/finalizer`), and deletes the VM when
 *   the Pod goes, then releases the PeerPod — the normal path;
 * - a PeerPod, Steward's or cloud-api-adaptor's: when the garbage collector deletes one whose finalizer is still
 *   there, the VM named by its fields is deleted and the finalizer released — the failure path.
 *
 * The first observation says whose VM it is, and the lifecycle lives in that owner's states: `own` (a Pod's VM, made,
 * recorded, looked at, started or made again by Steward) or `tracked` (a PeerPod alone names it: looked at and said,
 * never made nor started); both end through the same `ending`, `deletingVm`, `releasing`, `stuck` and `givingUp`.
 *
 * One workflow per peer pod makes both paths one writer, so they never race. A VM deletion that outlasts the
 * activity's retries parks the machine in `stuck` (retried slowly, shown everywhere) until the cloud recovers or an
 * operator acts: `cleanup --mode retry` tries again now; `orphan` and `force` release the PeerPod and leave the VM,
 * which keeps its Steward tags, so the sweeper still removes it once the cloud answers: nothing leaks.
 */
export interface PeerPodTimings {
  /** Periodic check that the VM of a live pod is still there (re-created when it vanished). */
  driftCheckMs: number;
  stuckRetryMs: number;
}
export const defaultPeerPodTimings: PeerPodTimings = { driftCheckMs: 30 * 60_000, stuckRetryMs: 60_000 };

// Its schema is in peerpod-projection.ts: this machine is preloaded into the worker's shared context, a schema is not.
export type { PeerPodProjection };

export interface VmRecord {
  provider: string;
  instanceId: string;
  /** The cloud it was made in, as the provider names it: a worker seeing another one refuses to call it gone. */
  cloud?: string;
  /** The pod it runs: a pre-v0.20 numeric libvirt ID is accepted only for a domain named after it. */
  podName?: string;
}

export interface PeerPodContext {
  ref: ObjectRef;
  timings: PeerPodTimings;
  /** The pod's UID: the incarnation this lifecycle serves (a PeerPod without a Pod: its owner's UID, if any). */
  uid?: string;
  pod?: { uid: string; gone: boolean };
  peerPod?: { uid: string; name: string; held: boolean; deleting: boolean; gone: boolean };
  /** The create intent: the VM's name, chosen before the cloud is called, and when. */
  intent?: { name: string; at: string };
  vm?: VmRecord;
  /** The PeerPod that records `vm` was written. */
  recorded: boolean;
  /** Released by an operator (cleanup orphan/force) without being deleted. */
  orphanedVm?: VmRecord;
  /** The last VM deleted, given up or found missing: a PeerPod still naming it does not bring it back. */
  settledVmId?: string;
  /** What the cloud last said of `vm`'s power state (`running`, `stopped`, …), when it was looked at. */
  vmState?: string;
  /** The VM a live pod lost (its PeerPod deleted by hand, or gone from the cloud), until another one runs it. */
  lostVm?: { instanceId: string; why: string };
  /** How many VMs this pod lost: the next one's name tells them apart (vmName's `replacement`). */
  vmReplacements?: number;
  /** Our PeerPod released while the pod lived: its late observations are of a record gone, not of the next one. */
  releasedPeerPodUid?: string;
  /**
   * The PeerPod someone else (cloud-api-adaptor) wrote for this Pod: its VM is theirs, tracked by that PeerPod's
   * workflow; this one rests in `own.madeElsewhere`, and a resumed run goes back there instead of creating.
   */
  trackedBy?: string;
  /**
   * A PeerPod alone, cloud-api-adaptor's (no `cloud` in it): the Pod it names as its owner, told when the VM it tracks
   * is lost. Set, the lifecycle is `tracked` for good, whatever it observes next.
   */
  owner?: string;
  resumeTo: 'creating' | 'deleting';
  /** The worker's VM watch told of a change while the VM was being made or recorded: it is looked at once that ends. */
  vmChangedInFlight?: true;
  lastError?: LifecycleError;
  actions: ActionRecord[];
  nextIncarnation?: Observation;
}

export type PeerPodEvent = (
  | { type: 'observed'; observation: Observation }
  /** `peerPod`: the PeerPod recording it was written by the same call. */
  | { type: 'vmCreated'; vm: VmRecord; peerPod?: RecordedPeerPod }
  | { type: 'vmMadeElsewhere'; peerPod: string }
  | { type: 'olderRetired' }
  | ({ type: 'peerPodRecorded' } & RecordedPeerPod)
  /** `state`: the provider's power state (provider.ts `InstanceState`) of a VM that exists. */
  | { type: 'vmObserved'; exists: boolean; state?: string }
  /** `exists: false`: the VM to start was gone. */
  | { type: 'vmStarted'; exists: boolean }
  /** Which incarnation of the Pod the API server holds, if any. */
  | { type: 'podRead'; uid?: string }
  | { type: 'vmDeleted' }
  | { type: 'released' }
  | { type: 'eventRecorded' }
  /** The cloud answers again (the worker saw it return): a stuck lifecycle retries now. */
  | { type: 'backendChanged'; notice: BackendChanged }
  | CommonLifecycleEvent
) & { at: string };

export interface PeerPodInput {
  ref: ObjectRef;
  timings?: Partial<PeerPodTimings>;
}

/** Parameters of the actions the workflow executes. */
export interface PeerPodActionParams {
  createVm: {
    name: string;
    podUid: string;
    namespace: string;
    podName: string;
    replaces?: { instanceId: string; why: string };
  };
  recordPeerPod: { namespace: string; podName: string; podUid: string; vm: VmRecord; vmName: string };
  observeVm: { vm: VmRecord };
  startVm: { vm: VmRecord };
  readPod: { namespace: string; name: string };
  /** Deletes `vm`, or when none is recorded (a create whose reply was lost), the VMs tagged with the pod's UID. */
  deleteVm: { vm?: VmRecord; podUid?: string };
  /**
   * Removes only `peer.pod/finalizer`, from this incarnation of the PeerPod; with `livePodUid`, the Pod lives on and
   * its VM annotations go too (its VM is gone).
   */
  release: { namespace: string; name: string; uid: string; livePodUid?: string };
  recordEvent: RecordEventParams;
  /** Deletes the PeerPods of the same Pod created before this one (upstream #1510). */
  retireOlderPeerPods: { namespace: string; name: string; uid: string };
}

/** The Pod went, or the PeerPod is being deleted while it still holds our finalizer. */
const isEnding = (context: PeerPodContext) =>
  (context.pod?.gone ?? false) || (context.peerPod ? context.peerPod.deleting || context.peerPod.gone : false);

/** A PeerPod whose finalizer someone else removed (cloud-api-adaptor's normal path): nothing left to do here. */
const releasedByOthers = (context: PeerPodContext) =>
  context.pod === undefined && context.peerPod !== undefined && !context.peerPod.held;

/**
 * Whose VM this is, by what the lifecycle observed: `own`, a Pod's, which Steward makes, starts and deletes; `tracked`,
 * one a PeerPod alone names (cloud-api-adaptor's, or Steward's whose Pod it does not see), looked at and said, deleted
 * with its PeerPod, never made nor started.
 */
const isTracked = (context: PeerPodContext) => context.owner !== undefined || context.pod === undefined;

/** Where the lifecycle belongs now: its VM's ending, or the states of its VM's owner. */
function placeOf(context: PeerPodContext): 'ending' | 'own' | 'tracked' {
  if (releasedByOthers(context) || isEnding(context)) return 'ending';
  return isTracked(context) ? 'tracked' : 'own';
}

const isPod = (o: Observation) => (o.projection as PeerPodProjection | undefined)?.source === 'Pod';

/** What an observation teaches: the `observe` action, and the guards that ask where it leads before it is taken. */
function observedInto(context: PeerPodContext, o: Observation): Partial<PeerPodContext> {
  if (isPod(o)) {
    // Another Pod with this name proves this one gone (its deletion may never have been observed): its VM goes,
    // then the latest next Pod is served.
    if (context.pod && context.pod.uid !== o.uid) return { nextIncarnation: o, pod: { ...context.pod, gone: true } };
    // Deletion cannot be undone: a late observation without it does not bring the Pod back.
    return { uid: o.uid, pod: { uid: o.uid, gone: (context.pod?.gone ?? false) || o.deleting || o.gone } };
  }
  if (o.uid === context.releasedPeerPodUid) return {};
  const p = o.projection as Extract<PeerPodProjection, { source: 'PeerPod' }>;
  // A record of another incarnation of the Pod is that incarnation's business.
  if (context.uid && p.ownerUid && p.ownerUid !== context.uid) return {};
  const previous = context.peerPod?.uid === o.uid ? context.peerPod : undefined;
  const recordedVm =
    p.instanceID && p.cloudProvider
      ? {
          provider: p.cloudProvider,
          instanceId: p.instanceID,
          ...(p.cloud ? { cloud: p.cloud } : {}),
          ...(p.ownerName ? { podName: p.ownerName } : {}),
        }
      : undefined;
  return {
    uid: context.uid ?? p.ownerUid,
    // Only cloud-api-adaptor's records lack the cloud Steward writes in its own.
    ...(context.pod === undefined && p.ownerName && !p.cloud ? { owner: p.ownerName } : {}),
    peerPod: {
      uid: o.uid,
      name: o.ref.name,
      held: o.finalizers.includes(PEERPOD_FINALIZER) && !o.gone,
      deleting: (previous?.deleting ?? false) || o.deleting,
      gone: (previous?.gone ?? false) || o.gone,
    },
    // The PeerPod is the record of a VM this workflow did not create (cloud-api-adaptor's, or a lost run's).
    ...(context.vm || !recordedVm || recordedVm.instanceId === context.settledVmId
      ? {}
      : { vm: recordedVm, recorded: true }),
  };
}

/** The place the lifecycle would belong in once `event`, an observation, is taken in. */
const placeAfter = (context: PeerPodContext, event: PeerPodEvent) =>
  placeOf(event.type === 'observed' ? { ...context, ...observedInto(context, event.observation) } : context);

/** What writing the PeerPod answered: its name and UID, and whether it was being deleted (activities/kubernetes). */
interface RecordedPeerPod {
  name: string;
  uid: string;
  deleting?: true;
}

/** The PeerPod just written for the VM: held by our finalizer, unless an observation of it already said more. */
const recordedIn = (context: PeerPodContext, { name, uid, deleting }: RecordedPeerPod) => ({
  recorded: true,
  peerPod: {
    uid,
    name,
    held: true,
    deleting: false,
    gone: false,
    // Only an observation of this very PeerPod says more (one of an older PeerPod of the name is not this one's).
    ...(context.peerPod?.uid === uid ? context.peerPod : {}),
    // Written into while being deleted (an older incarnation's, not yet released): let go, and another one written.
    ...(deleting ? { deleting } : {}),
  },
});

/** A live pod's VM lost: named, counted (the next one gets a name of its own), once per loss. */
const lostVm = (context: PeerPodContext, why: string) =>
  context.lostVm
    ? {}
    : {
        lostVm: { instanceId: context.vm?.instanceId ?? context.intent?.name ?? '', why },
        vmReplacements: (context.vmReplacements ?? 0) + 1,
      };

const podLives = (context: PeerPodContext) => context.pod !== undefined && !context.pod.gone;

/** The VM observed is down (model/vocabulary.ts `VM_DOWN_STATES`). */
const isDown = (event: PeerPodEvent) =>
  event.type === 'vmObserved' && event.exists && VM_DOWN_STATES.has(event.state ?? '');

/** The VM as an Event names it: its id and what the cloud last said of it. */
const vmSaid = (context: PeerPodContext) => `VM ${context.vm?.instanceId ?? ''} (${context.vmState ?? 'not running'})`;

/** The object an Event about this lifecycle is attached to: the Pod while it lives, else the PeerPod. */
function eventTarget(context: PeerPodContext): ObjectRef {
  const { ref } = context;
  if (context.pod && !context.pod.gone) return { kind: 'Pod', namespace: ref.namespace, name: ref.name };
  return { kind: 'PeerPod', namespace: ref.namespace, name: context.peerPod?.name ?? ref.name };
}

/**
 * What a tracked VM's trouble is said with: on the owner Pod, by the UID the PeerPod names (no read needed), while
 * that is cloud-api-adaptor's live PeerPod (the Pod is what lost its VM); else on the PeerPod itself.
 */
interface TrackedTelling {
  target: { ref: ObjectRef; uid?: string };
  missing: { reason: Reason; message: string };
  shutOff: string;
}

function trackedTelling(context: PeerPodContext): TrackedTelling {
  const peerPod = context.peerPod?.name ?? context.ref.name;
  const id = context.settledVmId ?? context.vm?.instanceId ?? '';
  if (context.owner !== undefined && !context.peerPod?.deleting)
    return {
      target: {
        ref: { kind: 'Pod', namespace: context.ref.namespace, name: context.owner },
        uid: context.uid ?? '',
      },
      missing: { reason: Reason.PodVmLost, message: podVmLostMessage(context, 'it is gone from the cloud') },
      shutOff: `this Pod's ${vmSaid(context)} is shut off; it was made by cloud-api-adaptor (PeerPod ${peerPod}), so Steward does not start it: cloud-api-adaptor may, or delete the Pod to get a new one`,
    };
  return {
    target: { ref: eventTarget(context) },
    missing: {
      reason: Reason.VmMissing,
      message: `PeerPod ${peerPod} names VM ${id}, which the cloud does not have: nothing here makes it again (only a live Pod's own VM is made by Steward)`,
    },
    shutOff: `PeerPod ${peerPod} names ${vmSaid(context)}, which is shut off: nothing here starts it (only a live Pod's own VM is started by Steward)`,
  };
}

function podVmLostMessage(context: PeerPodContext, how: string): string {
  return `this Pod lost its VM ${context.vm?.instanceId ?? context.settledVmId ?? ''} (${how}); it was made by cloud-api-adaptor (PeerPod ${context.peerPod?.name ?? context.ref.name}), so Steward makes no other: cloud-api-adaptor may, or delete the Pod to get a new one`;
}

/** A Pod's own VM found missing (looked for, or gone before it could be started): forgotten, said, made again. */
const ownVmMissing = [
  'noteVmGone',
  'forgetVm',
  {
    type: 'recordVmMissing',
    params: ({ context }: { context: PeerPodContext }) => ({
      reason: Reason.VmMissing,
      message: `the VM of this peer pod (${context.settledVmId ?? ''}) is gone from the cloud${podLives(context) ? '; creating it again' : ''}`,
    }),
  },
  {
    type: 'recordEvent',
    params: ({ context }: { context: PeerPodContext }) => ({
      ref: eventTarget(context),
      type: 'Warning' as const,
      reason: Reason.VmMissing,
      message: context.lastError?.message ?? '',
    }),
  },
] as const;

/** A tracked VM found missing: forgotten and said, where trackedTelling says; never made again here. */
const trackedVmMissing = [
  'forgetVm',
  {
    type: 'recordVmMissing',
    params: ({ context }: { context: PeerPodContext }) => trackedTelling(context).missing,
  },
  {
    type: 'recordEvent',
    params: ({ context }: { context: PeerPodContext }) => ({
      ...trackedTelling(context).target,
      type: 'Warning' as const,
      ...trackedTelling(context).missing,
    }),
  },
] as const;

/**
 * Looking at the VM, as each owner's states do: `missing` when the cloud has none, `down` (its own transition) when it
 * is shut off, else its state noted; then the owner's `deciding`.
 */
const checkingVmState = <const TMissing, const TDown>(missing: TMissing, down: TDown) =>
  ({
    entry: {
      type: 'observeVm',
      params: ({ context }: { context: PeerPodContext }) => ({ vm: context.vm ?? { provider: '', instanceId: '' } }),
    },
    on: {
      vmObserved: [
        { guard: 'vmMissing', target: 'deciding', actions: missing },
        down,
        { target: 'deciding', actions: 'noteVmState' },
      ],
      eventRecorded: {},
      actionFailed: { target: 'deciding', actions: 'recordFailure' },
    },
  }) as const;

/** In a resting state, an observation is taken in; one that changes where the lifecycle belongs decides again. */
const observedWhile = <const TLeaves extends 'leavesOwnAfter' | 'leavesTrackedAfter'>(leaves: TLeaves) =>
  [{ guard: leaves, target: '#peerpod.deciding', actions: 'observe' }, { actions: 'observe' }] as const;

export const peerPodMachine = setup({
  types: { context: {} as PeerPodContext, events: {} as PeerPodEvent, input: {} as PeerPodInput },
  actions: {
    ...interpretedActions<PeerPodActionParams>([
      'createVm',
      'recordPeerPod',
      'observeVm',
      'startVm',
      'readPod',
      'deleteVm',
      'release',
      'recordEvent',
      'retireOlderPeerPods',
    ]),
    observe: assign(({ context, event }) =>
      event.type === 'observed' ? observedInto(context, event.observation) : {},
    ),
    recordIntent: assign(({ context, event }) =>
      context.intent
        ? {}
        : { intent: { name: vmName(context.ref.name, context.uid ?? '', context.vmReplacements), at: event.at } },
    ),
    recordVm: assign(({ context, event }) =>
      event.type === 'vmCreated'
        ? {
            vm: event.vm,
            lastError: undefined,
            lostVm: undefined,
            ...(event.peerPod ? recordedIn(context, event.peerPod) : {}),
          }
        : {},
    ),
    /** The live pod's VM goes with its PeerPod, deleted by hand: another one is made once both are gone. */
    notePeerPodDeleted: assign(({ context }) =>
      lostVm(context, `its PeerPod ${context.peerPod?.name ?? ''} was deleted, and the VM with it`),
    ),
    noteVmGone: assign(({ context }) => (podLives(context) ? lostVm(context, 'it was gone from the cloud') : {})),
    /** The API server has another Pod, or none: the one served is gone, even if its deletion was never observed. */
    markPodGone: assign(({ context }) => (context.pod ? { pod: { ...context.pod, gone: true } } : {})),
    /** Our PeerPod released while the pod lives: the next one is written for the next VM. */
    forgetPeerPod: assign(({ context }) => ({
      releasedPeerPodUid: context.peerPod?.uid,
      peerPod: undefined,
      recorded: false,
    })),
    noteVmState: assign(({ context, event }) => ({
      vmState: event.type === 'vmObserved' && event.exists ? event.state : undefined,
      // Seen running again (started by someone, or by the previous check): a shut-off said before is over.
      ...(context.lastError?.reason === Reason.VmShutOff && !isDown(event) ? { lastError: undefined } : {}),
    })),
    noteVmStarted: assign({ vmState: 'running', lastError: undefined }),
    recordVmShutOff: assign(({ event }, { message }: { message: string }) => ({
      lastError: { reason: Reason.VmShutOff, message, at: event.at },
    })),
    recordVmMissing: assign(({ event }, { reason, message }: { reason: Reason; message: string }) => ({
      lastError: { reason, message, at: event.at },
    })),
    recordMadeElsewhere: assign(({ event }) =>
      event.type === 'vmMadeElsewhere' ? { trackedBy: event.peerPod, intent: undefined, lastError: undefined } : {},
    ),
    recordVmChange: assign({ vmChangedInFlight: true as const }),
    forgetVmChange: assign({ vmChangedInFlight: undefined }),
    rememberPeerPod: assign(({ context, event }) =>
      event.type === 'peerPodRecorded' ? { ...recordedIn(context, event), lastError: undefined } : {},
    ),
    forgetVm: assign(({ context }) => ({
      vm: undefined,
      intent: undefined,
      recorded: false,
      settledVmId: context.vm?.instanceId ?? context.settledVmId,
    })),
    orphanVm: assign(({ context }) => ({
      orphanedVm: context.vm,
      vm: undefined,
      intent: undefined,
      settledVmId: context.vm?.instanceId ?? context.settledVmId,
    })),
    clearError: assign({ lastError: undefined }),
    recordFailure: assign(({ context, event }) => failureOf(event, context.lastError)),
    recordAction: assign(({ context, event }) => withOperatorAction(context.actions, event)),
    resumeToCreating: assign({ resumeTo: 'creating' as const }),
    resumeToDeleting: assign({ resumeTo: 'deleting' as const }),
  },
  guards: {
    isEnding: ({ context }) => isEnding(context),
    releasedByOthers: ({ context }) => releasedByOthers(context),
    isTracked: ({ context }) => isTracked(context),
    /** Still a live Pod's own VM, or still tracked: nothing seen since (a step's result, an observation) ends it. */
    stillOwn: ({ context }) => placeOf(context) === 'own',
    stillTracked: ({ context }) => placeOf(context) === 'tracked',
    leavesOwnAfter: ({ context, event }) => placeAfter(context, event) !== 'own',
    leavesTrackedAfter: ({ context, event }) => placeAfter(context, event) !== 'tracked',
    needsVm: ({ context }) => context.vm === undefined,
    needsRecord: ({ context }) => !context.recorded,
    madeElsewhere: ({ context }) => context.trackedBy !== undefined,
    /** A VM named by our PeerPod (a lost run's), not made by this run: looked for before it is served. */
    vmFromRecord: ({ context }) => context.vm !== undefined && context.intent === undefined,
    /** A VM may exist: created, recorded by a PeerPod, or asked for (its reply may have been lost). */
    mayHaveVm: ({ context }) => context.vm !== undefined || context.intent !== undefined,
    holdsPeerPod: ({ context }) => context.peerPod !== undefined && context.peerPod.held && !context.peerPod.gone,
    isUnobserved: ({ context }) => context.pod === undefined && context.peerPod === undefined,
    resumesDeleting: ({ context }) => context.resumeTo === 'deleting',
    ...stuckGuards(isEnding),
    ...cleanupGuards(isEnding),
    knowsVm: ({ context }) => context.vm !== undefined,
    vmChangedInFlight: ({ context }) => context.vmChangedInFlight === true,
    podLives: ({ context }) => podLives(context),
    /** The pod lives on and lost its VM with its PeerPod (proven by a read): another VM and PeerPod follow. */
    replacesLostVm: ({ context }) => podLives(context) && context.lostVm !== undefined,
    podStillServed: ({ context, event }) => event.type === 'podRead' && event.uid === context.uid,
    /** cloud-api-adaptor's PeerPod deleted while its owner Pod may live: whether it does is read. */
    ownerMayLive: ({ context }) => context.owner !== undefined && context.vm !== undefined,
    vmMissing: ({ event }) => event.type === 'vmObserved' && !event.exists,
    vmDown: ({ event }) => isDown(event),
    vmGoneBeforeStart: ({ event }) => event.type === 'vmStarted' && !event.exists,
  },
}).createMachine({
  id: 'peerpod',
  context: ({ input }) => ({
    ref: input.ref,
    timings: { ...defaultPeerPodTimings, ...input.timings },
    recorded: false,
    resumeTo: 'creating',
    actions: [],
  }),
  ...lifecycleRoot,
  states: {
    observing: observingState,
    /** Where the lifecycle belongs: done, its VM's ending (after a look at who lives), or its VM's owner's states. */
    deciding: {
      always: [
        { guard: 'releasedByOthers', target: 'done' },
        // Only a Pod's own PeerPod can end while the pod lives: whether the pod does is asked of the API server first
        // (its deletion may not have been observed: then the garbage collector deleted the PeerPod, and nothing is
        // made again).
        { guard: and(['isEnding', not('isTracked'), 'podLives']), target: 'own.checkingPod' },
        { guard: and(['isEnding', 'isTracked', 'ownerMayLive']), target: 'tracked.checkingOwner' },
        { guard: 'isEnding', target: 'ending' },
        { guard: 'isTracked', target: 'tracked' },
        // A VM our PeerPod names (a lost run's) is looked at before it is served; one someone else made is not ours.
        { guard: and(['vmFromRecord', not('madeElsewhere')]), target: 'own.checkingVm' },
        { target: 'own' },
      ],
    },
    /** A Pod's own VM: made (behind its create intent), recorded in our PeerPod, looked at, started again, made again. */
    own: {
      initial: 'deciding',
      states: {
        deciding: {
          always: [
            { guard: not('stillOwn'), target: '#peerpod.deciding' },
            { guard: 'madeElsewhere', target: 'madeElsewhere' },
            { guard: 'needsVm', target: 'creatingVm' },
            { guard: 'needsRecord', target: 'recordingPeerPod' },
            { guard: 'vmChangedInFlight', target: 'checkingVm', actions: 'forgetVmChange' },
            { target: 'tracking' },
          ],
        },
        creatingVm: {
          entry: [
            'resumeToCreating',
            'recordIntent',
            {
              type: 'createVm',
              params: ({ context }) => ({
                name: context.intent?.name ?? '',
                podUid: context.uid ?? '',
                namespace: context.ref.namespace ?? '',
                podName: context.ref.name,
                ...(context.lostVm ? { replaces: context.lostVm } : {}),
              }),
            },
          ],
          on: {
            vmCreated: { target: 'deciding', actions: 'recordVm' },
            // The VM just made may be shut off or lost before this step ends: the watch says so once, now.
            backendChanged: { actions: 'recordVmChange' },
            eventRecorded: {},
            vmMadeElsewhere: [
              { guard: 'stillOwn', target: 'madeElsewhere', actions: 'recordMadeElsewhere' },
              { target: 'deciding', actions: 'recordMadeElsewhere' },
            ],
            actionFailed: { target: '#peerpod.stuck', actions: 'recordFailure' },
          },
        },
        recordingPeerPod: {
          entry: {
            type: 'recordPeerPod',
            params: ({ context }) => ({
              namespace: context.ref.namespace ?? '',
              podName: context.ref.name,
              podUid: context.uid ?? '',
              vm: context.vm ?? { provider: '', instanceId: '' },
              vmName: context.intent?.name ?? '',
            }),
          },
          on: {
            peerPodRecorded: { target: 'deciding', actions: 'rememberPeerPod' },
            backendChanged: { actions: 'recordVmChange' },
            actionFailed: { target: '#peerpod.stuck', actions: 'recordFailure' },
          },
        },
        /** The VM runs for its Pod: looked at on the drift check, a refresh, and when the worker's VM watch saw a change. */
        tracking: restingState('tracking', driftCheckTimer, {
          observed: observedWhile('leavesOwnAfter'),
          driftCheck: 'checkingVm',
          refresh: { target: 'checkingVm', actions: 'recordAction' },
          backendChanged: 'checkingVm',
        }),
        /** Level-based repair: a VM gone (deleted by hand, lost by the cloud) is made again, one shut off started. */
        checkingVm: checkingVmState(ownVmMissing, {
          guard: and(['vmDown', 'stillOwn']),
          target: 'startingVm',
          actions: [
            'noteVmState',
            {
              type: 'recordVmShutOff',
              params: ({ context }: { context: PeerPodContext }) => ({
                message: `this peer pod's ${vmSaid(context)} is shut off; starting it again`,
              }),
            },
          ],
        }),
        /** Found shut off (its host restarted): started again, and said. */
        startingVm: {
          entry: {
            type: 'startVm',
            params: ({ context }) => ({ vm: context.vm ?? { provider: '', instanceId: '' } }),
          },
          on: {
            vmStarted: [
              // Gone meanwhile: made again, as a VM found missing is.
              { guard: 'vmGoneBeforeStart', target: 'deciding', actions: ownVmMissing },
              {
                target: 'deciding',
                actions: [
                  {
                    type: 'recordEvent',
                    params: ({ context }) => ({
                      ref: eventTarget(context),
                      type: 'Warning' as const,
                      reason: Reason.VmStarted,
                      message: `this peer pod's VM ${context.vm?.instanceId ?? ''} was ${context.vmState ?? 'not running'}: started again`,
                    }),
                  },
                  'noteVmStarted',
                ],
              },
            ],
            eventRecorded: {},
            // Said (the last error stays VmShutOff's, with this failure counted); the next check or a refresh starts it.
            actionFailed: { target: 'deciding', actions: 'recordFailure' },
          },
        },
        /** Someone else (cloud-api-adaptor) made this Pod's VM: Steward makes no second one, and rests until the Pod goes. */
        madeElsewhere: {
          tags: ['continueAsNewSafe'],
          entry: {
            type: 'recordEvent',
            params: ({ context }) => ({
              ref: eventTarget(context),
              type: 'Normal' as const,
              reason: Reason.PodVmTracked,
              message: `this Pod's VM was made by someone else (PeerPod ${context.trackedBy ?? ''}, cloud-api-adaptor's): Steward makes no second one and tracks that PeerPod`,
            }),
          },
          on: {
            observed: observedWhile('leavesOwnAfter'),
            eventRecorded: {},
            actionFailed: { actions: 'recordFailure' },
            refresh: { actions: 'recordAction' },
            resumed: {},
          },
        },
        /** Its PeerPod is being deleted while the pod seems to live: the API server says whether it does. */
        checkingPod: {
          entry: {
            type: 'readPod',
            params: ({ context }) => ({ namespace: context.ref.namespace ?? '', name: context.ref.name }),
          },
          on: {
            podRead: [
              { guard: 'podStillServed', target: '#peerpod.ending', actions: 'notePeerPodDeleted' },
              { target: '#peerpod.ending', actions: 'markPodGone' },
            ],
            // Not known: the VM goes with its PeerPod, and no other is made (the pod's next observation starts again).
            actionFailed: { target: '#peerpod.ending', actions: 'recordFailure' },
          },
        },
      },
    },
    /**
     * A VM a PeerPod alone names (cloud-api-adaptor's, or Steward's whose Pod this lifecycle does not see): the older
     * PeerPods of its Pod retired, the VM looked at and its trouble said, never made nor started; it goes with its
     * PeerPod.
     */
    tracked: {
      initial: 'retiringOlder',
      states: {
        /** The PeerPods of the same Pod written before this one (a cloud-api-adaptor restart, upstream #1510) go. */
        retiringOlder: {
          entry: {
            type: 'retireOlderPeerPods',
            params: ({ context }) => ({
              namespace: context.ref.namespace ?? '',
              name: context.peerPod?.name ?? '',
              uid: context.peerPod?.uid ?? '',
            }),
          },
          on: {
            // Done or not (a failure is shown), the VM is looked at: tracking does not wait for the other PeerPods.
            olderRetired: [{ guard: 'knowsVm', target: 'checkingVm' }, { target: 'deciding' }],
            actionFailed: [
              { guard: 'knowsVm', target: 'checkingVm', actions: 'recordFailure' },
              { target: 'deciding', actions: 'recordFailure' },
            ],
          },
        },
        deciding: {
          always: [{ guard: not('stillTracked'), target: '#peerpod.deciding' }, { target: 'tracking' }],
        },
        tracking: restingState('tracking', driftCheckTimer, {
          observed: observedWhile('leavesTrackedAfter'),
          driftCheck: [
            { guard: 'knowsVm', target: 'checkingVm' },
            { target: 'tracking', reenter: true },
          ],
          // An operator's refresh looks again at everything: the older PeerPods, then the VM.
          refresh: { target: 'retiringOlder', actions: 'recordAction' },
          backendChanged: { guard: 'knowsVm', target: 'checkingVm' },
        }),
        // Said, unless it goes anyway (its PeerPod being deleted meanwhile).
        checkingVm: checkingVmState(trackedVmMissing, {
          guard: and(['vmDown', 'stillTracked']),
          target: 'deciding',
          actions: [
            'noteVmState',
            {
              type: 'recordVmShutOff',
              params: ({ context }: { context: PeerPodContext }) => ({ message: trackedTelling(context).shutOff }),
            },
            {
              type: 'recordEvent',
              params: ({ context }: { context: PeerPodContext }) => ({
                ...trackedTelling(context).target,
                type: 'Warning' as const,
                reason: Reason.VmShutOff,
                message: trackedTelling(context).shutOff,
              }),
            },
          ],
        }),
        /** cloud-api-adaptor's PeerPod is being deleted: if its Pod lives, the Pod is told it loses its VM. */
        checkingOwner: {
          entry: {
            type: 'readPod',
            params: ({ context }) => ({ namespace: context.ref.namespace ?? '', name: context.owner ?? '' }),
          },
          on: {
            podRead: [
              {
                guard: 'podStillServed',
                actions: {
                  type: 'recordEvent',
                  params: ({ context }) => ({
                    ref: { kind: 'Pod' as const, namespace: context.ref.namespace, name: context.owner ?? '' },
                    uid: context.uid ?? '',
                    type: 'Warning' as const,
                    reason: Reason.PodVmLost,
                    message: podVmLostMessage(
                      context,
                      `its PeerPod was deleted while the Pod runs, and the VM goes with it`,
                    ),
                  }),
                },
              },
              { target: '#peerpod.ending' },
            ],
            eventRecorded: '#peerpod.ending',
            // Told or not, the VM goes with its PeerPod.
            actionFailed: { target: '#peerpod.ending', actions: 'recordFailure' },
          },
        },
      },
    },
    ending: {
      always: [
        { guard: 'mayHaveVm', target: 'deletingVm' },
        { guard: 'holdsPeerPod', target: 'releasing' },
        { guard: 'replacesLostVm', target: 'deciding', actions: 'forgetPeerPod' },
        { target: 'done' },
      ],
    },
    deletingVm: {
      // A recorded VM is the only one (create is idempotent by name); without a record, the pod UID tag finds it.
      entry: [
        'resumeToDeleting',
        {
          type: 'deleteVm',
          params: ({ context }) => (context.vm ? { vm: context.vm } : context.uid ? { podUid: context.uid } : {}),
        },
      ],
      on: {
        vmDeleted: { target: 'ending', actions: ['forgetVm', 'clearError'] },
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    releasing: {
      entry: {
        type: 'release',
        params: ({ context }) => ({
          namespace: context.ref.namespace ?? '',
          name: context.peerPod?.name ?? context.ref.name,
          uid: context.peerPod?.uid ?? '',
          ...(podLives(context) && context.lostVm ? { livePodUid: context.uid ?? '' } : {}),
        }),
      },
      on: {
        // A VM learned meanwhile (a PeerPod naming another one) is deleted first.
        released: [
          { guard: 'mayHaveVm', target: 'ending' },
          { guard: 'replacesLostVm', target: 'deciding', actions: 'forgetPeerPod' },
          { target: 'done' },
        ],
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    stuck: {
      ...stuckState({
        type: 'recordEvent',
        params: ({ context }: { context: PeerPodContext }) => ({
          ref: eventTarget(context),
          type: 'Warning' as const,
          reason: context.lastError?.reason ?? Reason.Stuck,
          message: `stuck while ${context.resumeTo === 'deleting' ? 'deleting' : 'creating'} the VM: ${context.lastError?.message ?? 'unknown error'}`,
        }),
      }),
      on: { ...stuckTransitions, backendChanged: 'resuming' },
    },
    /** An operator gave up on the VM: say which VM is left (the sweeper still removes it), then release the PeerPod. */
    givingUp: {
      entry: [
        'orphanVm',
        {
          type: 'recordEvent',
          params: ({ context }) => ({
            ref: eventTarget(context),
            type: 'Warning' as const,
            reason: Reason.VmOrphaned,
            message: `released without deleting VM ${context.orphanedVm?.instanceId ?? '(never created)'}: left to the sweeper, which removes it once nothing records it`,
          }),
        },
      ],
      on: {
        eventRecorded: [{ guard: 'holdsPeerPod', target: 'releasing' }, { target: 'done' }],
        actionFailed: [{ guard: 'holdsPeerPod', target: 'releasing' }, { target: 'done' }],
      },
    },
    resuming: {
      always: [
        { guard: 'isUnobserved', target: 'observing' },
        { guard: 'isEnding', target: 'ending' },
        { guard: 'resumesDeleting', target: 'ending' },
        { target: 'deciding' },
      ],
    },
    paused: pausedState(
      {
        vmCreated: { actions: 'recordVm' },
        vmMadeElsewhere: { actions: 'recordMadeElsewhere' },
        olderRetired: {},
        peerPodRecorded: { actions: 'rememberPeerPod' },
        vmDeleted: { actions: 'forgetVm' },
        released: { guard: and(['resumesDeleting', not('mayHaveVm')]), target: 'done' },
        eventRecorded: {},
      },
      pausedEvent(eventTarget),
    ),
    done: { type: 'final' },
  },
});

/**
 * The persisted record has kept its first version: the split by whose VM it is (`own`, `tracked`) came before any
 * release, and the recorded lives of the flat shape were recorded again.
 */
export const peerPodLifecycleMachine = versioned<PeerPodContext, PeerPodEvent, PeerPodTimings, PeerPodActionParams>(
  peerPodMachine,
  [],
);
