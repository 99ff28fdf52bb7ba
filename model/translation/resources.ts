// MidoNet REST bodies, one builder per backend kind, encoded as midonet-kubernetes' Go structs encode them
// (MK `pkg/midonet/resources.go`): same field order, `omitempty` fields left out when unset or zero, and Go's
// HTML-safe string escaping. Byte-identical bodies let Steward adopt Translations that midonet-kubernetes
// wrote without seeing a change, and the pusher may compare bodies as strings.
import type { BackendKind, BackendResource } from './types';

export interface NatTarget {
  addressFrom: string;
  addressTo: string;
  portFrom: number;
  portTo: number;
}

export interface PortRange {
  start: number;
  end: number;
}

const NO_PARENT = '';

function resource(kind: BackendKind, parent: string, body: Record<string, unknown>): BackendResource {
  return { kind, parent, body: goJSON(body) };
}

/** JSON.stringify drops `undefined` members (Go `omitempty`) and keeps `null` (a Go nil pointer without it). */
function goJSON(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Go `omitempty` on a string. */
const omitEmpty = (text: string): string | undefined => (text === '' ? undefined : text);

export function tunnelZone(fields: { id: string; name: string; type: string }): BackendResource {
  return resource('TunnelZone', NO_PARENT, { id: fields.id, name: fields.name, type: fields.type });
}

export function tunnelZoneHost(tunnelZoneId: string, fields: { hostId: string; ipAddress: string }): BackendResource {
  return resource('TunnelZoneHost', tunnelZoneId, { hostId: fields.hostId, ipAddress: fields.ipAddress });
}

export function router(fields: { id: string; tenantId: string; name: string }): BackendResource {
  return resource('Router', NO_PARENT, {
    id: fields.id,
    tenantId: omitEmpty(fields.tenantId),
    name: omitEmpty(fields.name),
  });
}

export function bridge(fields: {
  id: string;
  tenantId: string;
  name: string;
  inboundFilterId?: string;
}): BackendResource {
  return resource('Bridge', NO_PARENT, {
    id: fields.id,
    tenantId: omitEmpty(fields.tenantId),
    name: omitEmpty(fields.name),
    inboundFilterId: fields.inboundFilterId,
  });
}

/** `parent` is the bridge or router; `type` tells the pusher which of the two. */
export function port(
  parent: string,
  fields: { id: string; type: 'Bridge' | 'Router'; portSubnet?: string[]; portMac?: string; outboundFilterId?: string },
): BackendResource {
  return resource('Port', parent, {
    id: fields.id,
    type: fields.type,
    portSubnet: fields.portSubnet,
    portMac: fields.portMac,
    outboundFilterId: fields.outboundFilterId,
  });
}

/**
 * `parent` is the port the link is posted on. `portId` stays null on purpose: MK leaves it unset to avoid
 * MNA-1249, and the server reads only `peerId`.
 */
export function portLink(parent: string, fields: { peerId: string }): BackendResource {
  return resource('PortLink', parent, { portId: null, peerId: fields.peerId });
}

export function route(
  routerId: string,
  fields: {
    id: string;
    dstNetworkAddr: string;
    dstNetworkLength: number;
    nextHopGateway?: string;
    nextHopPort: string;
    srcNetworkAddr: string;
    srcNetworkLength: number;
    type: 'Normal';
  },
): BackendResource {
  return resource('Route', routerId, {
    id: fields.id,
    dstNetworkAddr: fields.dstNetworkAddr,
    dstNetworkLength: fields.dstNetworkLength,
    nextHopGateway: fields.nextHopGateway,
    nextHopPort: fields.nextHopPort,
    srcNetworkAddr: fields.srcNetworkAddr,
    srcNetworkLength: fields.srcNetworkLength,
    type: fields.type,
  });
}

export function chain(fields: { id: string; tenantId: string; name: string }): BackendResource {
  return resource('Chain', NO_PARENT, {
    id: fields.id,
    tenantId: omitEmpty(fields.tenantId),
    name: omitEmpty(fields.name),
  });
}

/** No `position`: MidoNet then inserts at the head of the chain, which is what MK relies on. */
export function rule(
  chainId: string,
  fields: {
    id: string;
    type: 'jump' | 'dnat' | 'snat' | 'rev_dnat' | 'rev_snat';
    dlType?: number;
    nwDstAddress?: string;
    nwDstLength?: number;
    nwProto?: number;
    nwSrcAddress?: string;
    nwSrcLength?: number;
    tpDst?: PortRange;
    jumpChainId?: string;
    flowAction?: 'accept' | 'continue' | 'return';
    natTargets?: NatTarget[];
  },
): BackendResource {
  return resource('Rule', chainId, {
    id: fields.id,
    type: fields.type,
    dlType: fields.dlType,
    nwDstAddress: fields.nwDstAddress,
    nwDstLength: fields.nwDstLength,
    nwProto: fields.nwProto,
    nwSrcAddress: fields.nwSrcAddress,
    nwSrcLength: fields.nwSrcLength,
    tpDst: fields.tpDst,
    jumpChainId: fields.jumpChainId,
    flowAction: fields.flowAction,
    natTargets: fields.natTargets,
  });
}

export function hostInterfacePort(hostId: string, fields: { portId: string; interfaceName: string }): BackendResource {
  return resource('HostInterfacePort', hostId, { hostId, portId: fields.portId, interfaceName: fields.interfaceName });
}

export function macPort(bridgeId: string, fields: { macAddr: string; portId: string }): BackendResource {
  return resource('MACPort', bridgeId, { macAddr: fields.macAddr, portId: fields.portId });
}

export function ipv4MacPair(bridgeId: string, fields: { ip: string; mac: string }): BackendResource {
  return resource('IPv4MACPair', bridgeId, { ip: fields.ip, mac: fields.mac });
}

/** IPv4 ethertype, the `dlType` of every rule that matches on addresses. */
export const ETHERTYPE_IPV4 = 0x800;
/** Source ports for SNAT; MK's choice ("REVISIT: arbitrary port range"), kept for identical rules. */
export const SNAT_PORTS = { portFrom: 30000, portTo: 60000 } as const;
