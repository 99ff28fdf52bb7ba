// What the cluster as a whole becomes in MidoNet (MK `pkg/converter/global.go`): the default tunnel zone,
// the cluster router, and the chains shared by every Node bridge. These Translations have no owner; they
// live in `kube-system` with label `midonet.org/global`.
import { globalIds, DEFAULT_TENANT } from './ids';
import { chain, router, rule, tunnelZone } from './resources';
import { success, type TranslationResult } from './errors';
import { global } from './custom-resource';
import type { TranslationContext } from './types';

export function translateGlobals(context: Pick<TranslationContext, 'tenant'> = {}): TranslationResult {
  const tenant = context.tenant ?? DEFAULT_TENANT;
  const id = globalIds(tenant);
  return success(
    global([
      {
        kind: 'midonet-global',
        name: 'tunnel-zone',
        resources: [tunnelZone({ id: id.defaultTunnelZone, name: 'DefaultTunnelZone', type: 'vxlan' })],
      },
      // Seed 001 has the deployer create the router; MK at HEAD creates it itself, under a derived ID.
      {
        kind: 'midonet-global',
        name: 'cluster-router',
        resources: [router({ id: id.clusterRouter, tenantId: tenant, name: 'ClusterRouter' })],
      },
      {
        kind: 'midonet-global',
        name: 'chain',
        resources: [
          // Every Node bridge filters inbound traffic through KUBE-MAIN.
          chain({ id: id.mainChain, tenantId: tenant, name: 'KUBE-MAIN' }),
          chain({ id: id.preChain, tenantId: tenant, name: 'KUBE-PRE' }),
          // Services add their jump rules here (service.ts).
          chain({ id: id.servicesChain, tenantId: tenant, name: 'KUBE-SERVICES' }),
          // Rules are posted without a position, so each lands at the head: the resulting order is
          // KUBE-MAIN [jump→PRE, jump→SERVICES] and KUBE-PRE [rev_snat, rev_dnat], which is what MK gets.
          rule(id.mainChain, { id: id.jumpToServices, type: 'jump', jumpChainId: id.servicesChain }),
          rule(id.mainChain, { id: id.jumpToPre, type: 'jump', jumpChainId: id.preChain }),
          // Reverse NAT for the endpoint DNAT/SNAT rules (endpoints.ts) and the node SNAT rule (node.ts).
          rule(id.preChain, { id: id.reverseDNAT, type: 'rev_dnat', flowAction: 'accept' }),
          rule(id.preChain, { id: id.reverseSNAT, type: 'rev_snat', flowAction: 'continue' }),
        ],
      },
    ]),
  );
}
