import { workflowInfo } from '@temporalio/workflow';
import { cloud, cloudCalls, kubernetes } from './activities';
import type { Unstamped } from './interpreter';
import { forwardSignal, recordObjectEvent, runLifecycle, type LifecycleInput } from './lifecycle';
import { backendChangedSchema, backendChangedSignal, type ResourceView } from '../model/messages';
import {
  peerPodLifecycleMachine,
  type PeerPodActionParams,
  type PeerPodContext,
  type PeerPodEvent,
  type PeerPodTimings,
} from './machines/peerpod';
import { describeRef, peerPodTaskQueue } from '../model/naming';
import { peerPodProjection, type PeerPodProjection } from '../model/peerpod-projection';
import { PEERPOD_FINALIZER } from '../model/vocabulary';

/**
 * One workflow per peer pod (`peerpod/<ns>/<name>`), fed by its Pod and its PeerPod. The machine
 * (machines/peerpod.ts) decides; this function wires its actions to the cloud and Kubernetes activities.
 */
export type PeerPodLifecycleInput = LifecycleInput<PeerPodContext, PeerPodTimings>;

export async function peerPodLifecycle(input: PeerPodLifecycleInput): Promise<void> {
  await runLifecycle(peerPodLifecycleMachine, input, {
    projection: peerPodProjection,
    resources,
    slowActions: ['createVm'],
    // A PeerPod observed under another UID than the one known would replace it (and a deleting one end the VM).
    supersedes: (observation, before, after) =>
      before.peerPod &&
      (observation.projection as PeerPodProjection).source === 'PeerPod' &&
      after.peerPod?.uid === observation.uid &&
      observation.uid !== before.peerPod.uid
        ? before.peerPod.uid
        : undefined,
    // Its incarnations are its Pod's: a PeerPod is a record of one.
    isIncarnation: ({ projection }) => (projection as PeerPodProjection).source === 'Pod',
    // A peer pod's Pod observed gone is the Pod, under the peer pod's name.
    subjectOf: ({ ref, projection }) =>
      (projection as PeerPodProjection).source === 'Pod'
        ? { kind: 'Pod', namespace: ref.namespace, name: ref.name }
        : ref,
    setup: (interpreter) =>
      forwardSignal(interpreter, backendChangedSignal, backendChangedSchema, (notice) => ({
        type: 'backendChanged' as const,
        notice,
      })),
    executors: {
      createVm,
      recordPeerPod: async (p) => {
        const recorded = await kubernetes.recordPeerPod.executeWithOptions(
          { summary: `record VM ${p.vm.instanceId} in PeerPod ${p.namespace}/${p.podName}` },
          [p],
        );
        const { name, uid, deleting } = recorded;
        return { type: 'peerPodRecorded', name, uid, ...(deleting ? { deleting } : {}) };
      },
      observeVm: async ({ vm }) => {
        const seen = await cloudCalls.cloudObserveRecordedVm.executeWithOptions(
          { summary: `is ${vm.provider} VM ${vm.instanceId} still there?` },
          [vm],
        );
        return { type: 'vmObserved', exists: seen.exists, ...(seen.exists ? { state: seen.state } : {}) };
      },
      startVm: async ({ vm }) => {
        const started = await cloudCalls.cloudStartRecordedVm.executeWithOptions(
          { summary: `start ${vm.provider} VM ${vm.instanceId}, found shut off` },
          [vm],
        );
        return { type: 'vmStarted', exists: started.outcome === 'started' };
      },
      readPod: async ({ namespace, name }) => {
        const held = await kubernetes.readIncarnation.executeWithOptions(
          { summary: `does Pod ${namespace}/${name} live on?` },
          [{ ref: { kind: 'Pod', namespace, name } }],
        );
        return { type: 'podRead', ...held };
      },
      deleteVm,
      release: async ({ namespace, name, uid, livePodUid }) => {
        const ref = { kind: 'PeerPod' as const, namespace, name };
        await kubernetes.releaseFinalizer.executeWithOptions(
          { summary: `release ${PEERPOD_FINALIZER} of ${describeRef(ref)}` },
          [{ ref, uid, finalizer: PEERPOD_FINALIZER }],
        );
        if (livePodUid !== undefined)
          await kubernetes.forgetPodVm.executeWithOptions(
            { summary: `take the annotations of its VM, gone, off Pod ${namespace}/${name}` },
            [{ namespace, podName: name, podUid: livePodUid }],
          );
        return { type: 'released' };
      },
      retireOlderPeerPods: async (p) => {
        await kubernetes.retireOlderPeerPods.executeWithOptions(
          { summary: `delete the PeerPods of the same Pod older than ${p.namespace}/${p.name}` },
          [p],
        );
        return { type: 'olderRetired' };
      },
      recordEvent: recordObjectEvent,
    },
  });
}

