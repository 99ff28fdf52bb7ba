// What a Kubernetes Node becomes in MidoNet (MK `pkg/converter/node/*.go`, seed 001 "Kubernetes Node").
//
// The node gets a bridge linked to the cluster router, a route for its PodCIDR, and a port bound to the
// host's `midokube-mido` interface so the node itself can reach pods and services. Further Translations
// ("subs") route to each node address, put the host into a tunnel zone, and seed the bridge's MAC and ARP
// tables. Translations are returned in an order that can be pushed one after another without retries
// (after the globals): the tunnel-zone membership first, because MidoNet refuses to bind a port on a host
// that is in no tunnel zone.
import { DEFAULT_TENANT, NODE_INTERFACE_NAME, globalIds, macForKey, nodeAddressRouteId, nodeIds } from './ids';
import { looksLikeIPv6, parseIPv4, parsePodCIDR } from './net';
import {
  ETHERTYPE_IPV4,
  SNAT_PORTS,
  bridge,
  chain,
  hostInterfacePort,
  ipv4MacPair,
  macPort,
  port,
  portLink,
  route,
  rule,
  tunnelZoneHost,
} from './resources';
import {
  annotationField,
  failure,
  isFailure,
  success,
  type TranslationFailure,
  type TranslationNote,
  type TranslationResult,
} from './errors';
import { macAnnotation, parseAnnotation } from './annotations';
import { owned, refOf, uniqueByName, type Part } from './custom-resource';
import { ANNOTATIONS } from './model';
import type { NodeProjection, TranslationContext } from './types';

/**
 * The host the Node's ports bind to, and its Pods' (shared with pod.ts): named by the host-id annotation, and in a
 * tunnel zone at the tunnel-endpoint-ip annotation's address, since MidoNet refuses to bind a port on a host in no
 * tunnel zone. MK translates a Node without that address all the same and its pusher retries the refused binding
 * forever; here the missing annotation is named up front. MK's node annotator writes both together.
 */
export function nodeHostId(node: NodeProjection): { hostId: string } | TranslationFailure {
  const { annotations, name } = node.metadata;
  const missing = (key: string, reason: 'MissingHostId' | 'MissingTunnelEndpointIP', why: string) =>
    failure(refOf(node), reason, annotationField(key), `Node ${name} has no ${key} annotation yet${why}`);
  const text = annotations[ANNOTATIONS.hostId];
  if (text === undefined || text === '') return missing(ANNOTATIONS.hostId, 'MissingHostId', '');
  const hostId = parseAnnotation(node, 'hostId', text);
  if (isFailure(hostId)) return hostId;
  const tunnelIP = annotations[ANNOTATIONS.tunnelEndpointIP];
  if (tunnelIP === undefined || tunnelIP === '')
    return missing(
      ANNOTATIONS.tunnelEndpointIP,
      'MissingTunnelEndpointIP',
      ': without it its host joins no tunnel zone, and MidoNet refuses to bind a port on a host in none',
    );
  return { hostId };
}

