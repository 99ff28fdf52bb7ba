// The PeerPod record of a peer pod's VM (seed 002), written as cloud-api-adaptor writes it (same name scheme aside,
// owner, finalizer and spec), so peerpod-ctrl and Steward read each other's; and the Pod marked with its VM.
import * as k8s from '@kubernetes/client-node';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_STEWARD,
  PEERPOD_FINALIZER,
  Reason,
  VM_CLOUD_ANNOTATION,
} from '../../model/vocabulary';
import { peerPodOwner } from '../../model/vm-naming';
import { PEERPOD_API, workflowId, type ObjectRef } from '../../model/naming';
import { statusOf, toFailure } from './errors';
import type { EventInput } from './events';
import {
  annotationsField,
  collectionPath,
  workflowPageAnnotation,
  type KubeObject,
  type Objects,
  type WorkflowPage,
  type WriteOptions,
} from './objects';

/** Annotations on the Pod, so `kubectl get pod -o yaml` says which VM runs it. */
export const podVmAnnotations = { instance: 'steward.dev/podvm-instance', name: 'steward.dev/podvm-name' } as const;

/** The label that tells Steward's PeerPods from cloud-api-adaptor's. */

export interface RecordPeerPodInput {
  namespace: string;
  podName: string;
  podUid: string;
  /** `cloud`: where it was made, written beside it so a worker seeing another cloud never calls it gone. */
  vm: { provider: string; instanceId: string; cloud?: string };
  vmName: string;
  /** The VM this one replaces (lost while the Pod lived): the Event says so. */
  replaces?: { instanceId: string; why: string };
}

export interface RecordPeerPodResult {
  /** The PeerPod's name (the Pod's: one PeerPod per Pod) and UID. */
  name: string;
  uid: string;
  /** False when the Pod was deleted meanwhile: the PeerPod is then the garbage collector's, and ours to release. */
  podFound: boolean;
  /**
   * The write found a PeerPod of this name being deleted and still held by our finalizer (an older incarnation's, its
   * release not yet done, or deleted by hand) and wrote into it: this Pod must let it go and write a new one.
   */
  deleting?: true;
}

type RecordEvent = (ref: ObjectRef, object: KubeObject, event: EventInput) => Promise<unknown>;

export function createPeerPodActivities(objects: Objects, write: WriteOptions, recordEvent: RecordEvent) {
  return {
    ...createPeerPodRecorder(objects, write, recordEvent),
    ...createDuplicatePeerPodActivities(objects, recordEvent),
  };
}

/** The applied object; `undefined` for the statuses in `absentOn`; any other failure typed, naming `what`. */
async function apply(
  what: string,
  call: () => Promise<KubeObject>,
  absentOn: number[] = [],
): Promise<KubeObject | undefined> {
  try {
    return await call();
  } catch (error) {
    if (absentOn.includes(statusOf(error) ?? 0)) return undefined;
    throw toFailure(error, what);
  }
}

/** The PeerPod as cloud-api-adaptor writes it, with Steward's label and the VM's cloud beside it. */
function peerPodBody({ namespace, podName, podUid, vm }: RecordPeerPodInput, workflowPage: WorkflowPage) {
  const annotations = {
    ...(vm.cloud ? { [VM_CLOUD_ANNOTATION]: vm.cloud } : {}),
    ...workflowPageAnnotation(workflowPage, workflowId({ kind: 'PeerPod', namespace, name: podName })),
  };
  return {
    apiVersion: `${PEERPOD_API.group}/${PEERPOD_API.version}`,
    kind: 'PeerPod',
    metadata: {
      name: podName,
      namespace,
      finalizers: [PEERPOD_FINALIZER],
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Pod', name: podName, uid: podUid, controller: true, blockOwnerDeletion: true },
      ],
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_STEWARD },
      ...annotationsField(annotations),
    },
    spec: { cloudProvider: vm.provider, instanceID: vm.instanceId },
  };
}

