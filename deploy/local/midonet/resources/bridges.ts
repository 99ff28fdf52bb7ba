// Bridge (ref §1.4 Bridge): PUT replaces every user field; delete cascades to ports and the MAC/ARP tables.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, type RenderCtx } from '../crud';
import { itemUri } from '../kinds';
import { requireNone, requireRef } from '../refs';
import type { BridgeRec, State } from '../state';
import { uuid, uuidList } from '../validation';

const schema = z
  .object({
    id: uuid.nullish(),
    tenantId: z.string().nullish(),
    name: z.string().max(255).nullish(),
    adminStateUp: z.boolean().nullish(),
    inboundFilterId: uuid.nullish(),
    outboundFilterId: uuid.nullish(),
    inboundMirrorIds: uuidList,
    outboundMirrorIds: uuidList,
    qosPolicyId: uuid.nullish(),
    vxLanPortIds: uuidList,
  })
  .refine((b) => !b.vxLanPortIds?.length, { path: ['vxLanPortIds'], message: 'vxLanPortIds cannot be set' });
type Body = z.infer<typeof schema>;

function fromBody(state: State, id: string, b: Body): BridgeRec {
  requireRef(state, 'Chain', b.inboundFilterId);
  requireRef(state, 'Chain', b.outboundFilterId);
  requireNone('Mirror', b.inboundMirrorIds);
  requireNone('Mirror', b.outboundMirrorIds);
  requireNone('QosPolicy', b.qosPolicyId);
  return {
    id,
    tenantId: b.tenantId ?? null,
    name: b.name ?? null,
    adminStateUp: b.adminStateUp ?? true,
    inboundFilterId: b.inboundFilterId ?? null,
    outboundFilterId: b.outboundFilterId ?? null,
    inboundMirrorIds: b.inboundMirrorIds ?? [],
    outboundMirrorIds: b.outboundMirrorIds ?? [],
    qosPolicyId: b.qosPolicyId ?? null,
  };
}

export function chainUri(id: string | null, base: string): string | null {
  return id === null ? null : itemUri('Chain', id, base);
}

function render(r: BridgeRec, { base }: RenderCtx): Record<string, unknown> {
  const uri = itemUri('Bridge', r.id, base);
  return {
    ...r,
    vxLanPortIds: [],
    uri,
    inboundFilter: chainUri(r.inboundFilterId, base),
    outboundFilter: chainUri(r.outboundFilterId, base),
    ports: `${uri}/ports`,
    peerPorts: `${uri}/peer_ports`,
    vxLanPorts: `${uri}/vxlan_ports`,
    macTable: `${uri}/mac_table`,
    arpTable: `${uri}/arp_table`,
    dhcpSubnets: `${uri}/dhcp`,
    dhcpSubnet6s: `${uri}/dhcpV6`,
    macPortTemplate: `${uri}/mac_table/{macAddress}_{portId}`,
    vlanMacTableTemplate: `${uri}/vlans/{vlanId}/mac_table`,
    vlanMacPortTemplate: `${uri}/vlans/{vlanId}/mac_table/{macAddress}_{portId}`,
  };
}

export const bridges = defineKind<BridgeRec, Body>({
  kind: 'Bridge',
  schema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: ({ state, key, body }) => fromBody(state, key, body),
  update: ({ state, key, body }) => fromBody(state, key, body),
  render,
});
