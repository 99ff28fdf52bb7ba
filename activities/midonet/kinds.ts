// MidoNet resource kinds as data: body shape, vendor media type, paths (with parents) and what the API allows.
// Everything generic (ensure / remove / observe) lives in client.ts and reads only this table.
// Facts: ../shared/ref/midonet-api.md §1.3 (media types), §1.4 (paths), §2.5 (how midonet-kubernetes maps kinds).
import { z } from 'zod';
import type { BackendKind } from '../../model/translation/types';

const vendor = (name: string): string => `application/vnd.org.midonet.${name}+json`;

const id = z.guid();
const ipv4 = z.ipv4();
// MidoNet prints MACs lower-case with colons; URL keys use dashes instead (§1.4 MAC/ARP tables).
const mac = z.string().regex(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/, 'a lower-case MAC like ac:ca:ba:12:34:56');
const dashes = (m: string): string => m.replaceAll(':', '-');
const seg = encodeURIComponent;

const natTarget = z.looseObject({
  addressFrom: ipv4,
  addressTo: ipv4,
  portFrom: z.number().int(),
  portTo: z.number().int(),
});
const range = z.looseObject({ start: z.number().int(), end: z.number().int() });

/**
 * Request bodies, one per kind. Loose: fields the client does not need pass through untouched. Optional fields
 * accept null, as Go's encoding of midonet-kubernetes' structs writes them.
 */
export const bodies = {
  TunnelZone: z.looseObject({ id, name: z.string(), type: z.enum(['gre', 'vxlan', 'vtep']) }),
  TunnelZoneHost: z.looseObject({ hostId: id, ipAddress: ipv4 }),
  Router: z.looseObject({
    id,
    name: z.string().nullish(),
    tenantId: z.string().nullish(),
    adminStateUp: z.boolean().nullish(),
  }),
  Bridge: z.looseObject({
    id,
    name: z.string().nullish(),
    tenantId: z.string().nullish(),
    adminStateUp: z.boolean().nullish(),
    inboundFilterId: id.nullish(),
    outboundFilterId: id.nullish(),
  }),
  Port: z.looseObject({
    id,
    type: z.enum(['Bridge', 'Router', 'ExteriorBridge', 'InteriorBridge', 'ExteriorRouter', 'InteriorRouter']),
    inboundFilterId: id.nullish(),
    outboundFilterId: id.nullish(),
    portSubnet: z.array(z.string()).nullish(),
    portMac: mac.nullish(),
  }),
  // portId is null on purpose upstream (MNA-1249); the server only uses peerId.
  PortLink: z.looseObject({ portId: id.nullish(), peerId: id }),
  Route: z.looseObject({
    id,
    type: z.enum(['Normal', 'BlackHole', 'Reject', 'Local', 'Fip64']),
    srcNetworkAddr: ipv4,
    srcNetworkLength: z.number().int(),
    dstNetworkAddr: ipv4,
    dstNetworkLength: z.number().int(),
    nextHopPort: id.nullish(),
    nextHopGateway: ipv4.nullish(),
  }),
  Chain: z.looseObject({ id, name: z.string().nullish(), tenantId: z.string().nullish() }),
  Rule: z.looseObject({
    id,
    type: z.enum([
      'accept',
      'drop',
      'reject',
      'return',
      'jump',
      'dnat',
      'snat',
      'rev_dnat',
      'rev_snat',
      'l2_transform',
      'trace',
    ]),
    jumpChainId: id.nullish(),
    flowAction: z.enum(['accept', 'continue', 'return']).nullish(),
    natTargets: z.array(natTarget).nullish(),
    position: z.number().int().nullish(),
    nwDstAddress: ipv4.nullish(),
    nwSrcAddress: ipv4.nullish(),
    tpDst: range.nullish(),
    tpSrc: range.nullish(),
  }),
  HostInterfacePort: z.looseObject({ hostId: id.nullish(), portId: id, interfaceName: z.string() }),
  MACPort: z.looseObject({ macAddr: mac, portId: id, vlanId: z.number().int().nullish() }),
  IPv4MACPair: z.looseObject({ ip: ipv4, mac }),
} as const satisfies Record<BackendKind, z.ZodType>;

