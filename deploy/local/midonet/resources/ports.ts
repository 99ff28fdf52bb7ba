// Bridge and router ports (ref §1.4 Port). Created only under their device; PUT never unbinds or unlinks;
// a router port POST generates a MAC when absent and adds a Local /32 route per IPv4 subnet.
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { rows } from '../cascade';
import type { Ctx } from '../context';
import { defineKind, load, type RenderCtx, type WriteCtx } from '../crud';
import { badRequest, conflict, type ApiError } from '../errors';
import { apiBase, negotiate, sendJson } from '../http';
import { itemUri, KINDS, type KindName } from '../kinds';
import { requireNone, requireRef } from '../refs';
import type { ApiRouter } from '../router';
import type { PortRec, State } from '../state';
import { cidr, ipv4, isIpv4, mac, prefixLength, uuid, uuidList } from '../validation';
import { chainUri } from './devices';

/** Current names and the legacy ones (ref §1.4 Port); Vxlan ports are not emulated, so never fit a device. */
const PORT_TYPES = {
  Bridge: 'Bridge',
  ExteriorBridge: 'Bridge',
  InteriorBridge: 'Bridge',
  Router: 'Router',
  ExteriorRouter: 'Router',
  InteriorRouter: 'Router',
  Vxlan: null,
} as const;
type PortTypeName = keyof typeof PORT_TYPES;

const schema = z.object({
  id: uuid.nullish(),
  type: z.enum(Object.keys(PORT_TYPES) as [PortTypeName, ...PortTypeName[]]),
  adminStateUp: z.boolean().nullish(),
  inboundFilterId: uuid.nullish(),
  outboundFilterId: uuid.nullish(),
  vifId: uuid.nullish(),
  hostId: uuid.nullish(),
  interfaceName: z.string().nullish(),
  peerId: uuid.nullish(),
  inboundMirrorIds: uuidList,
  outboundMirrorIds: uuidList,
  postInFilterMirrorIds: uuidList,
  preOutFilterMirrorIds: uuidList,
  insertionIds: uuidList,
  qosPolicyId: uuid.nullish(),
  vlanId: z.number().int().min(-32768).max(32767).nullish(),
  portSubnet: z.array(cidr).nullish(),
  portAddress: ipv4.nullish(),
  networkAddress: ipv4.nullish(),
  networkLength: prefixLength.nullish(),
  portMac: mac.nullish(),
  rtrPortVni: z.number().int().nullish(),
  offRampVxlan: z.boolean().nullish(),
  serviceContainerId: uuid.nullish(),
});
type Body = z.infer<typeof schema>;

/** A unicast, locally administered MAC, as a server-generated portMac. */
function randomMac(): string {
  const bytes = randomBytes(6);
  bytes[0] = (bytes[0]! & 0xfc) | 0x02;
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(':');
}

function firstIpv4(subnets: readonly string[]): { address: string; length: number } | undefined {
  for (const s of subnets) {
    const [address, length] = s.split('/');
    if (address !== undefined && isIpv4(address)) return { address, length: Number(length) };
  }
  return undefined;
}

function networkOf(address: string, length: number): string {
  const n = address.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const masked = length === 0 ? 0 : Math.floor(n / 2 ** (32 - length)) * 2 ** (32 - length);
  return [24, 16, 8, 0].map((s) => Math.floor(masked / 2 ** s) % 256).join('.');
}

const linkConflict = (peer: string, current: string): ApiError =>
  conflict(
    `Operation failed because the Port with ID ${peer} already references the Port with ID ${current} via the field peer_id. This field can accommodate only one reference.`,
  );

/**
 * Builds the record from a POST or PUT body. On PUT (`existing`), the device, tunnel key and, when set, the
 * binding and the peer are kept; everything else, portMac and portSubnet included, comes from the body.
 * A hostId or peerId in a body is a reference like any other (the ref is silent on setting them this way;
 * ZOOM treats them as bindings, so they must exist and a peer must be free).
 */