/** The Pod's VM annotations, with its UID: applied, it is a precondition on this incarnation. */
function podVmBody({ namespace, podName, podUid, vm, vmName }: RecordPeerPodInput) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName,
      namespace,
      uid: podUid,
      annotations: {
        [podVmAnnotations.instance]: `${vm.provider}/${vm.instanceId}`,
        [podVmAnnotations.name]: vmName,
      },
    },
  };
}

function createPeerPodRecorder(objects: Objects, { workflowPage }: WriteOptions, recordEvent: RecordEvent) {
  /** Server-side apply of `body` to the object `ref` names, Steward's fields taken over from anyone else's. */
  const applyTo = (ref: ObjectRef, body: unknown) =>
    objects.patchPath(objects.pathOfRef(ref), body, k8s.PatchStrategy.ServerSideApply, { force: true });

  /**
   * Server-side apply of the PeerPod (owner: the Pod, as a controller reference, with `blockOwnerDeletion` as
   * upstream sets it; finalizer `peer.pod/finalizer`), then the Pod's annotations and a Normal Event. Repeating it
   * changes nothing. The owner reference makes the garbage collector delete the PeerPod after the Pod, so even a
   * Pod deleted in between leaves no PeerPod behind.
   */
  async function recordPeerPod(input: RecordPeerPodInput): Promise<RecordPeerPodResult> {
    const { namespace, podName, vm, vmName } = input;
    const body = peerPodBody(input, workflowPage);
    // No absent statuses: the API server answers with the object or with a failure.
    const peerPod = (await apply(`apply PeerPod ${namespace}/${podName}`, () =>
      applyTo({ kind: 'PeerPod', namespace, name: podName }, body),
    ))!;
    // The Pod's apply carries its UID as a precondition: this incarnation gone is a 404, another one a 409.
    const pod = await apply(
      `annotate Pod ${namespace}/${podName}`,
      () => applyTo({ kind: 'Pod', namespace, name: podName }, podVmBody(input)),
      [404, 409],
    );
    if (pod) {
      const runs = `VM ${vmName} (${vm.provider} ${vm.instanceId}) runs this pod; recorded in PeerPod ${namespace}/${podName}`;
      const { replaces } = input;
      await recordEvent(
        { kind: 'Pod', namespace, name: podName },
        pod,
        replaces
          ? {
              type: 'Normal',
              reason: Reason.PodVmRecreated,
              message: `${runs}; it replaces VM ${replaces.instanceId}, lost: ${replaces.why}`,
            }
          : { type: 'Normal', reason: Reason.PodVmCreated, message: runs },
      );
    }
    return {
      name: podName,
      uid: peerPod.metadata.uid,
      podFound: pod !== undefined,
      ...(peerPod.metadata.deletionTimestamp ? { deleting: true as const } : {}),
    };
  }

  /**
   * The Pod's VM annotations taken away (applied without them: server-side apply removes what this field manager
   * owned), once its VM is gone while it lives, so they never name a VM that is not there. A Pod gone is no failure.
   */
  async function forgetPodVm({
    namespace,
    podName,
    podUid,
  }: Pick<RecordPeerPodInput, 'namespace' | 'podName' | 'podUid'>) {
    const body = { apiVersion: 'v1', kind: 'Pod', metadata: { name: podName, namespace, uid: podUid } };
    await apply(
      `take the VM annotations off Pod ${namespace}/${podName}`,
      () => applyTo({ kind: 'Pod', namespace, name: podName }, body),
      [404, 409],
    );
  }

  return { recordPeerPod, forgetPodVm };
}