export function translateNode(
  node: NodeProjection,
  context: Pick<TranslationContext, 'tenant'> = {},
): TranslationResult {
  const tenant = context.tenant ?? DEFAULT_TENANT;
  const nodeName = node.metadata.name;
  const ref = refOf(node);

  // MK exits (log.Fatal) on a missing or bad PodCIDR; here it is an error the Node's workflow can wait on.
  if (!node.spec.podCIDR) return failure(ref, 'MissingPodCIDR', 'spec.podCIDR', `Node ${nodeName} has no PodCIDR yet`);
  const subnet = parsePodCIDR(node.spec.podCIDR);
  if (subnet === undefined) {
    return failure(
      ref,
      'InvalidPodCIDR',
      'spec.podCIDR',
      `"${node.spec.podCIDR}" is not an IPv4 CIDR with room for a gateway and a node address (prefix ≤ 30)`,
    );
  }
  // Without a host MK writes no Translation at all (deleting any it wrote before); we report why instead.
  const host = nodeHostId(node);
  if (isFailure(host)) return host;
  const { hostId } = host;

  const id = nodeIds(tenant, nodeName);
  const { clusterRouter, mainChain } = globalIds(tenant);

  const tunnel = tunnelEndpoint(node, tenant, hostId);
  if (isFailure(tunnel)) return tunnel;
  const routes = addressRoutes(node, tenant, id.routerPort, subnet.nodeIP);
  if (isFailure(routes)) return routes;
  const { parts: addresses, skipped } = routes;
  const tables = macAndArp(node, id.bridge, id.nodePort, subnet.nodeIP);
  if (isFailure(tables)) return tables;

  const main: Part = {
    kind: 'Node',
    name: nodeName,
    resources: [
      bridge({ id: id.bridge, tenantId: tenant, name: nodeName, inboundFilterId: mainChain }),
      port(id.bridge, { id: id.bridgePort, type: 'Bridge' }),
      // A deterministic MAC: MidoNet picks a random one on POST but clears it on a PUT without one (MNA-1251).
      port(clusterRouter, {
        id: id.routerPort,
        type: 'Router',
        portSubnet: [`${subnet.gatewayIP}/${subnet.prefixLength}`],
        portMac: macForKey(nodeName),
      }),
      route(clusterRouter, {
        id: id.subnetRoute,
        dstNetworkAddr: subnet.network,
        dstNetworkLength: subnet.prefixLength,
        nextHopPort: id.routerPort,
        srcNetworkAddr: '0.0.0.0',
        srcNetworkLength: 0,
        type: 'Normal',
      }),
      portLink(id.bridgePort, { peerId: id.routerPort }),
      chain({ id: id.nodePortChain, tenantId: tenant, name: `KUBE-NODE-${nodeName}` }),
      port(id.bridge, { id: id.nodePort, type: 'Bridge', outboundFilterId: id.nodePortChain }),
      hostInterfacePort(hostId, { portId: id.nodePort, interfaceName: NODE_INTERFACE_NAME }),
      // Traffic from the node leaves with the gateway IP as its source, so replies come back through
      // MidoNet, where REV_DNAT undoes the service DNAT.
      rule(id.nodePortChain, {
        id: id.nodePortSNATRule,
        type: 'snat',
        dlType: ETHERTYPE_IPV4,
        nwSrcAddress: subnet.nodeIP,
        nwSrcLength: 32,
        flowAction: 'continue',
        natTargets: [{ addressFrom: subnet.gatewayIP, addressTo: subnet.gatewayIP, ...SNAT_PORTS }],
      }),
    ],
  };
  const notes: TranslationNote[] = skipped.length
    ? [
        {
          reason: 'IPv6AddressSkipped',
          message: `IPv6 addresses get no route (the cluster router's routes are IPv4 only): ${skipped.join(', ')}`,
        },
      ]
    : [];
  return success(owned(node, [...tunnel, main, ...addresses, ...tables]), notes);
}

/**
 * `Node-Tunnel-Endpoint`: the host joins the tunnel zone at the annotated IP (nodeHostId made sure there is one; MK's
 * node annotator fills it from the first InternalIP); an empty zone means the default.
 */
function tunnelEndpoint(node: NodeProjection, tenant: string, hostId: string): Part[] | TranslationFailure {
  const { annotations, name } = node.metadata;
  const ipText = annotations[ANNOTATIONS.tunnelEndpointIP] ?? '';
  // MK silently skips the membership when either annotation does not parse; a visible error is easier to fix.
  const ip = parseAnnotation(node, 'tunnelEndpointIP', ipText);
  if (isFailure(ip)) return ip;
  const zoneText = annotations[ANNOTATIONS.tunnelZoneId] ?? '';
  const zone = zoneText === '' ? globalIds(tenant).defaultTunnelZone : parseAnnotation(node, 'tunnelZoneId', zoneText);
  if (isFailure(zone)) return zone;
  // IP, zone and host are all in the name: changing any of them makes a new Translation (TunnelZoneHost has no PUT).
  return [
    {
      kind: 'Node-Tunnel-Endpoint',
      name: `${name}/${ip}/${zone}/${hostId}`,
      resources: [tunnelZoneHost(zone, { hostId, ipAddress: ip })],
    },
  ];
}

