// Routes (ref §1.4 Route): created under a router, no PUT, DELETE of a missing route is 204. A route with a
// next-hop port is stored on that port upstream, so deleting the port (or its router) deletes the route.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, type RenderCtx } from '../crud';
import { invalid } from '../errors';
import { itemUri } from '../kinds';
import { requireRef } from '../refs';
import type { RouteRec, RouteType } from '../state';
import { ipv4, prefixLength, uuid } from '../validation';

const ROUTE_TYPES: readonly RouteType[] = ['Normal', 'BlackHole', 'Reject', 'Local', 'Fip64'];

const schema = z.object({
  id: uuid.nullish(),
  srcNetworkAddr: ipv4,
  srcNetworkLength: prefixLength.nullish(),
  dstNetworkAddr: ipv4,
  dstNetworkLength: prefixLength.nullish(),
  nextHopPort: uuid.nullish(),
  nextHopGateway: ipv4.nullish(),
  type: z
    .string()
    .refine((t) => (ROUTE_TYPES as readonly string[]).includes(t), 'This type of route is invalid.')
    .transform((t) => t as RouteType),
  weight: z.number().int().min(0).nullish(),
  attributes: z.string().nullish(),
});
type Body = z.infer<typeof schema>;

const NEXT_HOP_MESSAGE = 'This type of route requires a next hop port that is a port on the same router.';

function render(r: RouteRec, { base }: RenderCtx): Record<string, unknown> {
  // Upstream drops routerId when the route is stored on its next-hop port (ref §1.4 Route, Storage).
  const routerId = r.nextHopPort === null ? r.routerId : null;
  return {
    ...r,
    routerId,
    learned: false,
    uri: itemUri('Route', r.id, base),
    router: routerId === null ? null : itemUri('Router', routerId, base),
  };
}

export const routes = defineKind<RouteRec, Body>({
  kind: 'Route',
  schema,
  keyFor: (b) => b.id ?? randomUUID(),
  create: ({ state, key, body: b, parentId }) => {
    const routerId = parentId!;
    if (b.type === 'Normal') {
      // A missing port is a 400 here too, not a 404 (ROUTE_NEXT_HOP_PORT_NOT_NULL).
      const port = b.nextHopPort == null ? undefined : state.ports[b.nextHopPort];
      if (port?.routerId !== routerId) throw invalid([{ property: 'nextHopPort', message: NEXT_HOP_MESSAGE }]);
    } else {
      requireRef(state, 'Port', b.nextHopPort);
    }
    return {
      id: key,
      routerId,
      srcNetworkAddr: b.srcNetworkAddr,
      srcNetworkLength: b.srcNetworkLength ?? 0,
      dstNetworkAddr: b.dstNetworkAddr,
      dstNetworkLength: b.dstNetworkLength ?? 0,
      nextHopPort: b.nextHopPort ?? null,
      nextHopGateway: b.nextHopGateway ?? null,
      type: b.type,
      weight: b.weight ?? 0, // the ref gives no default; 0 is Java's for an unset int
      attributes: b.attributes ?? null,
    };
  },
  render,
});
