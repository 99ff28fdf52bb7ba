// What a Kubernetes Service becomes in MidoNet (MK `pkg/converter/service/*.go`, seed 001 "Kubernetes Service").
//
// One chain per service port (KUBE-SVC-…), all in the Service's main Translation, and per service port a
// `Service-Port` Translation holding the jump rule from the shared KUBE-SERVICES chain to that chain.
// The split is deliberate: rules cannot be updated, so a changed ClusterIP, protocol or port gives the jump
// rule a new name and ID (created anew, old one deleted), while the chain keeps its ID and is never
// re-created, which would wipe the endpoint jump rules that endpoints.ts puts in it.
//
// Only `type: ClusterIP` with a real ClusterIP is in scope, as in MK: NodePort, LoadBalancer and
// ExternalName Services, and headless ones, become nothing (no node ports, no external IPs).
import { DEFAULT_TENANT, globalIds, servicePortChainId, servicePortJumpRuleId } from './ids';
import { parseIPv4 } from './net';
import { ETHERTYPE_IPV4, chain, rule } from './resources';
import { failure, isFailure, success, type TranslationFailure, type TranslationResult } from './errors';
import { owned, refOf, type Part } from './custom-resource';
import type { ServiceProjection, TranslationContext } from './types';

const PROTOCOL_NUMBERS: Record<string, number> = { TCP: 6, UDP: 17 };

/** `<namespace>/<service>/<port name>`: names the port's chain; Endpoints find the chain through the same key. */
export function servicePortKey(namespace: string, service: string, portName: string): string {
  return `${namespace}/${service}/${portName}`;
}

/**
 * The ClusterIP when the Service is in scope, `null` when it is not. An empty ClusterIP on a ClusterIP
 * Service (which the API server never stores) is an error here; MK silently skipped it.
 */
export function serviceClusterIP(service: ServiceProjection): string | null | TranslationFailure {
  const { type, clusterIP = '' } = service.spec;
  if (type !== 'ClusterIP' || clusterIP === 'None') return null;
  if (clusterIP === '')
    return failure(
      refOf(service),
      'MissingClusterIP',
      'spec.clusterIP',
      `Service ${service.metadata.name} has no ClusterIP`,
    );
  const ip = parseIPv4(clusterIP);
  return ip ?? failure(refOf(service), 'InvalidClusterIP', 'spec.clusterIP', `"${clusterIP}" is not an IPv4 address`);
}

export function translateService(
  service: ServiceProjection,
  context: Pick<TranslationContext, 'tenant'> = {},
): TranslationResult {
  const tenant = context.tenant ?? DEFAULT_TENANT;
  const clusterIP = serviceClusterIP(service);
  if (isFailure(clusterIP)) return clusterIP;
  if (clusterIP === null) return success([]);

  const { namespace, name } = service.metadata;
  const { servicesChain } = globalIds(tenant);
  const chains: Part = { kind: 'Service', name, resources: [] };
  const jumps: Part[] = [];
  for (const [index, servicePort] of (service.spec.ports ?? []).entries()) {
    // MK exits (log.Fatal) on any protocol but TCP and UDP, SCTP included.
    const proto = PROTOCOL_NUMBERS[servicePort.protocol];
    if (proto === undefined) {
      return failure(
        refOf(service),
        'UnsupportedProtocol',
        `spec.ports[${index}].protocol`,
        `protocol ${servicePort.protocol} is not supported (TCP or UDP)`,
      );
    }
    if (!isPortNumber(servicePort.port)) {
      return failure(
        refOf(service),
        'InvalidPort',
        `spec.ports[${index}].port`,
        `${servicePort.port} is not a port number`,
      );
    }
    const portKey = servicePortKey(namespace, name, servicePort.name);
    const chainId = servicePortChainId(tenant, portKey);
    chains.resources.push(chain({ id: chainId, tenantId: tenant, name: `KUBE-SVC-${portKey}` }));
    const subName = `${portKey}/${clusterIP}/${proto}/${servicePort.port}`;
    jumps.push({
      kind: 'Service-Port',
      name: subName,
      resources: [
        rule(servicesChain, {
          id: servicePortJumpRuleId(tenant, subName),
          type: 'jump',
          dlType: ETHERTYPE_IPV4,
          nwDstAddress: clusterIP,
          nwDstLength: 32,
          nwProto: proto,
          tpDst: { start: servicePort.port, end: servicePort.port },
          jumpChainId: chainId,
        }),
      ],
    });
  }
  return success(owned(service, [chains, ...jumps]));
}

export function isPortNumber(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}