/**
 * `Node-Address`: a route to each InternalIP/ExternalIP via the node, assuming the node network forwards it; and the
 * IPv6 addresses left out (`<type> <address>`), to be told.
 */
function addressRoutes(
  node: NodeProjection,
  tenant: string,
  routerPortId: string,
  nodeIP: string,
): { parts: Part[]; skipped: string[] } | TranslationFailure {
  const { clusterRouter } = globalIds(tenant);
  const parts: Part[] = [];
  const skipped: string[] = [];
  const addresses = node.status.addresses ?? [];
  for (const [index, { type, address }] of addresses.entries()) {
    if (type !== 'InternalIP' && type !== 'ExternalIP') continue;
    const ip = parseIPv4(address);
    if (ip === undefined) {
      // MK would post an IPv6 route that MidoNet rejects, blocking the Translation forever; dual-stack nodes
      // keep working if their IPv6 addresses are left out.
      if (looksLikeIPv6(address)) {
        if (!skipped.includes(`${type} ${address}`)) skipped.push(`${type} ${address}`);
        continue;
      }
      return failure(
        refOf(node),
        'InvalidNodeAddress',
        `status.addresses[${index}].address`,
        `"${address}" is not an IP address`,
      );
    }
    const subName = `${node.metadata.name}/${type}/${ip}`;
    parts.push({
      kind: 'Node-Address',
      name: subName,
      resources: [
        route(clusterRouter, {
          id: nodeAddressRouteId(tenant, subName),
          dstNetworkAddr: ip,
          dstNetworkLength: 32,
          nextHopGateway: nodeIP,
          nextHopPort: routerPortId,
          srcNetworkAddr: '0.0.0.0',
          srcNetworkLength: 0,
          type: 'Normal',
        }),
      ],
    });
  }
  return { parts: uniqueByName(parts), skipped };
}

/** `Node-MAC` and `Node-ARP`, once midonet-kube-node has annotated the MAC of `midokube-node`. */
function macAndArp(
  node: NodeProjection,
  bridgeId: string,
  nodePortId: string,
  nodeIP: string,
): Part[] | TranslationFailure {
  const mac = macAnnotation(node);
  if (mac === undefined) return [];
  if (isFailure(mac)) return mac;
  return macAndArpEntries('Node', node.metadata.name, bridgeId, { portId: nodePortId, mac, ip: nodeIP });
}

/**
 * `<kind>-MAC` and, given an IP, `<kind>-ARP` for a port on a Node bridge (shared with pod.ts): static MAC and ARP
 * entries save flooding and ARP on the bridge. MAC and ARP entries have no ID, so the MAC is part of each name.
 */
export function macAndArpEntries(
  kind: 'Node' | 'Pod',
  name: string,
  bridgeId: string,
  { portId, mac, ip }: { portId: string; mac: string; ip: string | undefined },
): Part[] {
  const hex = mac.replace(/:/g, '');
  const macEntry: Part = {
    kind: `${kind}-MAC`,
    name: `${name}/mac/${hex}`,
    resources: [macPort(bridgeId, { macAddr: mac, portId })],
  };
  if (ip === undefined) return [macEntry];
  return [
    macEntry,
    { kind: `${kind}-ARP`, name: `${name}/ip/${ip}/${hex}`, resources: [ipv4MacPair(bridgeId, { ip, mac })] },
  ];
}
