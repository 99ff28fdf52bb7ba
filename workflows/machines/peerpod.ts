import { and, assign, not, setup } from 'xstate';
import {
  cleanupGuards,
  driftCheckTimer,
  failureOf,
  interpretedActions,
  lifecycleRoot,
  observeAndDecide,
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
  /** The VM a PeerPod named (not one made here) that was looked for in the cloud, once, before it is tracked. */
  checkedVmId?: string;
  /** What the cloud last said of `vm`'s power state (`running`, `stopped`, …), when it was looked at. */
  vmState?: string;
  /** The VM a live pod lost (its PeerPod deleted by hand, or gone from the cloud), until another one runs it. */
  lostVm?: { instanceId: string; why: string };
  /** How many VMs this pod lost: the next one's name tells them apart (vmName's `replacement`). */
  vmReplacements?: number;
  /** Our PeerPod released while the pod lived: its late observations are of a record gone, not of the next one. */
  releasedPeerPodUid?: string;
  /** The PeerPod someone else (cloud-api-adaptor) wrote for this Pod: its VM is theirs, tracked by that PeerPod's workflow. */
  trackedBy?: string;
  /** A PeerPod alone (cloud-api-adaptor's): the Pod it names as its owner, told when the VM it tracks is lost. */
  owner?: string;
  /** That owner was read once (its PeerPod being deleted): whether it lives is known. */
  ownerRead?: boolean;
  /** The older PeerPods of the same Pod were looked for (and deleted) once. */
  olderRetired?: boolean;
  resumeTo: 'creating' | 'deleting';
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
  /** Deletes the PeerPods of the same Pod created before this one (upstream #1510); `skip`: nothing to do. */
  retireOlderPeerPods: { namespace: string; name: string; uid: string; skip: boolean };
}

/** The Pod went, or the PeerPod is being deleted while it still holds our finalizer. */
const isEnding = (context: PeerPodContext) =>
  (context.pod?.gone ?? false) || (context.peerPod ? context.peerPod.deleting || context.peerPod.gone : false);

/** A PeerPod someone else wrote, live, not looked at yet: older ones of the same Pod may be left behind. */
const needsRetiring = (c: PeerPodContext) =>
  c.pod === undefined && c.peerPod !== undefined && !c.peerPod.deleting && !c.peerPod.gone && !c.olderRetired;

const isPod = (o: Observation) => (o.projection as PeerPodProjection | undefined)?.source === 'Pod';

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

/** A live Pod's own VM (made by Steward for it): the one VM Steward makes again when lost and starts when shut off. */
const ownsLiveVm = (context: PeerPodContext) => podLives(context) && context.trackedBy === undefined;

/** A VM found missing: made again only for a live Pod whose VM is Steward's to make; otherwise said, not promised. */
function vmMissingMessage(context: PeerPodContext): string {
  const id = context.settledVmId ?? '';
  if (ownsLiveVm(context)) return `the VM of this peer pod (${id}) is gone from the cloud; creating it again`;
  if (ownerLostVm(context)) return podVmLostMessage(context, 'it is gone from the cloud');
  return `PeerPod ${context.peerPod?.name ?? context.ref.name} names VM ${id}, which the cloud does not have: nothing here makes it again (only a live Pod's own VM is made by Steward)`;
}

/** The VM observed is down (model/vocabulary.ts `VM_DOWN_STATES`). */
const isDown = (event: PeerPodEvent) =>
  event.type === 'vmObserved' && event.exists && VM_DOWN_STATES.has(event.state ?? '');

function vmShutOffMessage(context: PeerPodContext): string {
  const vm = `VM ${context.vm?.instanceId ?? ''} (${context.vmState ?? 'not running'})`;
  if (ownsLiveVm(context)) return `this peer pod's ${vm} is shut off; starting it again`;
  if (ownerLostVm(context))
    return `this Pod's ${vm} is shut off; it was made by cloud-api-adaptor (PeerPod ${context.peerPod?.name ?? context.ref.name}), so Steward does not start it: cloud-api-adaptor may, or delete the Pod to get a new one`;
  return `PeerPod ${context.peerPod?.name ?? context.ref.name} names ${vm}, which is shut off: nothing here starts it (only a live Pod's own VM is started by Steward)`;
}

/** The object an Event about this lifecycle is attached to: the Pod while it lives, else the PeerPod. */
function eventTarget(context: PeerPodContext): ObjectRef {
  const { ref } = context;
  if (context.pod && !context.pod.gone) return { kind: 'Pod', namespace: ref.namespace, name: ref.name };
  return { kind: 'PeerPod', namespace: ref.namespace, name: context.peerPod?.name ?? ref.name };
}

