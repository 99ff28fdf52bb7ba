import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { peerPodOwner } from '../../model/vm-naming';
import type { PeerPodProjection } from '../../model/peerpod-projection';
import type { Observation } from '../../model/messages';
import { readOperatorRequest, type ReadRequest } from '../../model/operator-request';
import type { ObjectRef } from '../../model/naming';
import type { TranslationFailure } from '../../model/translation/errors';
import { createHash } from 'node:crypto';
import {
  INLINE_RESOURCE_BYTES,
  resourceBytes,
  type BackendResource,
  type KubernetesProjection,
} from '../../model/translation/types';
import { toProjection } from '../../model/translation/to-projection';
import { translationOwner } from '../../model/translation/model';
import type { Source, SourceEvent } from '../../platform/kubernetes/informer';
import {
  MANAGED_BY_LABEL,
  MANAGED_BY_STEWARD,
  OPERATOR_REQUESTER_ANNOTATION,
  TRANSLATION_FINALIZER,
  VM_CLOUD_ANNOTATION,
} from '../../model/vocabulary';
import type { WatchedKind } from '../../platform/kubernetes/kinds';
import type { TranslationProjection } from '../../model/translation/types';

/**
 * An object the translation schemas reject (the API server validated it, so this means a schema of ours is stricter
 * than Kubernetes). It is still forwarded, so the workflow shows the error naming the object and the field instead
 * of the object silently never being managed.
 */
export interface InvalidProjection {
  invalid: TranslationFailure;
}

export type ObservedProjection = KubernetesProjection | TranslationProjection | InvalidProjection | PeerPodProjection;

/** A PeerPod as the API server returns it (upstream's fields: both optional). */
interface PeerPodObject extends KubernetesObject {
  spec?: { cloudProvider?: string; instanceID?: string };
}

/** A Translation as the API server returns it; the CRD's schema has validated `resources` already. */
interface TranslationObject extends KubernetesObject {
  resources?: { kind: string; parent?: string; body: string }[];
}

/**
 * A Translation's projection: its resources inline, or above INLINE_RESOURCE_BYTES (or `byReference`) a digest and a
 * count, which has its workflow read them from the API server, by UID, when it acts.
 */
function projectTranslation(object: KubernetesObject, byReference = false): TranslationProjection {
  const metadata = object.metadata ?? {};
  const resources = ((object as TranslationObject).resources ?? []).map(({ kind, parent, body }) => ({
    kind,
    parent: parent ?? '',
    body,
  }));
  const inline = !byReference && resourceBytes(resources) <= INLINE_RESOURCE_BYTES;
  return {
    ...(inline
      ? { resources: resources as BackendResource[] }
      : { digest: createHash('sha256').update(JSON.stringify(resources)).digest('hex'), count: resources.length }),
    generation: metadata.generation ?? 0,
    finalizers: metadata.finalizers ?? [],
    ...(metadata.deletionTimestamp ? { deletionTimestamp: timestamp(metadata.deletionTimestamp) } : {}),
  };
}

/** The trimmed projection of one object: only the fields its workflow reads, so unrelated churn changes nothing. */
export function project(kind: WatchedKind, object: KubernetesObject): ObservedProjection {
  const metadata = object.metadata ?? {};
  if (kind === 'Translation') return projectTranslation(object);
  if (kind === 'PeerPod') {
    const { cloudProvider, instanceID } = (object as PeerPodObject).spec ?? {};
    const cloud = metadata.annotations?.[VM_CLOUD_ANNOTATION];
    const owner = peerPodOwner(metadata.ownerReferences);
    return {
      source: 'PeerPod',
      ...(cloudProvider ? { cloudProvider } : {}),
      ...(instanceID ? { instanceID } : {}),
      ...(cloud ? { cloud } : {}),
      ...(owner ? { ownerUid: owner.uid, ownerName: owner.name } : {}),
    };
  }
  // List items come without `kind`; the informer's kind is authoritative anyway.
  const result = toProjection({ ...object, kind });
  return result.ok ? result.projection : { invalid: result };
}

/** The signal payload for one watch event; `gone` for a DELETED event (or an object a re-list no longer finds). */
export function observe(kind: WatchedKind, object: KubernetesObject, gone = false): Observation<ObservedProjection> {
  return { ...envelope(kind, object, gone), projection: project(kind, object) };
}

