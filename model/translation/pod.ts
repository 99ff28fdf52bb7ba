// What a Kubernetes Pod becomes in MidoNet (MK `pkg/converter/pod/*.go`, seed 001 "Kubernetes Pod").
//
// A port on its Node's bridge, bound on the Node's MidoNet host to the veth the CNI plugin creates (both
// sides compute the same interface name from the pod's namespace/name, so they never talk). Once the CNI
// plugin has annotated the pod's MAC, static MAC and ARP entries follow as separate Translations.
import { DEFAULT_TENANT, nodeIds, podInterfaceName, podPortId } from './ids';
import { parseIPv4, parseMAC } from './net';
import { hostInterfacePort, ipv4MacPair, macPort, port } from './resources';
import { annotationField, failure, isFailure, success, type TranslationResult } from './errors';
import { nodeHostId } from './node';
import { owned, refOf, type Part } from './custom-resource';
import { ANNOTATIONS } from './model';
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
  const { name, namespace, annotations } = pod.metadata;
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

  const macText = annotations[ANNOTATIONS.macAddress];
  if (macText === undefined) return success(owned(pod, [main]));
  const mac = parseMAC(macText);
  if (mac === undefined)
    return failure(
      refOf(pod),
      'InvalidMacAddress',
      annotationField(ANNOTATIONS.macAddress),
      `"${macText}" is not a MAC address`,
    );
  const hex = mac.replace(/:/g, '');
  const parts: Part[] = [
    main,
    { kind: 'Pod-MAC', name: `${name}/mac/${hex}`, resources: [macPort(bridgeId, { macAddr: mac, portId })] },
  ];

  // No IP yet (the kubelet reports it after the sandbox starts) means no ARP entry yet.
  const ipText = pod.status.podIP ?? '';
  if (ipText !== '') {
    const ip = parseIPv4(ipText);
    if (ip === undefined)
      return failure(refOf(pod), 'InvalidPodIP', 'status.podIP', `"${ipText}" is not an IPv4 address`);
    parts.push({ kind: 'Pod-ARP', name: `${name}/ip/${ip}/${hex}`, resources: [ipv4MacPair(bridgeId, { ip, mac })] });
  }
  return success(owned(pod, parts));
}
