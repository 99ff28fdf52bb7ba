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

export const ANNOTATIONS = {
  /** MidoNet host of a Node (written by MK's node annotator); binds the node's and its pods' ports. */
  hostId: 'midonet.org/host-id',
  /** Tunnel zone of a Node; empty means the default zone. */
  tunnelZoneId: 'midonet.org/tunnel-zone-id',
  /** Tunnel endpoint IP of a Node; absent means "not in a tunnel zone yet". */
  tunnelEndpointIP: 'midonet.org/tunnel-endpoint-ip',
  /** MAC of a Node's `midokube-node` or a Pod's eth0, written by midonet-kube-node / the CNI plugin. */
  macAddress: 'midonet.org/mac-address',
} as const;

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

/**
 * Above this size a Translation's resources travel by reference (the starter sends their digest, the activities read
 * them): midonet-kubernetes' Translations are a few KiB, so only hand-written giants take that path.
 */
export const INLINE_RESOURCE_BYTES = 64 * 1024;

/** The bytes a Translation's resources weigh in a payload, near enough to compare with INLINE_RESOURCE_BYTES. */
export const resourceBytes = (resources: readonly { kind: string; parent?: string; body: string }[]) =>
  resources.reduce((sum, r) => sum + r.kind.length + (r.parent?.length ?? 0) + r.body.length + 32, 0);

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

/**
 * MidoNet resource kinds as midonet-kubernetes names them in `resources[].kind` (its Go type names): the one list
 * the translation writes, the pusher records and the MidoNet client knows how to call (activities/midonet/kinds.ts).
 */
export const BACKEND_KINDS = [
  'TunnelZone',
  'TunnelZoneHost',
  'Router',
  'Bridge',
  'Port',
  'PortLink',
  'Route',
  'Chain',
  'Rule',
  'HostInterfacePort',
  'MACPort',
  'IPv4MACPair',
] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** One entry of a Translation's `resources`. */
export interface BackendResource {
  kind: BackendKind;
  /** The parent's ID (bridge, router, chain, host, tunnel zone, or the port a link starts from), or `""`. */
  parent: string;
  /** The REST request body, JSON-encoded as MK's Go structs encode it; never contains the parent. */
  body: string;
}

/** One backend resource as the pusher recorded it: its workflow's record of what is in MidoNet. */
export interface PushedResource extends BackendResource {
  /** Stable identity: kind plus its ID (or its identifying body for kinds without one). */
  key: string;
  id: string;
  /**
   * `pending`: a push of it started and did not report; it may be in MidoNet, so a removal or deletion includes it.
   * `unverified`: pushed before, but the last push failed, so its presence is not vouched for (still this one's).
   */
  state: 'synced' | 'pending' | 'unverified' | 'deleted' | 'absent' | 'failed';
  /** Found in MidoNet exactly as asked and taken over, not pushed by Steward (left by midonet-kubernetes). */
  adopted?: true;
}

/** A resource's identity: its kind and ID, or for kinds without an ID (links, bindings, table entries) its parent and body. */
export function identify(resource: BackendResource): { key: string; id: string } {
  const body = JSON.parse(resource.body) as Record<string, unknown>;
  const id = typeof body.id === 'string' && body.id ? body.id : `${resource.parent ?? ''}/${resource.body}`;
  return { id, key: `${resource.kind}:${id}` };
}

/** identify() for a resource that may not be valid yet: undefined when its body is not JSON (it is refused, never pushed). */
export function identifyIfJson(resource: BackendResource): { key: string; id: string } | undefined {
  try {
    return identify(resource);
  } catch {
    return undefined;
  }
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

export const OWNER_UID_LABEL = 'midonet.org/owner-uid';
export const GLOBAL_LABEL = 'midonet.org/global';
/** Cluster-scoped owners (Nodes) put their Translations here; globals go to `kube-system`. */
export const CLUSTER_SCOPED_NAMESPACE = 'default';
export const GLOBAL_NAMESPACE = 'kube-system';

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