export type MidonetBody<K extends BackendKind> = z.infer<(typeof bodies)[K]>;

export interface KindPaths {
  /** POST target. */
  create: string;
  /** The object itself: PUT and DELETE. */
  item: string;
  /** Where its state is read, when that is not `item` (a link is read on its port). */
  observe?: { path: string; media: string };
}

export interface KindSpec<K extends BackendKind> {
  /** Item media type: Content-Type of POST/PUT, Accept of GET. */
  media: string;
  /** Whether the kind lives under a parent (the Translation's `parent`); a parent on any other kind is an error. */
  parent: boolean;
  /** The real API has PUT for it; otherwise a changed body can only be reported as a conflict. */
  put: boolean;
  /** Statuses a POST answers when the object already exists. */
  duplicate: readonly number[];
  /** Body fields the server does not keep as sent, so they never count as a difference. */
  ignore?: readonly string[];
  /** Its place among its siblings orders traffic (a rule's `position` in its chain): a replacement goes back there. */
  ordered?: true;
  /**
   * The fields by which MidoNet's object for this resource names it, when not its `id` alone (a table entry by its
   * keys; a link is read on its port): a reply naming another object is refused, never taken for this one.
   */
  names?: (parent: string, body: MidonetBody<K>) => Record<string, string>;
  /** Whether the observed object holds this resource (a port exists unlinked: the link does not). */
  present?: (observed: Record<string, unknown>) => boolean;
  paths: (parent: string, body: MidonetBody<K>) => KindPaths;
}

const portMedia = vendor('Port-v3');

export const kinds: { [K in BackendKind]: KindSpec<K> } = {
  TunnelZone: {
    media: vendor('TunnelZone-v1'),
    parent: false,
    put: true,
    duplicate: [409],
    paths: (_, b) => ({ create: '/tunnel_zones', item: `/tunnel_zones/${seg(b.id)}` }),
  },
  TunnelZoneHost: {
    media: vendor('TunnelZoneHost-v1'),
    parent: true,
    put: false,
    duplicate: [409],
    names: (p, b) => ({ tunnelZoneId: p, hostId: b.hostId }),
    paths: (p, b) => ({
      create: `/tunnel_zones/${seg(p)}/hosts`,
      item: `/tunnel_zones/${seg(p)}/hosts/${seg(b.hostId)}`,
    }),
  },
  Router: {
    media: vendor('Router-v3'),
    parent: false,
    put: true,
    duplicate: [409],
    paths: (_, b) => ({ create: '/routers', item: `/routers/${seg(b.id)}` }),
  },
  Bridge: {
    media: vendor('Bridge-v4'),
    parent: false,
    put: true,
    duplicate: [409],
    paths: (_, b) => ({ create: '/bridges', item: `/bridges/${seg(b.id)}` }),
  },
  Port: {
    media: portMedia,
    parent: true,
    put: true,
    duplicate: [409],
    paths: (p, b) => ({
      create: `/${b.type.endsWith('Bridge') ? 'bridges' : 'routers'}/${seg(p)}/ports`,
      item: `/ports/${seg(b.id)}`,
    }),
  },
  PortLink: {
    media: vendor('PortLink-v1'),
    parent: true,
    put: false,
    duplicate: [409],
    ignore: ['portId'],
    names: (p) => ({ id: p }),
    present: (port) => port.peerId != null,
    paths: (p) => ({
      create: `/ports/${seg(p)}/link`,
      item: `/ports/${seg(p)}/link`,
      observe: { path: `/ports/${seg(p)}`, media: portMedia },
    }),
  },
  Route: {
    media: vendor('Route-v1'),
    parent: true,
    put: false,
    duplicate: [409],
    paths: (p, b) => ({ create: `/routers/${seg(p)}/routes`, item: `/routes/${seg(b.id)}` }),
  },
  Chain: {
    media: vendor('Chain-v1'),
    parent: false,
    put: false,
    duplicate: [409],
    paths: (_, b) => ({ create: '/chains', item: `/chains/${seg(b.id)}` }),
  },
  Rule: {
    media: vendor('Rule-v2'),
    parent: true,
    put: false,
    duplicate: [409],
    // Every later head insert into the chain moves a rule, so its position is not part of what was asked for.
    ignore: ['position'],
    ordered: true,
    paths: (p, b) => ({ create: `/chains/${seg(p)}/rules`, item: `/rules/${seg(b.id)}` }),
  },
  HostInterfacePort: {
    media: vendor('HostInterfacePort-v1'),
    parent: true,
    put: false,
    duplicate: [409],
    // The path names the host; a hostId in the body is ignored by the server.
    ignore: ['hostId'],
    names: (p, b) => ({ hostId: p, portId: b.portId }),
    paths: (p, b) => ({ create: `/hosts/${seg(p)}/ports`, item: `/hosts/${seg(p)}/ports/${seg(b.portId)}` }),
  },
  // The server's own spelling; midonet-kubernetes sends `MACPort-v2`, accepted only because matching ignores case.
  MACPort: bridgeTableEntry(
    vendor('MacPort-v2'),
    'mac_table',
    (b) => `${dashes(b.macAddr)}_${b.portId}`,
    (b) => ({ macAddr: b.macAddr, portId: b.portId }),
  ),
  IPv4MACPair: bridgeTableEntry(
    vendor('IP4Mac-v1'),
    'arp_table',
    (b) => `${b.ip}_${dashes(b.mac)}`,
    (b) => ({ ip: b.ip, mac: b.mac }),
  ),
};

