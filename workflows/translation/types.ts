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
import { failure, type TranslationFailure } from './errors';
import { ANNOTATIONS, type BackendResource } from './model';

// The schema-free half (annotations, resource kinds, identities, labels) is in model.ts, which the worker preloads
// once for all workflows; the zod schemas stay here (see worker/bundle.ts).
export * from './model';

/** Keeps only the named annotations, so unrelated annotation churn does not change the projection. */
const annotations = (...keep: string[]) =>
  z
    .record(z.string(), z.string())
    .optional()
    .transform((all) => Object.fromEntries(keep.flatMap((key) => (all?.[key] === undefined ? [] : [[key, all[key]]]))) as Record<string, string>);

const clusterScopedMeta = { name: z.string().min(1), uid: z.string().min(1) };
const namespacedMeta = { ...clusterScopedMeta, namespace: z.string().min(1) };

export const nodeProjection = z.object({
  kind: z.literal('Node'),
  metadata: z.object({
    ...clusterScopedMeta,
    annotations: annotations(ANNOTATIONS.hostId, ANNOTATIONS.tunnelZoneId, ANNOTATIONS.tunnelEndpointIP, ANNOTATIONS.macAddress),
  }),
  spec: z.object({ podCIDR: z.string().optional() }).default({}),
  status: z.object({ addresses: z.array(z.object({ type: z.string(), address: z.string() })).optional() }).default({}),
});

export const podProjection = z.object({
  kind: z.literal('Pod'),
  metadata: z.object({ ...namespacedMeta, annotations: annotations(ANNOTATIONS.macAddress) }),
  spec: z.object({ nodeName: z.string().optional(), hostNetwork: z.boolean().optional() }).default({}),
  status: z.object({ phase: z.string().optional(), podIP: z.string().optional() }).default({}),
});

// `type` and `protocol` default as the API server defaults them, so a projection written by hand reads the same.
export const serviceProjection = z.object({
  kind: z.literal('Service'),
  metadata: z.object(namespacedMeta),
  spec: z
    .object({
      type: z.string().default('ClusterIP'),
      clusterIP: z.string().optional(),
      ports: z.array(z.object({ name: z.string().default(''), protocol: z.string().default('TCP'), port: z.number() })).optional(),
    })
    .default({ type: 'ClusterIP' }),
});

export const endpointsProjection = z.object({
  kind: z.literal('Endpoints'),
  metadata: z.object(namespacedMeta),
  // notReadyAddresses are not projected: midonet-kubernetes never sends traffic to them.
  subsets: z
    .array(
      z.object({
        addresses: z.array(z.object({ ip: z.string() })).optional(),
        ports: z.array(z.object({ name: z.string().default(''), protocol: z.string().default('TCP'), port: z.number() })).optional(),
      }),
    )
    .optional(),
});

export const kubernetesProjection = z.discriminatedUnion('kind', [nodeProjection, podProjection, serviceProjection, endpointsProjection]);

/** An object the watcher could not project: forwarded with the error, so its workflow shows it (starter/controller/projection.ts). */
export const invalidProjection = z.object({
  invalid: z.object({
    ok: z.literal(false),
    error: z.object({
      reason: z.string(),
      object: z.object({ kind: z.string(), namespace: z.string().optional(), name: z.string() }),
      field: z.string(),
      message: z.string(),
    }),
  }),
});

/** What an object's lifecycle is sent: its projection, or why there is none. */
export const observedObjectProjection = z.union([kubernetesProjection, invalidProjection]);

/**
 * What a Translation's pusher is sent. Kinds and bodies are only strings here: the pusher checks the whole
 * Translation before it pushes any of it, and refuses it with the resource, field and reason (InvalidTranslation).
 */
export const translationProjection = z.object({
  // Absent for a Translation larger than INLINE_RESOURCE_BYTES: sent by reference (`digest`, `count`), its pusher's
  // activities read it from the API server, so no signal, activity input or persisted context grows with it.
  resources: z.array(z.object({ kind: z.string(), parent: z.string(), body: z.string() })).optional(),
  digest: z.string().max(100).optional(),
  count: z.number().int().nonnegative().optional(),
  // The starter repeats these from the envelope (so the projection alone is the desired state); the pusher reads the envelope's.
  generation: z.number().int().nonnegative().optional(),
  finalizers: z.array(z.string()).optional(),
  deletionTimestamp: z.string().optional(),
});

export type NodeProjection = z.output<typeof nodeProjection>;
export type PodProjection = z.output<typeof podProjection>;
export type ServiceProjection = z.output<typeof serviceProjection>;
export type EndpointsProjection = z.output<typeof endpointsProjection>;
export type KubernetesProjection = z.output<typeof kubernetesProjection>;
export type KubernetesKind = KubernetesProjection['kind'];

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

/**
 * Projects a Kubernetes object (or checks a received projection): the trimmed projection, or a
 * `MalformedObject` error naming the first field that does not fit. The object must carry its `kind`.
 */
export function toProjection(object: unknown): { ok: true; projection: KubernetesProjection } | TranslationFailure {
  const parsed = kubernetesProjection.safeParse(object);
  if (parsed.success) return { ok: true, projection: parsed.data };
  const issue = parsed.error.issues[0];
  const raw = (typeof object === 'object' && object !== null ? object : {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const kind = str(raw.kind);
  const namespace = str(raw.metadata?.namespace);
  return failure(
    {
      kind: kind === 'Node' || kind === 'Pod' || kind === 'Service' || kind === 'Endpoints' ? kind : 'Unknown',
      ...(namespace === undefined ? {} : { namespace }),
      name: str(raw.metadata?.name) ?? '',
    },
    'MalformedObject',
    fieldPath(issue?.path ?? []),
    issue?.message ?? 'not a Kubernetes object',
  );
}

/** `metadata.annotations["midonet.org/host-id"]`, `spec.ports[0].port`: the style of every error's field. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => {
      if (typeof key === 'number') return `[${key}]`;
      const name = String(key);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `[${JSON.stringify(name)}]`;
      return i === 0 ? name : `.${name}`;
    })
    .join('');
}