/** The other PeerPods of a Pod: cloud-api-adaptor's (the Pod has its VM) and older ones (retired with their VMs). */
function createDuplicatePeerPodActivities(objects: Objects, recordEvent: RecordEvent) {
  async function listPeerPods(namespace: string): Promise<KubeObject[]> {
    try {
      return (
        (await objects.rest<{ items?: KubeObject[] }>({ method: 'GET', path: collectionPath('PeerPod', namespace) }))
          .items ?? []
      );
    } catch (error) {
      throw toFailure(error, `list PeerPods in ${namespace}`);
    }
  }

  /**
   * The PeerPods someone else (cloud-api-adaptor) wrote for this Pod: owned by its UID, without Steward's label. Such
   * a Pod already has its VM; Steward tracks that PeerPod (its own workflow) and never makes a second VM.
   */
  async function findForeignPeerPods({
    namespace,
    podUid,
  }: {
    namespace: string;
    podUid: string;
  }): Promise<{ name: string }[]> {
    return (await listPeerPods(namespace))
      .filter((o) => ownerOf(o)?.uid === podUid && o.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_STEWARD)
      .map((o) => ({ name: o.metadata.name }));
  }

  /**
   * What upstream's peerpod-ctrl does since its PR #1517 (issue #1510): a cloud-api-adaptor restarted while a pod ran
   * writes a second PeerPod for it, and the older one's VM is left running. The PeerPods of the same owner created
   * before this one are deleted (with a UID precondition); their finalizer then has their own workflows delete their
   * VMs and release them. A Normal Event on the Pod says which.
   */
  async function retireOlderPeerPods({
    namespace,
    name,
    uid,
  }: {
    namespace: string;
    name: string;
    uid: string;
  }): Promise<{ deleted: string[] }> {
    const plan = olderPeerPods(await listPeerPods(namespace), uid);
    if (!plan) return { deleted: [] };
    for (const o of plan.older)
      await objects.deleteIncarnation(
        { kind: 'PeerPod', namespace, name: o.metadata.name },
        o.metadata.uid,
        `older PeerPod ${namespace}/${o.metadata.name}`,
      );
    const deleted = plan.older.map((o) => o.metadata.name);
    if (deleted.length) await reportRetired(namespace, name, plan.owner, plan.older);
    return { deleted };
  }

  /** The Event on the Pod (still this owner's incarnation) naming the retired PeerPods and their VMs. */
  async function reportRetired(namespace: string, name: string, owner: k8s.V1OwnerReference, older: KubeObject[]) {
    const pod = await objects.accessor({ kind: 'Pod', namespace, name: owner.name }).read();
    if (pod?.metadata.uid !== owner.uid) return;
    const deleted = older.map((o) => o.metadata.name);
    const vms = older.map((o) => (o as { spec?: { instanceID?: string } }).spec?.instanceID ?? '?').join(', ');
    await recordEvent({ kind: 'Pod', namespace, name: owner.name }, pod, {
      type: 'Normal',
      reason: Reason.OlderPeerPodsDeleted,
      message: `PeerPods ${deleted.join(', ')} (VMs ${vms}) were written for this Pod before ${name} (a cloud-api-adaptor restart): deleted, and their VMs with them`,
    });
  }

  return { findForeignPeerPods, retireOlderPeerPods };
}

/** The PeerPod `uid`'s owner and the PeerPods of that owner created before it and not yet being deleted. */
function olderPeerPods(
  items: KubeObject[],
  uid: string,
): { owner: k8s.V1OwnerReference; older: KubeObject[] } | undefined {
  const self = items.find((o) => o.metadata.uid === uid);
  const owner = self && ownerOf(self);
  if (!self || !owner) return undefined;
  const created = (o: KubeObject) => Date.parse((o.metadata as { creationTimestamp?: string }).creationTimestamp ?? '');
  const older = items.filter(
    (o) =>
      o.metadata.uid !== uid &&
      ownerOf(o)?.uid === owner.uid &&
      created(o) < created(self) &&
      !o.metadata.deletionTimestamp,
  );
  return { owner, older };
}

const ownerOf = (o: KubeObject) => peerPodOwner(o.metadata.ownerReferences);