/**
 * The check for someone else's PeerPod, the create and the record in one activity: no local activity holds the
 * workflow tasks before and after it, and the PeerPod is written as soon as the VM runs (issue 12).
 */
async function createVm({
  name,
  podUid,
  namespace,
  podName,
  replaces,
}: PeerPodActionParams['createVm']): Promise<Unstamped<PeerPodEvent>> {
  const made = await cloud.cloudCreateAndRecordPodVm.executeWithOptions(
    {
      taskQueue: peerPodTaskQueue(workflowInfo().taskQueue),
      summary: `create VM ${name} for Pod ${namespace}/${podName} (or find the one an earlier attempt made) and record it in a PeerPod, unless someone else's PeerPod has it`,
    },
    [{ name, podUid, podNamespace: namespace, podName, ...(replaces ? { replaces } : {}) }],
  );
  if (made.outcome === 'madeElsewhere') return { type: 'vmMadeElsewhere', peerPod: made.peerPod };
  const { vm } = made;
  return {
    type: 'vmCreated',
    vm: { provider: vm.provider, instanceId: vm.instanceId, cloud: vm.cloud, podName },
    peerPod: made.peerPod,
  };
}

async function deleteVm({ vm, podUid }: PeerPodActionParams['deleteVm']): Promise<Unstamped<PeerPodEvent>> {
  const what = [vm ? `${vm.provider} VM ${vm.instanceId}` : '', podUid ? `VMs tagged with pod ${podUid}` : '']
    .filter(Boolean)
    .join(' and ');
  await cloudCalls.cloudDeletePodVms.executeWithOptions({ summary: `delete ${what}` }, [
    { ...(vm ? { vm } : {}), ...(podUid ? { podUid } : {}) },
  ]);
  return { type: 'vmDeleted' };
}

/** The VM and its PeerPod, as the `state` query and the Temporal UI's current details show them. */
function resources(c: PeerPodContext): ResourceView[] {
  const rows: ResourceView[] = [];
  if (c.vm)
    rows.push({
      kind: `VM (${c.vm.provider})`,
      id: c.vm.instanceId,
      state: [c.intent ? `${c.intent.name}, created` : 'recorded by the PeerPod', c.vmState].filter(Boolean).join(', '),
    });
  else if (c.intent) rows.push({ kind: 'VM', id: c.intent.name, state: `create asked at ${c.intent.at}` });
  if (c.orphanedVm)
    rows.push({
      kind: `VM (${c.orphanedVm.provider})`,
      id: c.orphanedVm.instanceId,
      state: 'orphaned (left to the sweeper)',
    });
  if (c.trackedBy)
    rows.push({ kind: 'VM', id: 'made by someone else', state: `tracked through PeerPod ${c.trackedBy}` });
  if (c.peerPod)
    rows.push({
      kind: 'PeerPod',
      id: `${c.ref.namespace ?? ''}/${c.peerPod.name}`,
      state: c.peerPod.gone ? 'gone' : c.peerPod.deleting ? 'deleting' : c.peerPod.held ? 'held' : 'released',
    });
  return rows;
}