function fromBody(c: WriteCtx<Body>, device: 'Bridge' | 'Router', deviceId: string, existing?: PortRec): PortRec {
  const { state, key, body: b } = c;
  if (PORT_TYPES[b.type] !== device) throw badRequest(`Not a ${device.toLowerCase()} port.`);
  for (const chain of [b.inboundFilterId, b.outboundFilterId]) requireRef(state, 'Chain', chain);
  for (const mirrors of [b.inboundMirrorIds, b.outboundMirrorIds, b.postInFilterMirrorIds, b.preOutFilterMirrorIds]) {
    requireNone('Mirror', mirrors);
  }
  requireNone('L2Insertion', b.insertionIds);
  requireNone('QosPolicy', b.qosPolicyId);
  requireNone('ServiceContainer', b.serviceContainerId);
  const hostId = existing?.hostId ?? b.hostId ?? null;
  const peerId = existing?.peerId ?? b.peerId ?? null;
  requireRef(state, 'Host', hostId);
  if (peerId !== null && peerId !== existing?.peerId) {
    const peer = load<PortRec>(state, 'Port', peerId);
    if (peer.peerId !== null) throw linkConflict(peerId, peer.peerId);
  }
  const legacy = b.portAddress != null && b.networkLength != null ? [`${b.portAddress}/${b.networkLength}`] : [];
  const router = device === 'Router';
  return {
    id: key,
    type: device,
    bridgeId: router ? null : deviceId,
    routerId: router ? deviceId : null,
    adminStateUp: b.adminStateUp ?? true,
    inboundFilterId: b.inboundFilterId ?? null,
    outboundFilterId: b.outboundFilterId ?? null,
    tunnelKey: existing?.tunnelKey ?? state.nextTunnelKey,
    vifId: b.vifId ?? null,
    hostId,
    previousHostId: existing?.previousHostId ?? null,
    interfaceName: existing?.interfaceName ?? b.interfaceName ?? null,
    peerId,
    inboundMirrorIds: b.inboundMirrorIds ?? [],
    outboundMirrorIds: b.outboundMirrorIds ?? [],
    postInFilterMirrorIds: b.postInFilterMirrorIds ?? [],
    preOutFilterMirrorIds: b.preOutFilterMirrorIds ?? [],
    insertionIds: b.insertionIds ?? [],
    qosPolicyId: b.qosPolicyId ?? null,
    vlanId: router ? null : (b.vlanId ?? 0),
    // Legacy portAddress/networkLength stand in for portSubnet when it is absent (ref silent on input).
    portSubnet: router ? (b.portSubnet ?? legacy) : [],
    // MNA-1251: omitting portMac on PUT clears it; only POST generates one.
    portMac: router ? (b.portMac ?? (existing ? null : randomMac())) : null,
    rtrPortVni: router ? (b.rtrPortVni ?? null) : null,
    offRampVxlan: router ? (b.offRampVxlan ?? null) : null,
    serviceContainerId: router ? (b.serviceContainerId ?? null) : null,
  };
}

function setPeer(state: State, port: PortRec): void {
  const peer = port.peerId === null ? undefined : state.ports[port.peerId];
  if (peer) peer.peerId = port.id;
}

