// The schema-free half of the translation's types: constants and pure functions with no zod schema, so that the
// translation and the pusher's machine, which need only these, can be preloaded into the worker's shared context
// (worker/bundle.ts). A preloaded module is deep-frozen, and a zod schema writes into itself on first use.
import type { ObjectRef } from '../naming';

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

/**
 * Above this size a Translation's resources travel by reference (the starter sends their digest, the activities read
 * them): midonet-kubernetes' Translations are a few KiB, so only hand-written giants take that path.
 */
export const INLINE_RESOURCE_BYTES = 64 * 1024;

/** The bytes a Translation's resources weigh in a payload, near enough to compare with INLINE_RESOURCE_BYTES. */
export const resourceBytes = (resources: readonly { kind: string; parent?: string; body: string }[]) =>
  resources.reduce((sum, r) => sum + r.kind.length + (r.parent?.length ?? 0) + r.body.length + 32, 0);

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
   * `foreign`: found in MidoNet as asked, made by someone else (another tenant, an operator): used, never deleted.
   */
  state: 'synced' | 'pending' | 'unverified' | 'foreign' | 'deleted' | 'absent' | 'failed';
  /** Found in MidoNet exactly as asked and taken over, not pushed by Steward (left by midonet-kubernetes). */
  adopted?: true;
  /**
   * `pending` only: the other bodies pushes were asked to write while it stayed pending (a failed push may have left
   * any of them in MidoNet), oldest first, at most {@link MAX_PENDING_BODIES} with `body`.
   */
  alsoAsked?: string[];
  /**
   * `pending` only: a push that failed was writing it (push-progress.ts), so it may be this Translation's; found as
   * asked, a later push takes it as its own. Without it, a pending resource is only asked for.
   */
  tried?: true;
}

/** How `status.childResources` keeps a `pending` resource that is `tried` (its states are otherwise the record's). */
export const TRIED_RECORD_STATE = 'tried';

/** How many bodies a pending resource remembers: a deletion finding another one in MidoNet leaves it as foreign. */
export const MAX_PENDING_BODIES = 4;

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

export const OWNER_UID_LABEL = 'midonet.org/owner-uid';
export const GLOBAL_LABEL = 'midonet.org/global';
/** Cluster-scoped owners (Nodes) put their Translations here; globals go to `kube-system`. */
export const CLUSTER_SCOPED_NAMESPACE = 'default';
export const GLOBAL_NAMESPACE = 'kube-system';

/**
 * The Translation an activity reads from the API server: its resources when they were sent by reference, and its
 * record from `status.childResources` when that is where the record is.
 */
export interface TranslationReference {
  ref: ObjectRef;
  uid: string;
  readResources: boolean;
  readRecord: boolean;
}

/** The kinds whose workflows push the Translations they own themselves (one workflow per object, DESIGN.md §2). */
export const TRANSLATING_KINDS = ['Node', 'Pod', 'Service', 'Endpoints'] as const;

/**
 * The Translations of an Endpoints object are its `Endpoints-Port` ones, by name (translationName). Read from
 * EndpointSlices, they carry the Service's UID as their owner, as the Service's own do: only the name tells whose
 * workflow pushes each, and whose stale one each is.
 */
const ENDPOINTS_TRANSLATION_PREFIX = 'endpoints-port.';
export const isEndpointsTranslation = (name: string) => name.startsWith(ENDPOINTS_TRANSLATION_PREFIX);

/** Whether the Translation of that name is one the owner's kind pushes, among those its UID owns. */
export function ownsTranslation(ownerKind: string, name: string): boolean {
  if (ownerKind === 'Endpoints') return isEndpointsTranslation(name);
  return ownerKind !== 'Service' || !isEndpointsTranslation(name);
}

interface OwnedMetadata {
  name?: string;
  namespace?: string;
  labels?: Record<string, string>;
  ownerReferences?: readonly { apiVersion?: string; kind?: string; name?: string; uid?: string }[];
}

/**
 * The object whose workflow pushes this Translation: its owner when that is a Node, Pod, Service or Endpoints that
 * the `midonet.org/owner-uid` label names too (as every translated Translation is written, by Steward or by
 * midonet-kubernetes). Undefined for a Translation no such object owns (hand-written, global): its own pusher's.
 */
export function translationOwner(metadata: OwnedMetadata | undefined): (ObjectRef & { uid: string }) | undefined {
  const label = metadata?.labels?.[OWNER_UID_LABEL];
  const owner = metadata?.ownerReferences?.find(
    (o) => o.apiVersion === 'v1' && o.uid === label && (TRANSLATING_KINDS as readonly unknown[]).includes(o.kind),
  );
  if (!owner?.name || !owner.uid) return undefined;
  const named = owner.kind as (typeof TRANSLATING_KINDS)[number];
  // An Endpoints' Translation read from EndpointSlices is owned by the Service: it is the Endpoints' workflow's.
  const kind = named === 'Service' && isEndpointsTranslation(metadata?.name ?? '') ? 'Endpoints' : named;
  return kind === 'Node'
    ? { kind, name: owner.name, uid: owner.uid }
    : { kind, namespace: metadata?.namespace ?? '', name: owner.name, uid: owner.uid };
}
