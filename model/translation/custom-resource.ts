// The Translation custom resources themselves (name, namespace, labels, owner, finalizer) around the resources each
// kind's file makes, as midonet-kubernetes' updater writes them (MK `pkg/converter/translation.go`).
import { translationName } from './ids';
import {
  type BackendResource,
  CLUSTER_SCOPED_NAMESPACE,
  GLOBAL_LABEL,
  GLOBAL_NAMESPACE,
  OWNER_UID_LABEL,
} from './model';
import type { KubernetesKind, KubernetesProjection, Translation } from './types';
import { TRANSLATION_FINALIZER } from '../vocabulary';
import type { ObjectRef } from '../naming';

/** One Translation's worth: its key kind (the object's kind, or a pseudo kind like `Service-Port`), name and resources. */
export interface Part {
  kind: string;
  name: string;
  resources: BackendResource[];
}

/**
 * The owner's Translations, in the given order. MK writes no Translation for an empty resource list (a
 * Service without ports has none), so neither do we.
 */
export function owned(owner: KubernetesProjection, parts: Part[]): Translation[] {
  const { name, uid } = owner.metadata;
  const namespace = 'namespace' in owner.metadata ? owner.metadata.namespace : CLUSTER_SCOPED_NAMESPACE;
  return parts
    .filter((part) => part.resources.length > 0)
    .map((part) => ({
      name: translationName(part.kind, part.name),
      namespace,
      labels: { [OWNER_UID_LABEL]: uid },
      // The object the UID is of: the garbage collector deletes what names a kind whose object has another UID.
      ownerReferences: [{ apiVersion: 'v1', kind: ('ownerKind' in owner && owner.ownerKind) || owner.kind, name, uid }],
      finalizers: [TRANSLATION_FINALIZER],
      resources: part.resources,
    }));
}

export function global(parts: Part[]): Translation[] {
  return parts.map((part) => ({
    name: translationName(part.kind, part.name),
    namespace: GLOBAL_NAMESPACE,
    labels: { [GLOBAL_LABEL]: '' },
    ownerReferences: [],
    finalizers: [TRANSLATION_FINALIZER],
    resources: part.resources,
  }));
}

export function refOf(object: KubernetesProjection): ObjectRef<KubernetesKind> {
  return 'namespace' in object.metadata
    ? { kind: object.kind, namespace: object.metadata.namespace, name: object.metadata.name }
    : { kind: object.kind, name: object.metadata.name };
}

/** Several parts can yield the same sub name (the same address listed twice); MK keys them in a map, so keep the first. */
export function uniqueByName(parts: Part[]): Part[] {
  const byName = new Map<string, Part>();
  for (const part of parts) if (!byName.has(part.name)) byName.set(part.name, part);
  return [...byName.values()];
}
