// Inputs and outputs of the translation.
//
// Inputs are trimmed projections of Kubernetes objects: the same JSON paths as the real objects (so error
// field paths read like `kubectl explain`), holding only what the translation reads. The zod schemas strip
// every other field and every annotation the translation ignores, so the watcher can project with
// `projection.parse(object)` and send nothing when the projection did not change.
//
// Output is a Translation custom resource (`translations.midonet.org/v1`) exactly as midonet-kubernetes
// writes it: name, namespace, labels, owner, finalizer, and the ordered backend resources.
import { z } from 'zod';
import type { BackendResource } from './model';
import { projectionSchemas } from './projections';

// The schema-free half (annotations, resource kinds, identities, labels) is in model.ts, which the worker preloads
// once for all workflows, as it does projections.ts (see worker/bundle.ts).
export * from './model';

// The schemas are built in projections.ts, once per worker (see there); the workflows' handles take these two.
const schemas = projectionSchemas();
export const { observedObjectProjection, translationProjection } = schemas;

export type NodeProjection = z.output<typeof schemas.nodeProjection>;
export type PodProjection = z.output<typeof schemas.podProjection>;
export type ServiceProjection = z.output<typeof schemas.serviceProjection>;
export type EndpointsProjection = z.output<typeof schemas.endpointsProjection>;
export type KubernetesProjection = z.output<typeof schemas.kubernetesProjection>;
export type KubernetesKind = KubernetesProjection['kind'];
/**
 * What a Translation's workflow is sent: its resources (absent above INLINE_RESOURCE_BYTES: then `digest` and `count`
 * stand for them), and the deletion inputs repeated from the observation's envelope, so the projection alone is the
 * whole desired state the pusher compares against. The schema takes any resource kind, so that an unknown one
 * reaches the Translation's workflow and is refused there, naming the resource.
 */
export type TranslationProjection = Omit<z.output<typeof translationProjection>, 'resources'> & {
  resources?: BackendResource[];
};

/** What a translation may need besides the object itself. */
export interface TranslationContext {
  /** MK's MIDONETKUBE_TENANT (default `midonetkube`): `tenantId` on bridges, chains and the router, and the seed of every ID. */
  tenant?: string;
  /** For a Pod: the Node named by `spec.nodeName` (its host-id binds the pod's port). */
  node?: NodeProjection | null;
  /** For Endpoints: the Service of the same namespace and name (its type and ClusterIP decide the rules). */
  service?: ServiceProjection | null;
}

export interface OwnerReference {
  apiVersion: 'v1';
  kind: KubernetesKind;
  name: string;
  uid: string;
}

/** A Translation custom resource as midonet-kubernetes writes it. */
export interface Translation {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** One owner (no `controller`, no `blockOwnerDeletion`), or none for the global Translations. */
  ownerReferences: OwnerReference[];
  finalizers: string[];
  /** In creation order. */
  resources: BackendResource[];
}
