// Router (ref §1.4 Router): PUT replaces user fields; a missing router's DELETE is 204; delete cascades to
// its ports and routes.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, type RenderCtx } from '../crud';
import { itemUri } from '../kinds';
import { requireNone, requireRef } from '../refs';
import type { RouterRec, State } from '../state';
import { uuid, uuidList } from '../validation';
import { chainUri } from './bridges';

const schema = z.object({
  id: uuid.nullish(),
  tenantId: z.string().nullish(),
  name: z.string().max(255).nullish(),
  adminStateUp: z.boolean().nullish(),
  inboundFilterId: uuid.nullish(),
  outboundFilterId: uuid.nullish(),
  loadBalancerId: uuid.nullish(),
  asNumber: z.number().int().nullish(),
  inboundMirrorIds: uuidList,
  outboundMirrorIds: uuidList,
  localRedirectChainId: uuid.nullish(),
  forwardChainId: uuid.nullish(),
});
type Body = z.infer<typeof schema>;

function fromBody(state: State, id: string, b: Body): RouterRec {
  for (const chain of [b.inboundFilterId, b.outboundFilterId, b.localRedirectChainId, b.forwardChainId]) {
    requireRef(state, 'Chain', chain);
  }
  requireNone('LoadBalancer', b.loadBalancerId);
  requireNone('Mirror', b.inboundMirrorIds);
  requireNone('Mirror', b.outboundMirrorIds);
  return {
    id,
    tenantId: b.tenantId ?? null,
    name: b.name ?? null,
    adminStateUp: b.adminStateUp ?? true,
    inboundFilterId: b.inboundFilterId ?? null,
    outboundFilterId: b.outboundFilterId ?? null,
    loadBalancerId: b.loadBalancerId ?? null,
    asNumber: b.asNumber ?? null,
    inboundMirrorIds: b.inboundMirrorIds ?? [],
    outboundMirrorIds: b.outboundMirrorIds ?? [],
    localRedirectChainId: b.localRedirectChainId ?? null,
    forwardChainId: b.forwardChainId ?? null,
  };
}

function render(r: RouterRec, { base }: RenderCtx): Record<string, unknown> {
  const uri = itemUri('Router', r.id, base);
  return {
    ...r,
    uri,
    inboundFilter: chainUri(r.inboundFilterId, base),
    outboundFilter: chainUri(r.outboundFilterId, base),
    ports: `${uri}/ports`,
    peerPorts: `${uri}/peer_ports`,
    routes: `${uri}/routes`,
    bgpNetworks: `${uri}/bgp_networks`,
    bgpPeers: `${uri}/bgp_peers`,
  };
}

export const routers = defineKind<RouterRec, Body>({
  kind: 'Router',
  schema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: ({ state, key, body }) => fromBody(state, key, body),
  update: ({ state, key, body }) => fromBody(state, key, body),
  render,
});
