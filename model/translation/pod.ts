// What a Kubernetes Pod becomes in MidoNet (MK `pkg/converter/pod/*.go`, seed 001 "Kubernetes Pod").
//
// A port on its Node's bridge, bound on the Node's MidoNet host to the veth the CNI plugin creates (both
// sides compute the same interface name from the pod's namespace/name, so they never talk). Once the CNI
// plugin has annotated the pod's MAC, static MAC and ARP entries follow as separate Translations.
import { DEFAULT_TENANT, nodeIds, podInterfaceName, podPortId } from './ids';
import { parseIPv4 } from './net';
import { hostInterfacePort, port } from './resources';
import { failure, isFailure, success, type TranslationFailure, type TranslationResult } from './errors';
import { macAnnotation } from './annotations';
import { macAndArpEntries, nodeHostId } from './node';
import { owned, refOf, type Part } from './custom-resource';
import type { PodProjection, TranslationContext } from './types';

/**
 * `context.node` is the Node named by `spec.nodeName`. A pod that is not scheduled, shares the host's network,
 * or has terminated becomes nothing (so any Translations it had are stale).
 */
export function translatePod(
  pod: PodProjection,
  context: Pick<TranslationContext, 'tenant' | 'node'> = {},
): TranslationResult {
  const tenant = context.tenant ?? DEFAULT_TENANT;
  const { name, namespace } = pod.metadata;
  const nodeName = pod.spec.nodeName ?? '';
  if (
    nodeName === '' ||
    pod.spec.hostNetwork === true ||
    pod.status.phase === 'Succeeded' ||
    pod.status.phase === 'Failed'
  ) {
    return success([]);
  }
  // MK looks the Node up in its cache and retries with back-off until it appears; the caller supplies it here.
  const node = context.node;
  if (!node || node.metadata.name !== nodeName) {
    return failure(refOf(pod), 'NodeNotFound', 'spec.nodeName', `Node ${nodeName} is not known yet`);
  }
  const host = nodeHostId(node);
  if (isFailure(host)) return host;

  const bridgeId = nodeIds(tenant, nodeName).bridge;
  const portId = podPortId(tenant, namespace, name);
  const main: Part = {
    kind: 'Pod',
    name,
    resources: [
      port(bridgeId, { id: portId, type: 'Bridge' }),
      hostInterfacePort(host.hostId, { portId, interfaceName: podInterfaceName(namespace, name) }),
    ],
  };

  const mac = macAnnotation(pod);
  if (mac === undefined) return success(owned(pod, [main]));
  if (isFailure(mac)) return mac;
  const ip = podIP(pod);
  if (isFailure(ip)) return ip;
  return success(owned(pod, [main, ...macAndArpEntries('Pod', name, bridgeId, { portId, mac, ip })]));
}

/** No IP yet (the kubelet reports it after the sandbox starts) means no ARP entry yet. */
function podIP(pod: PodProjection): string | undefined | TranslationFailure {
  const text = pod.status.podIP ?? '';
  if (text === '') return undefined;
  return parseIPv4(text) ?? failure(refOf(pod), 'InvalidPodIP', 'status.podIP', `"${text}" is not an IPv4 address`);
}
