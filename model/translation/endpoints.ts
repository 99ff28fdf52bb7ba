// What a Kubernetes Endpoints object becomes in MidoNet (MK `pkg/converter/endpoints/*.go`, seed 001
// "Kubernetes Endpoint").
//
// Every (ready address × port) pair gets its own `Endpoints-Port` Translation: a KUBE-SEP chain that DNATs
// to the endpoint (and SNATs the endpoint's own hairpin traffic to the ClusterIP, so replies return through
// MidoNet), plus a jump rule to it in the service port's KUBE-SVC chain. Everything that shapes those rules
// is in the name, so any change makes new rules rather than updating immutable ones.
//
// Known weakness, kept for compatibility: the jump rules match everything and are posted without a
// position, so the most recently pushed endpoint sits at the head of the KUBE-SVC chain and takes all the
// traffic: no load balancing (MNA-1264). Spreading traffic needs a probabilistic match that MidoNet rules
// lack, so there is no compatible better option to offer here.
import { DEFAULT_TENANT, endpointIds, servicePortChainId } from './ids';
import { parseIPv4 } from './net';
import { ETHERTYPE_IPV4, SNAT_PORTS, chain, rule } from './resources';
import { failure, isFailure, success, type TranslationResult } from './errors';
import { isPortNumber, serviceClusterIP, servicePortKey } from './service';
import { owned, refOf, uniqueByName, type Part } from './custom-resource';
import type { EndpointsProjection, TranslationContext } from './types';

/**
 * `context.service` is the Service of the same namespace and name. Without it, or when it is out of scope
 * (not ClusterIP, headless), the Endpoints become nothing: MK re-translates Endpoints on Service events for
 * exactly this reason, and so must the caller.
 */
export function translateEndpoints(
  endpoints: EndpointsProjection,
  context: Pick<TranslationContext, 'tenant' | 'service'> = {},
): TranslationResult {
  const tenant = context.tenant ?? DEFAULT_TENANT;
  const { namespace, name } = endpoints.metadata;
  const service = context.service;
  if (!service || service.metadata.namespace !== namespace || service.metadata.name !== name) return success([]);
  const clusterIP = serviceClusterIP(service);
  if (isFailure(clusterIP)) return clusterIP;
  if (clusterIP === null) return success([]);

  const parts: Part[] = [];
  for (const [s, subset] of (endpoints.subsets ?? []).entries()) {
    for (const [a, address] of (subset.addresses ?? []).entries()) {
      const ip = parseIPv4(address.ip);
      if (ip === undefined) {
        return failure(
          refOf(endpoints),
          'InvalidEndpointAddress',
          `subsets[${s}].addresses[${a}].ip`,
          `"${address.ip}" is not an IPv4 address`,
        );
      }
      for (const [p, endpointPort] of (subset.ports ?? []).entries()) {
        if (!isPortNumber(endpointPort.port)) {
          return failure(
            refOf(endpoints),
            'InvalidPort',
            `subsets[${s}].ports[${p}].port`,
            `${endpointPort.port} is not a port number`,
          );
        }
        // Assumes the endpoint port is named like its service port (MK's "REVISIT"); when no service port
        // has that name, the jump rule's chain never appears and the Translation cannot be pushed, as in MK.
        const serviceChainId = servicePortChainId(tenant, servicePortKey(namespace, name, endpointPort.name));
        // The namespace is in neither this name nor the IDs derived from it (MK quirk, kept for the IDs).
        const subName = `${name}/${endpointPort.name}/${clusterIP}/${ip}/${endpointPort.port}/${endpointPort.protocol}`;
        const id = endpointIds(tenant, subName);
        parts.push({
          kind: 'Endpoints-Port',
          name: subName,
          resources: [
            chain({ id: id.chain, tenantId: tenant, name: `KUBE-SEP-${subName}` }),
            rule(serviceChainId, { id: id.jumpRule, type: 'jump', jumpChainId: id.chain }),
            rule(id.chain, {
              id: id.dnatRule,
              type: 'dnat',
              flowAction: 'accept',
              natTargets: [{ addressFrom: ip, addressTo: ip, portFrom: endpointPort.port, portTo: endpointPort.port }],
            }),
            // Posted last, so it ends up first in the chain: hairpin traffic is SNATed before the DNAT accepts.
            rule(id.chain, {
              id: id.snatRule,
              type: 'snat',
              dlType: ETHERTYPE_IPV4,
              nwSrcAddress: ip,
              nwSrcLength: 32,
              flowAction: 'continue',
              natTargets: [{ addressFrom: clusterIP, addressTo: clusterIP, ...SNAT_PORTS }],
            }),
          ],
        });
      }
    }
  }
  return success(owned(endpoints, uniqueByName(parts)));
}