/** The object as its workflow knows it: `kind` with the object's name. */
function refOf(kind: WatchedKind, object: KubernetesObject): ObjectRef {
  const metadata = object.metadata ?? {};
  return kind === 'Node'
    ? { kind, name: metadata.name ?? '' }
    : { kind, namespace: metadata.namespace ?? '', name: metadata.name ?? '' };
}

/** What every observation says of its object, addressed to the workflow of `kind` with the object's name. */
function envelope(kind: WatchedKind, object: KubernetesObject, gone: boolean): Omit<Observation, 'projection'> {
  const metadata = object.metadata ?? {};
  return {
    ref: refOf(kind, object),
    uid: metadata.uid ?? '',
    generation: metadata.generation ?? 0,
    deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
    gone,
    finalizers: metadata.finalizers ?? [],
  };
}

/**
 * A Pod of a peer-pod runtime class also feeds its peer pod's lifecycle (`peerpod/<ns>/<pod name>`), which makes and
 * deletes its cloud VM. Only the runtime class and the envelope (UID, deletion) matter there.
 */
export function observePeerPodOfPod(
  pod: KubernetesObject,
  runtimeClasses: ReadonlySet<string>,
  gone = false,
): Observation<PeerPodProjection> | undefined {
  const runtimeClassName = peerPodRuntimeClass(pod, runtimeClasses);
  if (!runtimeClassName) return undefined;
  return { ...envelope('PeerPod', pod, gone), projection: { source: 'Pod', runtimeClassName } };
}

/** The Pod's runtime class when it is one of the peer pods' (its lifecycle makes a VM), else undefined. */
function peerPodRuntimeClass(pod: KubernetesObject, runtimeClasses: ReadonlySet<string>): string | undefined {
  const runtimeClassName = (pod as V1Pod).spec?.runtimeClassName;
  return runtimeClassName && runtimeClasses.has(runtimeClassName) ? runtimeClassName : undefined;
}

/** Typed as a `Date`, though custom objects carry the raw string: one form either way, so the hash is stable. */
const timestamp = (value: Date | string): string => new Date(value).toISOString();

/**
 * A live PeerPod Steward wrote for a peer pod whose Pod this starter sees: that Pod's peer-pod workflow
 * (`peerpod/<ns>/<pod>`, the PeerPod's name) wrote it in the call that made the VM, so it is no news there (one signal
 * and workflow task less per peer pod). Its deletion, by hand or by the garbage collector, is sent, and so is every
 * PeerPod no live peer pod's Pod stands behind (written by another installation, or its Pod is no peer pod now).
 */
export function ownLivePeerPod(
  event: SourceEvent,
  pods: Pick<Source, 'get'>,
  runtimeClasses: ReadonlySet<string>,
): boolean {
  if (event.type === 'delete' || event.object.metadata?.deletionTimestamp) return false;
  const written = stewardPeerPod(event, pods);
  if (!written?.pod || written.pod.metadata?.uid !== written.owner.uid) return false;
  return peerPodRuntimeClass(written.pod, runtimeClasses) !== undefined;
}

/** A PeerPod Steward wrote for the Pod of its name: its owner reference, and the Pod of that name in the cache. */
function stewardPeerPod(event: SourceEvent, pods: Pick<Source, 'get'>) {
  const { metadata } = event.object;
  if (event.kind !== 'PeerPod' || !metadata || metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_STEWARD)
    return undefined;
  const owner = peerPodOwner(metadata.ownerReferences);
  if (!owner || owner.name !== metadata.name) return undefined;
  return { owner, pod: pods.get('Pod', metadata.namespace, owner.name) };
}

/**
 * A PeerPod Steward wrote, gone after the Pod it was written for: that Pod's peer-pod workflow deleted the VM and let
 * the PeerPod go in its last workflow task. Told, it would come while that task completes, which Temporal then refuses
 * (a signal unhandled) and runs again, VM deletion and all; and a workflow still running when its PeerPod is gone
 * (its finalizer removed by hand) is told by the re-list's repair (repair.ts).
 */
export function releasedPeerPod(event: SourceEvent, pods: Pick<Source, 'get'>): boolean {
  const written = event.type === 'delete' ? stewardPeerPod(event, pods) : undefined;
  return written !== undefined && written.pod?.metadata?.uid !== written.owner.uid;
}