/** An entry of a bridge's MAC or ARP table, found in the table at a key made of its fields. */
function bridgeTableEntry<K extends 'MACPort' | 'IPv4MACPair'>(
  media: string,
  table: 'mac_table' | 'arp_table',
  key: (body: MidonetBody<K>) => string,
  names: (body: MidonetBody<K>) => Record<string, string>,
): KindSpec<K> {
  return {
    media,
    parent: true,
    put: false,
    names: (_, b) => names(b),
    // A duplicate MAC or ARP entry answers 500, not 409 (MNA-1315).
    duplicate: [409, 500],
    paths: (p, b) => ({ create: `/bridges/${seg(p)}/${table}`, item: `/bridges/${seg(p)}/${table}/${seg(key(b))}` }),
  };
}

/**
 * The top-level kinds the API lists by `?tenant_id=` (ref §1.2): what the sweeper inventories in Steward's tenant.
 * Everything else Steward writes hangs below one of them (ports, routes, rules) or is not a tenant's (hosts,
 * tunnel zones), and deleting a bridge, router or chain cascades to what hangs below it.
 */
export const tenantCollections = {
  Router: { path: '/routers', media: vendor('collection.Router-v3') },
  Bridge: { path: '/bridges', media: vendor('collection.Bridge-v4') },
  Chain: { path: '/chains', media: vendor('collection.Chain-v1') },
} as const satisfies Partial<Record<BackendKind, { path: string; media: string }>>;
export type TenantKind = keyof typeof tenantCollections;
export const tenantKinds = Object.keys(tenantCollections) as TenantKind[];
/** A listed Bridge, Router or Chain: only what the sweeper reads. */
export const tenantResource = z.looseObject({ id, name: z.string().nullish(), tenantId: z.string().nullish() });

/** Hosts are registered by agents, never by Steward: read-only, listed as midonet-kubernetes' node annotator does. */
export const hostsCollection = { path: '/hosts', media: vendor('collection.Host-v3') } as const;
export const host = z.looseObject({
  id,
  name: z.string(),
  alive: z.boolean().nullish(),
  addresses: z.array(z.string()).nullish(),
});
export type MidonetHost = z.infer<typeof host>;

export const tokenMedia = vendor('Token-v1');
