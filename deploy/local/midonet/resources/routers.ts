// Router (ref §1.4 Router): PUT replaces user fields; a missing router's DELETE is 204; delete cascades to
// its ports and routes.
import { z } from 'zod';
import type { RenderCtx } from '../crud';
import { requireNone, requireRef } from '../refs';
import type { RouterRec, State } from '../state';
import { uuid } from '../validation';
import * as device from './devices';

const schema = z.object({
  ...device.fields,
  loadBalancerId: uuid.nullish(),
  asNumber: z.number().int().nullish(),
  ...device.mirrorFields,
  localRedirectChainId: uuid.nullish(),
  forwardChainId: uuid.nullish(),
});
type Body = z.infer<typeof schema>;

function fromBody(state: State, id: string, b: Body): RouterRec {
  for (const chain of [b.inboundFilterId, b.outboundFilterId, b.localRedirectChainId, b.forwardChainId]) {
    requireRef(state, 'Chain', chain);
  }
  requireNone('LoadBalancer', b.loadBalancerId);
  device.requireNoMirrors(b);
  return {
    ...device.head(id, b),
    loadBalancerId: b.loadBalancerId ?? null,
    asNumber: b.asNumber ?? null,
    ...device.mirrorLists(b),
    localRedirectChainId: b.localRedirectChainId ?? null,
    forwardChainId: b.forwardChainId ?? null,
  };
}

function render(r: RouterRec, { base }: RenderCtx): Record<string, unknown> {
  const links = device.links('Router', r, base);
  const { uri } = links;
  return {
    ...r,
    ...links,
    routes: `${uri}/routes`,
    bgpNetworks: `${uri}/bgp_networks`,
    bgpPeers: `${uri}/bgp_peers`,
  };
}

export const routers = device.define({ kind: 'Router', schema, fromBody, render });
