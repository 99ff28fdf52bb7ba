// Deterministic names and IDs, exactly as midonet-kubernetes derives them (MK `pkg/converter/id.go`,
// `translation.go`, `pod/veth.go`, `node/veth.go`; ref/midonet-api.md §2.3). Backend IDs come from
// Kubernetes names, never UIDs, so a cluster moved from midonet-kubernetes keeps its MidoNet objects, and an
// object deleted and re-created under the same name gets the same IDs.
import { sha1 } from '@noble/hashes/legacy.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { formatUUID } from './net';

/** Bumping it renames every Translation and re-creates every backend object under new IDs (MK `version.go`). */
export const TRANSLATION_VERSION = '4';
/** MK's MIDONETKUBE_TENANT default: the `tenantId` of bridges, chains and the router, and the seed of every ID. */
export const DEFAULT_TENANT = 'midonetkube';
const TENANT_SPACE_NAMESPACE = '3978567e-91c4-465c-a0d1-67575f6b4c7f';

/** RFC 4122 version 5 (SHA-1) UUID, the same as Go `uuid.NewSHA1`. */
export function uuidv5(namespace: string, name: string): string {
  const digest = sha1(new Uint8Array([...hexToBytes(namespace.replace(/-/g, '')), ...utf8ToBytes(name)]));
  const bytes = digest.slice(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  return formatUUID(bytesToHex(bytes));
}

export function tenantSpace(tenant: string): string {
  return uuidv5(TENANT_SPACE_NAMESPACE, `${TRANSLATION_VERSION}/${tenant}`);
}

/** MK `IDForKey`: `kind` is a Kubernetes kind or one of MK's pseudo kinds (`ServicePort`, `Endpoint`, `Node Address` …). */
export function idForKey(tenant: string, kind: string, key: string): string {
  return uuidv5(tenantSpace(tenant), `${TRANSLATION_VERSION}/${kind}/${key}`);
}

/** MK `SubID`: another ID for a further backend object of the same Kubernetes object (no version prefix). */
export function subId(id: string, label: string): string {
  return uuidv5(id, label);
}

/** `SubID(id, label)` for each label, under the same names. */
function subIds<Name extends string>(id: string, labels: Record<Name, string>): Record<Name, string> {
  const entries = Object.entries<string>(labels).map(([name, label]) => [name, subId(id, label)]);
  return Object.fromEntries(entries) as Record<Name, string>;
}

/** IDs of the cluster-wide objects, all hanging off KUBE-MAIN's ID. */
export function globalIds(tenant: string) {
  const mainChain = idForKey(tenant, 'midonet-global', 'chain');
  return {
    mainChain,
    ...subIds(mainChain, {
      servicesChain: 'Services Chain',
      preChain: 'Pre Chain',
      clusterRouter: 'Cluster Router',
      defaultTunnelZone: 'Default Tunnel Zone',
      jumpToPre: 'Jump To Pre',
      jumpToServices: 'Jump To Services',
      reverseSNAT: 'Reverse SNAT',
      reverseDNAT: 'Reverse DNAT',
    }),
  };
}

/** IDs of a Node's objects; the bridge ID is also what a Pod on that Node needs as its port's parent. */
export function nodeIds(tenant: string, nodeName: string) {
  const bridge = idForKey(tenant, 'Node', nodeName);
  return {
    bridge,
    ...subIds(bridge, {
      bridgePort: 'Bridge Port',
      routerPort: 'Router Port',
      subnetRoute: 'Route',
      nodePortChain: 'Node Port Chain',
      nodePort: 'Node Port',
      nodePortSNATRule: 'Node Port SNAT Rule',
    }),
  };
}

/** Route to one of a Node's addresses; `subName` is `<node>/<InternalIP|ExternalIP>/<ip>`. */
export function nodeAddressRouteId(tenant: string, subName: string): string {
  return idForKey(tenant, 'Node Address', subName);
}

export function podPortId(tenant: string, namespace: string, podName: string): string {
  return idForKey(tenant, 'Pod', `${namespace}/${podName}`);
}

/** `portKey` is `<namespace>/<service>/<servicePort.name>`; Service and Endpoints must agree on it. */
export function servicePortChainId(tenant: string, portKey: string): string {
  return idForKey(tenant, 'ServicePort', portKey);
}

/** The jump rule in KUBE-SERVICES; `subName` is `<portKey>/<clusterIP>/<proto number>/<port>`. */
export function servicePortJumpRuleId(tenant: string, subName: string): string {
  return idForKey(tenant, 'ServicePortSub', subName);
}

/** `subName` is `<endpoints name>/<port name>/<clusterIP>/<ip>/<port>/<PROTOCOL>`: no namespace (MK quirk, kept). */
export function endpointIds(tenant: string, subName: string) {
  const chain = idForKey(tenant, 'Endpoint', subName);
  return { chain, ...subIds(chain, { jumpRule: 'Jump to Endpoint', dnatRule: 'DNAT', snatRule: 'SNAT' }) };
}

/** MK `makeDNS`: a Kubernetes-valid name; when that needed changes, the SHA-1 of the original keeps it unique. */
export function makeDNS(name: string): string {
  const dns = name.replace(/\//g, '-').toLowerCase();
  return dns === name ? dns : `${dns}-${sha1Hex(name)}`;
}

/** The longest name the API server accepts (a DNS subdomain). */
export const MAX_TRANSLATION_NAME = 253;

/**
 * `<lower(kind)>.<version>.<name>`, through makeDNS (MK `Key.translationName`). MK never truncates, so a name longer
 * than the API server accepts (a 253-character Pod, a long Service name in a sub's key) was a Translation MK could
 * never write: such names, and only those, are cut to fit and end in the SHA-1 of the whole untruncated name, which
 * keeps them unique and stable. Every name MK could write stays exactly its name.
 */
export function translationName(kind: string, name: string): string {
  const full = `${kind.toLowerCase()}.${TRANSLATION_VERSION}.${name}`;
  const dns = makeDNS(full);
  if (dns.length <= MAX_TRANSLATION_NAME) return dns;
  const hash = sha1Hex(full);
  // A DNS label may not end in '.' or '-', so the cut may not either.
  return `${dns.slice(0, MAX_TRANSLATION_NAME - hash.length - 1).replace(/[.-]+$/, '')}-${hash}`;
}

/** MK `MACForKey`: Midokura OUI + 24 bits of SHA-256; used as the router port MAC (see MNA-1251 in node.ts). */
export function macForKey(key: string): string {
  const hash = sha256(utf8ToBytes(key));
  return ['ac', 'ca', 'ba', ...Array.from(hash.slice(0, 3), (b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** MK `IFNameForKey`: the pod's host-side veth, 15 chars (IFNAMSIZ); the CNI plugin computes the same name. */
export function podInterfaceName(namespace: string, podName: string): string {
  return `mido${sha1Hex(`${namespace}/${podName}`).slice(0, 11)}`;
}

/** The interface midonet-kube-node creates on every node and binds to the Node Port (its peer is `midokube-node`). */
export const NODE_INTERFACE_NAME = 'midokube-mido';

function sha1Hex(text: string): string {
  return bytesToHex(sha1(utf8ToBytes(text)));
}
