// The PeerPod record of a peer pod's VM (seed 002), written as cloud-api-adaptor writes it (same name scheme aside,
// owner, finalizer and spec), so peerpod-ctrl and Steward read each other's; and the Pod marked with its VM.
import * as k8s from '@kubernetes/client-node';
import { PEERPOD_FINALIZER, Reason, VM_CLOUD_ANNOTATION } from '../../workflows/vocabulary';
import { peerPodOwner } from '../../workflows/machines/peerpod';
import { PEERPOD_API, type ObjectRef } from '../../workflows/naming';
import { statusOf, toFailure } from './errors';
import type { EventInput } from './events';
import type { KubeObject, Objects } from './objects';

/** Annotations on the Pod, so `kubectl get pod -o yaml` says which VM runs it. */
export const podVmAnnotations = { instance: 'steward.dev/podvm-instance', name: 'steward.dev/podvm-name' } as const;

/** The label that tells Steward's PeerPods from cloud-api-adaptor's. */
const MANAGED_BY = 'app.kubernetes.io/managed-by';

export interface RecordPeerPodInput {
  namespace: string;
  podName: string;
  podUid: string;
  /** `cloud`: where it was made, written beside it so a worker seeing another cloud never calls it gone. */
  vm: { provider: string; instanceId: string; cloud?: string };
  vmName: string;
}

export interface RecordPeerPodResult {
  /** The PeerPod's name (the Pod's: one PeerPod per Pod) and UID. */
  name: string;
  uid: string;
  /** False when the Pod was deleted meanwhile: the PeerPod is then the garbage collector's, and ours to release. */
  podFound: boolean;
}

export function createPeerPodActivities(
  objects: Objects,
  fieldManager: string,
  recordEvent: (ref: ObjectRef, object: KubeObject, event: EventInput) => Promise<unknown>,
) {
  /** The applied object as plain JSON; `undefined` for the statuses in `absentOn`; any other failure typed, naming `what`. */
  const apply = async (
    what: string,
    call: () => Promise<unknown>,
    absentOn: number[] = [],
  ): Promise<KubeObject | undefined> => {
    try {
      return JSON.parse(JSON.stringify(await call())) as KubeObject;
    } catch (error) {
      if (absentOn.includes(statusOf(error) ?? 0)) return undefined;
      throw toFailure(error, what);
    }
  };
  const applyOptions = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply);

  /**
   * Server-side apply of the PeerPod (owner: the Pod, as a controller reference, with `blockOwnerDeletion` as
   * upstream sets it; finalizer `peer.pod/finalizer`), then the Pod's annotations and a Normal Event. Repeating it
   * changes nothing. The owner reference makes the garbage collector delete the PeerPod after the Pod, so even a
   * Pod deleted in between leaves no PeerPod behind.
   */
  async function recordPeerPod({
    namespace,
    podName,
    podUid,
    vm,
    vmName,
  }: RecordPeerPodInput): Promise<RecordPeerPodResult> {
    const { custom, core } = objects;
    const body = {
      apiVersion: `${PEERPOD_API.group}/${PEERPOD_API.version}`,
      kind: 'PeerPod',
      metadata: {
        name: podName,
        namespace,
        finalizers: [PEERPOD_FINALIZER],
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Pod', name: podName, uid: podUid, controller: true, blockOwnerDeletion: true },
        ],
        labels: { [MANAGED_BY]: 'steward' },
        ...(vm.cloud ? { annotations: { [VM_CLOUD_ANNOTATION]: vm.cloud } } : {}),
      },
      spec: { cloudProvider: vm.provider, instanceID: vm.instanceId },
    };
    // No absent statuses: the API server answers with the object or with a failure.
    const peerPod = (await apply(`apply PeerPod ${namespace}/${podName}`, () =>
      custom.patchNamespacedCustomObject(
        { ...PEERPOD_API, namespace, name: podName, body, fieldManager, force: true },
        applyOptions,
      ),
    ))!;
    // The Pod's apply carries its UID as a precondition: this incarnation gone is a 404, another one a 409.
    const pod = await apply(
      `annotate Pod ${namespace}/${podName}`,
      () =>
        core.patchNamespacedPod(
          {
            namespace,
            name: podName,
            fieldManager,
            force: true,
            body: {
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
            },
          },
          applyOptions,
        ),
      [404, 409],
    );
    if (pod) {
      await recordEvent({ kind: 'Pod', namespace, name: podName }, pod, {
        type: 'Normal',
        reason: Reason.PodVmCreated,
        message: `VM ${vmName} (${vm.provider} ${vm.instanceId}) runs this pod; recorded in PeerPod ${namespace}/${podName}`,
      });
    }
    return { name: podName, uid: peerPod.metadata.uid, podFound: pod !== undefined };
  }

  async function listPeerPods(namespace: string): Promise<KubeObject[]> {
    try {
      return (
        ((await objects.custom.listNamespacedCustomObject({ ...PEERPOD_API, namespace })) as { items?: KubeObject[] })
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
      .filter((o) => ownerOf(o)?.uid === podUid && o.metadata.labels?.[MANAGED_BY] !== 'steward')
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
    const items = await listPeerPods(namespace);
    const self = items.find((o) => o.metadata.uid === uid);
    const owner = self && ownerOf(self);
    if (!self || !owner) return { deleted: [] };
    const created = (o: KubeObject) =>
      Date.parse((o.metadata as { creationTimestamp?: string }).creationTimestamp ?? '');
    const older = items.filter(
      (o) =>
        o.metadata.uid !== uid &&
        ownerOf(o)?.uid === owner.uid &&
        created(o) < created(self) &&
        !o.metadata.deletionTimestamp,
    );
    for (const o of older) {
      try {
        await objects.custom.deleteNamespacedCustomObject({
          ...PEERPOD_API,
          namespace,
          name: o.metadata.name,
          body: { preconditions: { uid: o.metadata.uid } },
        });
      } catch (error) {
        // Gone already, or another incarnation holds the name: nothing of this owner's left to delete.
        if (statusOf(error) !== 404 && statusOf(error) !== 409)
          throw toFailure(error, `delete older PeerPod ${namespace}/${o.metadata.name}`);
      }
    }
    const deleted = older.map((o) => o.metadata.name);
    const pod = deleted.length
      ? await objects.accessor({ kind: 'Pod', namespace, name: owner.name }).read()
      : undefined;
    if (pod?.metadata.uid === owner.uid) {
      const vms = older.map((o) => (o as { spec?: { instanceID?: string } }).spec?.instanceID ?? '?').join(', ');
      await recordEvent({ kind: 'Pod', namespace, name: owner.name }, pod, {
        type: 'Normal',
        reason: Reason.OlderPeerPodsDeleted,
        message: `PeerPods ${deleted.join(', ')} (VMs ${vms}) were written for this Pod before ${name} (a cloud-api-adaptor restart): deleted, and their VMs with them`,
      });
    }
    return { deleted };
  }

  return { recordPeerPod, findForeignPeerPods, retireOlderPeerPods };
}

const ownerOf = (o: KubeObject) => peerPodOwner(o.metadata.ownerReferences);
