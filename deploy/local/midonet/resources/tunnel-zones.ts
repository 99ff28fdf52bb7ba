// Tunnel zones and their member hosts (ref §1.4 TunnelZone/TunnelZoneHost), with the name-uniqueness check
// that also rejects a PUT keeping the zone's own name (MNA-1293, reproduced on purpose).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, type RenderCtx } from '../crud';
import { conflict, emptyStatus } from '../errors';
import { itemUri } from '../kinds';
import { requireRef } from '../refs';
import type { State, TunnelZoneHostRec, TunnelZoneRec } from '../state';
import { ipv4, uuid } from '../validation';

const zoneSchema = z.object({
  id: uuid.nullish(),
  name: z.string().min(1).max(255),
  type: z.enum(['gre', 'vxlan', 'vtep']),
});
type ZoneBody = z.infer<typeof zoneSchema>;

function checkName(state: State, name: string): void {
  // Upstream compares against every zone, the one being updated included (MNA-1293).
  if (Object.values(state.tunnelZones).some((z) => z.name === name)) throw conflict('Tunnel zone name already exists.');
}

function renderZone(z: TunnelZoneRec, { base }: RenderCtx): Record<string, unknown> {
  const uri = itemUri('TunnelZone', z.id, base);
  return { ...z, uri, hosts: `${uri}/hosts` };
}

export const tunnelZones = defineKind<TunnelZoneRec, ZoneBody>({
  kind: 'TunnelZone',
  schema: zoneSchema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: ({ state, key, body }) => {
    checkName(state, body.name);
    return { id: key, name: body.name, type: body.type };
  },
  update: ({ state, key, body }) => {
    checkName(state, body.name);
    return { id: key, name: body.name, type: body.type };
  },
  render: renderZone,
});

const memberSchema = z.object({ hostId: uuid, ipAddress: ipv4 });
type MemberBody = z.infer<typeof memberSchema>;

function renderMember(m: TunnelZoneHostRec, { base }: RenderCtx): Record<string, unknown> {
  return {
    ...m,
    uri: itemUri('TunnelZoneHost', `${m.tunnelZoneId}/${m.hostId}`, base),
    host: itemUri('Host', m.hostId, base),
    tunnelZone: itemUri('TunnelZone', m.tunnelZoneId, base),
  };
}

/** Membership is keyed by host only: the same host with another IP is still a duplicate (ref §2.5). */
export const tunnelZoneHosts = defineKind<TunnelZoneHostRec, MemberBody>({
  kind: 'TunnelZoneHost',
  schema: memberSchema,
  keyFor: (b, parentId) => `${parentId}/${b.hostId}`,
  duplicate: () => emptyStatus(409, 'host already in the tunnel zone'),
  missing: () => emptyStatus(404, 'host not in the tunnel zone'),
  create: ({ state, body, parentId }) => {
    requireRef(state, 'Host', body.hostId);
    return { tunnelZoneId: parentId!, hostId: body.hostId, ipAddress: body.ipAddress };
  },
  render: renderMember,
});
