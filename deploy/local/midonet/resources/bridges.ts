// Bridge (ref §1.4 Bridge): PUT replaces every user field; delete cascades to ports and the MAC/ARP tables.
import { z } from 'zod';
import type { RenderCtx } from '../crud';
import { requireNone, requireRef } from '../refs';
import type { BridgeRec, State } from '../state';
import { uuid, uuidList } from '../validation';
import * as device from './devices';

const schema = z
  .object({
    ...device.fields,
    ...device.mirrorFields,
    qosPolicyId: uuid.nullish(),
    vxLanPortIds: uuidList,
  })
  .refine((b) => !b.vxLanPortIds?.length, { path: ['vxLanPortIds'], message: 'vxLanPortIds cannot be set' });
type Body = z.infer<typeof schema>;

function fromBody(state: State, id: string, b: Body): BridgeRec {
  requireRef(state, 'Chain', b.inboundFilterId);
  requireRef(state, 'Chain', b.outboundFilterId);
  device.requireNoMirrors(b);
  requireNone('QosPolicy', b.qosPolicyId);
  return { ...device.head(id, b), ...device.mirrorLists(b), qosPolicyId: b.qosPolicyId ?? null };
}

function render(r: BridgeRec, { base }: RenderCtx): Record<string, unknown> {
  const links = device.links('Bridge', r, base);
  const { uri } = links;
  return {
    ...r,
    vxLanPortIds: [],
    ...links,
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

export const bridges = device.define({ kind: 'Bridge', schema, fromBody, render });