/** A PeerPod alone (cloud-api-adaptor's) tracks a VM that is not Steward's to make: its loss is told on the owner Pod. */
const tracksOthersVm = (context: PeerPodContext) => context.pod === undefined && context.owner !== undefined;

/** A live tracked PeerPod's VM found missing: the owner Pod lost it (a PeerPod being deleted is said as usual). */
const ownerLostVm = (context: PeerPodContext) => tracksOthersVm(context) && !context.peerPod?.deleting;

/** The owner Pod of a tracked PeerPod, by the UID it names: an Event about it needs no read. */
const ownerPod = (context: PeerPodContext) => ({
  ref: { kind: 'Pod' as const, namespace: context.ref.namespace, name: context.owner ?? '' },
  uid: context.uid ?? '',
});

/** Where a VM found missing is told: on the owner Pod of a tracked PeerPod (the Pod is what lost it), else as usual. */
const vmMissingTarget = (context: PeerPodContext): { ref: ObjectRef; uid?: string } =>
  ownerLostVm(context) ? ownerPod(context) : { ref: eventTarget(context) };

const vmMissingReason = (context: PeerPodContext) => (ownerLostVm(context) ? Reason.PodVmLost : Reason.VmMissing);

function podVmLostMessage(context: PeerPodContext, how: string): string {
  return `this Pod lost its VM ${context.vm?.instanceId ?? context.settledVmId ?? ''} (${how}); it was made by cloud-api-adaptor (PeerPod ${context.peerPod?.name ?? context.ref.name}), so Steward makes no other: cloud-api-adaptor may, or delete the Pod to get a new one`;
}

