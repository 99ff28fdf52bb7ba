// Every stored resource kind, declared as data: where it lives, its media types, its parent, which methods
// the real server allows, what a DELETE of a missing object returns, and what a delete drags along.
// The cascade/clear/detach lists play the part of MidoNet's ZOOM bindings (ref §1.5, `MN:Backend`).
// Kind names are midonet-kubernetes' Translation kinds (ref §2.2), so counters and dumps read the same way.
import { MEDIA, type MediaDecl } from './media-types';
import type { TableName } from './state';

export type KindName =
  | 'Host'
  | 'TunnelZone'
  | 'TunnelZoneHost'
  | 'Bridge'
  | 'Router'
  | 'Port'
  | 'Route'
  | 'Chain'
  | 'Rule'
  | 'MACPort'
  | 'IPv4MACPair';

export interface CollectionDecl {
  /** Relative to /midonet-api; `:parentId` names the parent. */
  path: string;
  parent?: KindName;
  /** The record field that holds the parent id. */
  via?: string;
  create: boolean;
  /** False where the path has no list GET (→ 405). */
  list?: false;
  /** `?tenant_id=` filters the list (ref §1.2). */
  tenantFilter?: boolean;
}

export interface KindDecl {
  table: TableName;
  /** The class name in ZOOM error messages (ref §1.2: Bridge is `Network`). */
  storageClass: string;
  media: MediaDecl;
  /** Relative to /midonet-api; `:id` is the record key, `:parentId` the parent of a sub-entry. */
  itemPath: string;
  collections: readonly CollectionDecl[];
  put: boolean;
  /** Status of DELETE on a missing object (ref §1.5). */
  missingDelete: 204 | 404;
  /** Host answers 200, not 204, to PUT and DELETE (ref §1.4 Host). */
  okStatus?: 200;
  /** Delete the records of `kind` whose `via` field holds the deleted id. */
  cascade: readonly { kind: KindName; via: string }[];
  /** Null `field` (and `alsoClear`) on records of `kind` whose `field` holds the deleted id. */
  clear: readonly { kind: KindName; field: string; alsoClear?: readonly string[] }[];
  /** Remove the deleted id from the `list` array of the `kind` record named by our `via` field. */
  detach: readonly { kind: KindName; via: string; list: string }[];
}

const filterFields = ['inboundFilterId', 'outboundFilterId'];

/** A kind as the table below declares it: a binding list left out is empty. */
type KindSpec = Omit<KindDecl, 'media' | 'cascade' | 'clear' | 'detach'> &
  Partial<Pick<KindDecl, 'cascade' | 'clear' | 'detach'>>;

/** Completes each spec: the media types are MEDIA's entry of the same name, and missing binding lists are empty. */
function declareKinds(specs: Record<KindName, KindSpec>): Record<KindName, KindDecl> {
  const decls = Object.entries(specs).map(([name, spec]) => [
    name,
    { media: MEDIA[name as KindName], cascade: [], clear: [], detach: [], ...spec },
  ]);
  return Object.fromEntries(decls) as Record<KindName, KindDecl>;
}

