// The public API under /midonet-api: the generic kinds plus the endpoints that are not plain CRUD.
import type { FastifyInstance } from 'fastify';
import type { Ctx } from '../context';
import { registerKind, type AnyBehaviour } from '../crud';
import type { KindName } from '../kinds';
import { ApiRouter } from '../router';
import { registerApplication } from './application';
import { arpEntries, macEntries } from './bridge-tables';
import { bridges } from './bridges';
import { chains } from './chains';
import { registerHostPorts } from './host-ports';
import { hosts, registerHostInterfaces } from './hosts';
import { registerLinks } from './links';
import { registerLogin } from './login';
import { ports, registerPeerPorts } from './ports';
import { routers } from './routers';
import { routes } from './routes';
import { rules } from './rules';
import { tunnelZoneHosts, tunnelZones } from './tunnel-zones';

export const BEHAVIOURS: Record<KindName, AnyBehaviour> = {
  Host: hosts,
  TunnelZone: tunnelZones,
  TunnelZoneHost: tunnelZoneHosts,
  Bridge: bridges,
  Router: routers,
  Port: ports,
  Route: routes,
  Chain: chains,
  Rule: rules,
  MACPort: macEntries,
  IPv4MACPair: arpEntries,
};

export function registerApi(app: FastifyInstance, ctx: Ctx): void {
  const router = new ApiRouter(app);
  registerApplication(router, ctx);
  registerLogin(router, ctx);
  for (const behaviour of Object.values(BEHAVIOURS)) registerKind(router, ctx, behaviour);
  registerLinks(router, ctx);
  registerHostPorts(router, ctx);
  registerHostInterfaces(router, ctx);
  registerPeerPorts(router, ctx);
  router.finish();
}