function render(p: PortRec, { state, base }: RenderCtx): Record<string, unknown> {
  const uri = itemUri('Port', p.id, base);
  const deviceKind: KindName = p.type;
  const deviceId = (p.bridgeId ?? p.routerId)!;
  const host = p.hostId === null ? undefined : state.hosts[p.hostId];
  const common = {
    id: p.id,
    type: p.type,
    deviceId,
    adminStateUp: p.adminStateUp,
    inboundFilterId: p.inboundFilterId,
    outboundFilterId: p.outboundFilterId,
    tunnelKey: p.tunnelKey,
    vifId: p.vifId,
    hostId: p.hostId,
    previousHostId: p.previousHostId,
    interfaceName: p.interfaceName,
    peerId: p.peerId,
    inboundMirrorIds: p.inboundMirrorIds,
    outboundMirrorIds: p.outboundMirrorIds,
    postInFilterMirrorIds: p.postInFilterMirrorIds,
    preOutFilterMirrorIds: p.preOutFilterMirrorIds,
    insertionIds: p.insertionIds,
    qosPolicyId: p.qosPolicyId,
    // Upstream this comes from agent state; here a port is active when bound to a live host.
    active: host?.alive === true && p.interfaceName !== null,
    uri,
    device: itemUri(deviceKind, deviceId, base),
    host: p.hostId === null ? null : itemUri('Host', p.hostId, base),
    peer: p.peerId === null ? null : itemUri('Port', p.peerId, base),
    link: `${uri}/link`,
    portGroups: `${uri}/port_groups`,
    hostInterfacePort: p.hostId === null ? null : `${itemUri('Host', p.hostId, base)}/ports/${p.id}`,
    inboundFilter: chainUri(p.inboundFilterId, base),
    outboundFilter: chainUri(p.outboundFilterId, base),
  };
  if (p.type === 'Bridge') return { ...common, bridgeId: p.bridgeId, vlanId: p.vlanId };
  const first = firstIpv4(p.portSubnet);
  return {
    ...common,
    routerId: p.routerId,
    portSubnet: p.portSubnet,
    portAddress: first?.address ?? null,
    networkAddress: first ? networkOf(first.address, first.length) : null,
    networkLength: first?.length ?? null,
    portMac: p.portMac,
    rtrPortVni: p.rtrPortVni,
    offRampVxlan: p.offRampVxlan,
    serviceContainerId: p.serviceContainerId,
    bgpStatus: null,
  };
}

export const ports = defineKind<PortRec, Body>({
  kind: 'Port',
  schema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: (c) => fromBody(c, c.collection!.parent as 'Bridge' | 'Router', c.parentId!),
  afterCreate: ({ state, record }) => {
    state.nextTunnelKey += 1;
    setPeer(state, record);
    // RouterPortResource.createFilter: a Local route to the port address for each IPv4 subnet (ref §1.4).
    for (const subnet of record.portSubnet) {
      const [address] = subnet.split('/');
      if (address === undefined || !isIpv4(address)) continue;
      const id = randomUUID();
      state.routes[id] = {
        id,
        routerId: record.routerId!,
        srcNetworkAddr: '0.0.0.0',
        srcNetworkLength: 0,
        dstNetworkAddr: address,
        dstNetworkLength: 32,
        nextHopPort: record.id,
        nextHopGateway: null,
        type: 'Local',
        weight: 0,
        attributes: null,
      };
    }
  },
  update: (c) => {
    const existing = c.existing;
    const record = fromBody(c, existing.type, (existing.bridgeId ?? existing.routerId)!, existing);
    setPeer(c.state, record);
    return record;
  },
  render,
});

/** GET /{bridges,routers}/{id}/peer_ports: the ports linked to the device's ports. */
export function registerPeerPorts(router: ApiRouter, ctx: Ctx): void {
  for (const device of ['Bridge', 'Router'] as const) {
    const path = `${KINDS[device].itemPath.replace(':id', ':parentId')}/peer_ports`;
    router.add('GET', path, 'Port', async (req, reply) => {
      const type = negotiate(req, KINDS.Port.media, 'collection');
      const state = ctx.store.state;
      const deviceId = (req.params as { parentId: string }).parentId.toLowerCase();
      load(state, device, deviceId);
      const field = device === 'Bridge' ? 'bridgeId' : 'routerId';
      const peers = Object.values(state.ports)
        .filter((p) => p[field] === deviceId && p.peerId !== null)
        .map((p) => rows(state, 'Port')[p.peerId!] as unknown as PortRec | undefined)
        .filter((p): p is PortRec => p !== undefined);
      const c = { state, base: apiBase(req) };
      return sendJson(
        reply,
        type,
        peers.map((p) => render(p, c)),
      );
    });
  }
}