export const KINDS = declareKinds({
  Host: {
    table: 'hosts',
    storageClass: 'Host',
    itemPath: '/hosts/:id',
    // POST /hosts exists upstream (@AllowCreate) but hosts come from agents; here they are seeded through
    // the admin endpoint only, so a client cannot come to depend on creating them.
    collections: [{ path: '/hosts', create: false }],
    put: true,
    missingDelete: 404, // the ref is silent; HostResource overrides delete and loads the host first
    okStatus: 200,
    cascade: [{ kind: 'TunnelZoneHost', via: 'hostId' }],
    clear: [{ kind: 'Port', field: 'hostId', alsoClear: ['interfaceName'] }],
  },
  TunnelZone: {
    table: 'tunnelZones',
    storageClass: 'TunnelZone',
    itemPath: '/tunnel_zones/:id',
    collections: [{ path: '/tunnel_zones', create: true }],
    put: true,
    missingDelete: 204,
    cascade: [{ kind: 'TunnelZoneHost', via: 'tunnelZoneId' }],
  },
  TunnelZoneHost: {
    table: 'tunnelZoneHosts',
    storageClass: 'TunnelZoneHost',
    itemPath: '/tunnel_zones/:parentId/hosts/:id',
    collections: [{ path: '/tunnel_zones/:parentId/hosts', parent: 'TunnelZone', via: 'tunnelZoneId', create: true }],
    put: false,
    missingDelete: 404,
  },
  Bridge: {
    table: 'bridges',
    storageClass: 'Network',
    itemPath: '/bridges/:id',
    collections: [{ path: '/bridges', create: true, tenantFilter: true }],
    put: true,
    missingDelete: 404,
    cascade: [
      { kind: 'Port', via: 'bridgeId' },
      // MAC and ARP tables belong to the bridge and go with it.
      { kind: 'MACPort', via: 'bridgeId' },
      { kind: 'IPv4MACPair', via: 'bridgeId' },
    ],
  },
  Router: {
    table: 'routers',
    storageClass: 'Router',
    itemPath: '/routers/:id',
    collections: [{ path: '/routers', create: true, tenantFilter: true }],
    put: true,
    missingDelete: 204,
    cascade: [
      { kind: 'Port', via: 'routerId' },
      { kind: 'Route', via: 'routerId' },
    ],
  },
  Port: {
    table: 'ports',
    storageClass: 'Port',
    itemPath: '/ports/:id',
    // No POST on /ports (ref §1.4 Port).
    collections: [
      { path: '/ports', create: false },
      { path: '/bridges/:parentId/ports', parent: 'Bridge', via: 'bridgeId', create: true },
      { path: '/routers/:parentId/ports', parent: 'Router', via: 'routerId', create: true },
    ],
    put: true,
    missingDelete: 404,
    cascade: [{ kind: 'Route', via: 'nextHopPort' }],
    // Unlink: the peer forgets us. MAC entries naming the port are not touched (the ref lists no such binding).
    clear: [{ kind: 'Port', field: 'peerId' }],
  },
  Route: {
    table: 'routes',
    storageClass: 'Route',
    itemPath: '/routes/:id',
    // No top-level list or create (ref §1.4 Route); /routes answers 405.
    collections: [
      { path: '/routes', create: false, list: false },
      { path: '/routers/:parentId/routes', parent: 'Router', via: 'routerId', create: true },
    ],
    put: false,
    missingDelete: 204,
  },
  Chain: {
    table: 'chains',
    storageClass: 'Chain',
    itemPath: '/chains/:id',
    collections: [{ path: '/chains', create: true, tenantFilter: true }],
    put: false,
    missingDelete: 404,
    cascade: [
      { kind: 'Rule', via: 'chainId' },
      { kind: 'Rule', via: 'jumpChainId' },
    ],
    // The ref names the filter ids; the router's other chain references are cleared alike (ref silent).
    clear: [
      ...filterFields.map((field) => ({ kind: 'Bridge' as const, field })),
      ...filterFields.map((field) => ({ kind: 'Port' as const, field })),
      ...[...filterFields, 'localRedirectChainId', 'forwardChainId'].map((field) => ({
        kind: 'Router' as const,
        field,
      })),
    ],
  },
  Rule: {
    table: 'rules',
    storageClass: 'Rule',
    itemPath: '/rules/:id',
    collections: [
      { path: '/rules', create: false, list: false },
      { path: '/chains/:parentId/rules', parent: 'Chain', via: 'chainId', create: true },
    ],
    put: false,
    missingDelete: 404,
    detach: [{ kind: 'Chain', via: 'chainId', list: 'ruleIds' }],
  },
  MACPort: {
    table: 'macEntries',
    storageClass: 'MAC table entry',
    itemPath: '/bridges/:parentId/mac_table/:id',
    collections: [{ path: '/bridges/:parentId/mac_table', parent: 'Bridge', via: 'bridgeId', create: true }],
    put: false,
    missingDelete: 404, // unverified upstream (ref §1.5); midonet-kubernetes accepts 404 and 2xx
  },
  IPv4MACPair: {
    table: 'arpEntries',
    storageClass: 'ARP table entry',
    itemPath: '/bridges/:parentId/arp_table/:id',
    collections: [{ path: '/bridges/:parentId/arp_table', parent: 'Bridge', via: 'bridgeId', create: true }],
    put: false,
    missingDelete: 404, // unverified upstream, as for MACPort
  },
});

export const KIND_NAMES = Object.keys(KINDS) as KindName[];

/** Records of sub-entry kinds are keyed `<parentId>/<id>`; the rest by id. */
export function splitKey(key: string): { parentId: string | undefined; id: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { parentId: undefined, id: key } : { parentId: key.slice(0, slash), id: key.slice(slash + 1) };
}

export function itemUri(kind: KindName, key: string, base: string): string {
  const { parentId, id } = splitKey(key);
  return base + KINDS[kind].itemPath.replace(':parentId', parentId ?? '').replace(':id', id);
}