/** A VM found missing (looked for, or gone before it could be started): forgotten, said, and made again where it is ours. */
const vmFoundMissing = [
  'noteVmGone',
  'forgetVm',
  'recordVmMissing',
  {
    type: 'recordEvent',
    params: ({ context }: { context: PeerPodContext }) => ({
      ...vmMissingTarget(context),
      type: 'Warning' as const,
      reason: vmMissingReason(context),
      message: vmMissingMessage(context),
    }),
  },
] as const;

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
    observe: assign(({ context, event }) => {
      if (event.type !== 'observed') return {};
      const o = event.observation;
      if (isPod(o)) {
        // Another Pod with this name proves this one gone (its deletion may never have been observed): its VM goes,
        // then the latest next Pod is served.
        if (context.pod && context.pod.uid !== o.uid)
          return { nextIncarnation: o, pod: { ...context.pod, gone: true } };
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
    }),
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
    noteVmGone: assign(({ context }) => (ownsLiveVm(context) ? lostVm(context, 'it was gone from the cloud') : {})),
    /** The API server has another Pod, or none: the one served is gone, even if its deletion was never observed. */
    markPodGone: assign(({ context }) => (context.pod ? { pod: { ...context.pod, gone: true } } : {})),
    /** Our PeerPod released while the pod lives: the next one is written for the next VM. */
    forgetPeerPod: assign(({ context }) => ({
      releasedPeerPodUid: context.peerPod?.uid,
      peerPod: undefined,
      recorded: false,
    })),
    markOlderRetired: assign({ olderRetired: true }),
    markOwnerRead: assign({ ownerRead: true }),
    markVmChecked: assign(({ context }) => ({ checkedVmId: context.vm?.instanceId })),
    noteVmState: assign(({ context, event }) => ({
      vmState: event.type === 'vmObserved' && event.exists ? event.state : undefined,
      // Seen running again (started by someone, or by the previous check): a shut-off said before is over.
      ...(context.lastError?.reason === Reason.VmShutOff && !isDown(event) ? { lastError: undefined } : {}),
    })),
    noteVmStarted: assign({ vmState: 'running', lastError: undefined }),
    recordVmShutOff: assign(({ context, event }) => ({
      lastError: { reason: Reason.VmShutOff, message: vmShutOffMessage(context), at: event.at },
    })),
    recordVmMissing: assign(({ context, event }) => ({
      lastError: { reason: vmMissingReason(context), message: vmMissingMessage(context), at: event.at },
    })),
    recordMadeElsewhere: assign(({ event }) =>
      event.type === 'vmMadeElsewhere' ? { trackedBy: event.peerPod, intent: undefined, lastError: undefined } : {},
    ),
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
    /** Only a Pod makes a VM, and only one nobody else made; a PeerPod alone (cloud-api-adaptor's) is only tracked. */
    needsVm: ({ context }) => context.pod !== undefined && context.vm === undefined && context.trackedBy === undefined,
    needsRecord: ({ context }) => context.pod !== undefined && !context.recorded && context.trackedBy === undefined,
    /** A VM may exist: created, recorded by a PeerPod, or asked for (its reply may have been lost). */
    mayHaveVm: ({ context }) => context.vm !== undefined || context.intent !== undefined,
    /** A PeerPod whose finalizer someone else removed (cloud-api-adaptor's normal path): nothing left to do. */
    releasedByOthers: ({ context }) =>
      context.pod === undefined && context.peerPod !== undefined && !context.peerPod.held,
    holdsPeerPod: ({ context }) => context.peerPod !== undefined && context.peerPod.held && !context.peerPod.gone,
    isUnobserved: ({ context }) => context.pod === undefined && context.peerPod === undefined,
    resumesDeleting: ({ context }) => context.resumeTo === 'deleting',
    ...stuckGuards(isEnding),
    ...cleanupGuards(isEnding),
    knowsVm: ({ context }) => context.vm !== undefined,
    podLives: ({ context }) => podLives(context),
    /** The pod lives on and lost its VM with its PeerPod (proven by a read): another VM and PeerPod follow. */
    replacesLostVm: ({ context }) => podLives(context) && context.lostVm !== undefined,
    podStillServed: ({ context, event }) => event.type === 'podRead' && event.uid === context.uid,
    /** A tracked PeerPod deleted while its owner Pod may live: whether it does is read once. */
    ownerMayLive: ({ context }) => tracksOthersVm(context) && !context.ownerRead && context.vm !== undefined,
    /** A VM named by a PeerPod, not made here, not yet looked for: it is checked before it is tracked. */
    vmUnchecked: ({ context }) =>
      context.vm !== undefined && context.intent === undefined && context.vm.instanceId !== context.checkedVmId,
    vmMissing: ({ event }) => event.type === 'vmObserved' && !event.exists,
    vmDown: ({ event }) => isDown(event),
    vmGoneBeforeStart: ({ event }) => event.type === 'vmStarted' && !event.exists,
    ownsLiveVm: ({ context }) => ownsLiveVm(context),
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
    deciding: {
      always: [
        { guard: 'releasedByOthers', target: 'done' },
        // Only our PeerPod can end while the pod lives (cloud-api-adaptor's has its own workflow): whether the pod
        // does is asked of the API server first (its deletion may not have been observed: then the garbage collector
        // deleted the PeerPod, and nothing is made again).
        { guard: and(['isEnding', 'podLives']), target: 'checkingPod' },
        { guard: and(['isEnding', 'ownerMayLive']), target: 'checkingOwner' },
        { guard: 'isEnding', target: 'ending' },
        { guard: 'needsVm', target: 'creatingVm' },
        { guard: 'needsRecord', target: 'recordingPeerPod' },
        { guard: 'vmUnchecked', target: 'checkingVm' },
        { target: 'tracking' },
      ],
    },
    /** Its PeerPod is being deleted while the pod seems to live: the API server says whether it does. */
    checkingPod: {
      entry: {
        type: 'readPod',
        params: ({ context }) => ({ namespace: context.ref.namespace ?? '', name: context.ref.name }),
      },
      on: {
        podRead: [
          { guard: 'podStillServed', target: 'ending', actions: 'notePeerPodDeleted' },
          { target: 'ending', actions: 'markPodGone' },
        ],
        // Not known: the VM goes with its PeerPod, and no other is made (the pod's next observation starts again).
        actionFailed: { target: 'ending', actions: 'recordFailure' },
      },
    },
    /** A tracked PeerPod (cloud-api-adaptor's) is being deleted: if its Pod lives, the Pod is told it loses its VM. */
    checkingOwner: {
      entry: {
        type: 'readPod',
        params: ({ context }) => ({ namespace: context.ref.namespace ?? '', name: context.owner ?? '' }),
      },
      on: {
        podRead: [
          {
            guard: 'podStillServed',
            actions: [
              'markOwnerRead',
              {
                type: 'recordEvent',
                params: ({ context }) => ({
                  ...ownerPod(context),
                  type: 'Warning' as const,
                  reason: Reason.PodVmLost,
                  message: podVmLostMessage(
                    context,
                    `its PeerPod was deleted while the Pod runs, and the VM goes with it`,
                  ),
                }),
              },
            ],
          },
          { target: 'ending', actions: 'markOwnerRead' },
        ],
        eventRecorded: 'ending',
        // Told or not, the VM goes with its PeerPod.
        actionFailed: { target: 'ending', actions: ['markOwnerRead', 'recordFailure'] },
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
        vmMadeElsewhere: {
          target: 'deciding',
          actions: [
            'recordMadeElsewhere',
            {
              type: 'recordEvent',
              params: ({ context }) => ({
                ref: eventTarget(context),
                type: 'Normal' as const,
                reason: Reason.PodVmTracked,
                message: `this Pod's VM was made by someone else (PeerPod ${context.trackedBy ?? ''}, cloud-api-adaptor's): Steward makes no second one and tracks that PeerPod`,
              }),
            },
          ],
        },
        eventRecorded: {},
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
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
        actionFailed: { target: 'stuck', actions: 'recordFailure' },
      },
    },
    tracking: {
      ...restingState('tracking', driftCheckTimer, {
        olderRetired: { actions: 'markOlderRetired' },
        actionFailed: { actions: 'recordFailure' },
        observed: observeAndDecide,
        driftCheck: [{ guard: 'knowsVm', target: 'checkingVm' }, { target: 'deciding' }],
        refresh: [
          { guard: 'knowsVm', target: 'checkingVm', actions: 'recordAction' },
          { target: 'deciding', actions: 'recordAction' },
        ],
        // The worker's watch of the VMs saw one change (shut off, crashed, gone): this pod's is looked at now.
        backendChanged: { guard: 'knowsVm', target: 'checkingVm' },
      }),
      entry: [
        driftCheckTimer.start,
        // Alongside, not before: tracking this PeerPod does not wait for the others (a failure is shown, and tried again).
        {
          type: 'retireOlderPeerPods',
          params: ({ context }) => ({
            namespace: context.ref.namespace ?? '',
            name: context.peerPod?.name ?? '',
            uid: context.peerPod?.uid ?? '',
            skip: !needsRetiring(context),
          }),
        },
      ],
    },
    /** Level-based repair: a live pod whose VM vanished (deleted by hand, lost by the cloud) gets a new one. */
    checkingVm: {
      entry: [
        'markVmChecked',
        { type: 'observeVm', params: ({ context }) => ({ vm: context.vm ?? { provider: '', instanceId: '' } }) },
      ],
      on: {
        vmObserved: [
          {
            guard: 'vmMissing',
            target: 'deciding',
            actions: vmFoundMissing,
          },
          {
            guard: and(['vmDown', 'ownsLiveVm', not('isEnding')]),
            target: 'startingVm',
            actions: ['noteVmState', 'recordVmShutOff'],
          },
          // Said, unless it goes anyway (its Pod or PeerPod being deleted meanwhile).
          {
            guard: and(['vmDown', not('isEnding')]),
            target: 'deciding',
            actions: [
              'noteVmState',
              'recordVmShutOff',
              {
                type: 'recordEvent',
                params: ({ context }: { context: PeerPodContext }) => ({
                  ...vmMissingTarget(context),
                  type: 'Warning' as const,
                  reason: Reason.VmShutOff,
                  message: vmShutOffMessage(context),
                }),
              },
            ],
          },
          { target: 'deciding', actions: 'noteVmState' },
        ],
        eventRecorded: {},
        actionFailed: { target: 'deciding', actions: 'recordFailure' },
      },
    },
    /** A live pod's own VM found shut off (its host restarted): started again, and said. */
    startingVm: {
      entry: { type: 'startVm', params: ({ context }) => ({ vm: context.vm ?? { provider: '', instanceId: '' } }) },
      on: {
        vmStarted: [
          // Gone meanwhile: made again, as a VM found missing is.
          {
            guard: 'vmGoneBeforeStart',
            target: 'deciding',
            actions: vmFoundMissing,
          },
          {
            target: 'deciding',
            actions: [
              {
                type: 'recordEvent',
                params: ({ context }: { context: PeerPodContext }) => ({
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
        olderRetired: { actions: 'markOlderRetired' },
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

/** The persisted record has kept its first shape: version 1, nothing to migrate yet. */
export const peerPodLifecycleMachine = versioned<PeerPodContext, PeerPodEvent, PeerPodTimings, PeerPodActionParams>(
  peerPodMachine,
  [],
);