/**
 * A peer pod's Pod deleting or gone while the cache still holds its PeerPod live: the garbage collector deletes that
 * PeerPod once the Pod is gone, seconds later when many go at once. Sent in one signal, they are one workflow task that
 * deletes the VM once (a Pod deleting ends its peer pod as its being gone does); sent apart, the next comes while the
 * first's task deletes it, that task is refused and runs again, VM deletion and all.
 */
export const awaitsPeerPodDeletion = (cache: Pick<Source, 'get'>, pending: ReadonlyMap<string, Observation>): boolean =>
  [...pending.values()].some((obs) => {
    const ending = obs.gone || obs.deleting;
    if (obs.ref.kind !== 'PeerPod' || !ending || (obs.projection as PeerPodProjection).source !== 'Pod') return false;
    const peerPod = cache.get('PeerPod', obs.ref.namespace, obs.ref.name)?.metadata;
    return !!peerPod && !peerPod.deletionTimestamp && peerPodOwner(peerPod.ownerReferences)?.uid === obs.uid;
  });

/** A Translation whose owner this starter watches: the owner's workflow pushes it. */
export const ownerOfTranslation = (kinds: readonly WatchedKind[]) => (event: SourceEvent) => {
  const owner = event.kind === 'Translation' ? translationOwner(event.object.metadata) : undefined;
  return owner && kinds.includes(owner.kind) ? owner : undefined;
};

/**
 * A Translation its owner's workflow pushes, deleted while that owner lives (by hand: the garbage collector deletes
 * it only after its owner): the owner's Observation, which makes its workflow finalize it and apply it again. Not
 * for an owner that is itself going, whose workflow finalizes its Translations anyway.
 */
export function ownerToRepair(
  event: SourceEvent,
  owner: (ObjectRef & { uid: string }) | undefined,
  source: Pick<Source, 'get'>,
): Observation | undefined {
  const deleted = event.type === 'delete' || event.object.metadata?.deletionTimestamp;
  if (!owner || !deleted) return undefined;
  const object = source.get(owner.kind, owner.namespace, owner.name);
  if (object?.metadata?.uid !== owner.uid || object.metadata.deletionTimestamp) return undefined;
  return observe(owner.kind, object);
}

/** A Translation its owner's workflow pushes, being deleted and held by our finalizer: only a workflow lets it go. */
export interface HeldTranslation {
  observation: Observation;
  owner: ObjectRef & { uid: string };
}

/** The held Translation of one source event (see `HeldTranslation`), from `owner` as `ownerOfTranslation` found it. */
export function heldTranslation(
  event: SourceEvent,
  owner: (ObjectRef & { uid: string }) | undefined,
): HeldTranslation | undefined {
  const metadata = event.object.metadata;
  if (!owner || event.type === 'delete' || !metadata?.deletionTimestamp) return undefined;
  if (!metadata.finalizers?.includes(TRANSLATION_FINALIZER)) return undefined;
  // By reference: what it deletes is read when it does, from this very Translation (by its UID). The cache this was
  // seen in may be behind: one let go meanwhile, and a new one of its name pushed, must not lose its resources.
  const observation = {
    ...envelope('Translation', event.object, false),
    projection: projectTranslation(event.object, true),
  };
  return { observation, owner };
}

/** An operator's request on a live object (model/operator-request.ts), for its starter to relay to its workflow. */
export interface OperatorRequestOf {
  ref: ObjectRef;
  request: ReadRequest;
  /** Who asks, as the admission policy let it be written. */
  by: string;
  resourceVersion?: string;
}

/** The operator's request an object carries, if any: not on a deleted object, whose workflow finishes anyway. */
export function operatorRequestOf(event: SourceEvent): OperatorRequestOf | undefined {
  const metadata = event.object.metadata;
  const request = event.type === 'delete' ? undefined : readOperatorRequest(metadata?.annotations);
  if (!request) return undefined;
  return {
    ref: refOf(event.kind, event.object),
    request,
    by: metadata?.annotations?.[OPERATOR_REQUESTER_ANNOTATION] ?? '',
    resourceVersion: metadata?.resourceVersion,
  };
}
