// Parsers for the address-like strings the translation reads. Each returns the canonical form (as Go's
// String() prints it, which is what midonet-kubernetes puts in names and bodies) or undefined, so the
// per-kind code decides which error to report for which field.

/** Dotted-quad IPv4 without leading zeros (Go 1.17+ net.ParseIP rejects them too). */
export function parseIPv4(text: string): string | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part) || Number(part) > 255) return undefined;
  }
  return text;
}

/** True for anything that looks like an IPv6 literal; used only to skip such addresses, never to trust them. */
export function looksLikeIPv6(text: string): boolean {
  return text.includes(':');
}

const toInt = (ip: string): number => ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
const fromInt = (n: number): string => [24, 16, 8, 0].map((shift) => (n >>> shift) & 255).join('.');

/** A Node's PodCIDR and the two addresses midonet-kubernetes derives from it (MK `node/nodeip.go`). */
export interface PodSubnet {
  network: string;
  prefixLength: number;
  /** First address after the network: the cluster router port on the node's bridge. */
  gatewayIP: string;
  /** Second address: the node's own interface (`midokube-node`) on the bridge. */
  nodeIP: string;
}

export function parsePodCIDR(text: string): PodSubnet | undefined {
  const [address, length, extra] = text.split('/');
  if (address === undefined || length === undefined || extra !== undefined) return undefined;
  const ip = parseIPv4(address);
  if (ip === undefined || !/^(0|[1-9][0-9]?)$/.test(length)) return undefined;
  const prefixLength = Number(length);
  // A /31 or /32 has no room for the gateway and the node address; MK would compute addresses outside it.
  if (prefixLength > 30) return undefined;
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  const network = (toInt(ip) & mask) >>> 0;
  return { network: fromInt(network), prefixLength, gatewayIP: fromInt(network + 1), nodeIP: fromInt(network + 2) };
}

/** A 6-byte MAC in any of Go net.ParseMAC's separators (`:`, `-`, or dotted groups of four), printed `aa:bb:…`. */
export function parseMAC(text: string): string | undefined {
  let hex: string;
  if (/^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2}){4}$/.test(text)) hex = text.replace(/[:-]/g, '');
  else if (/^[0-9a-fA-F]{4}(\.[0-9a-fA-F]{4}){2}$/.test(text)) hex = text.replace(/\./g, '');
  else return undefined;
  return hex.toLowerCase().match(/../g)!.join(':');
}

/** The forms Go uuid.Parse accepts (plain, `{…}`, `urn:uuid:…`, 32 hex digits), printed lower case with dashes. */
export function parseUUID(text: string): string | undefined {
  let core = text;
  if (/^urn:uuid:/i.test(core)) core = core.slice(9);
  else if (core.startsWith('{') && core.endsWith('}')) core = core.slice(1, -1);
  let hex: string;
  if (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(core))
    hex = core.replace(/-/g, '');
  else if (/^[0-9a-fA-F]{32}$/.test(core) && core === text) hex = core;
  else return undefined;
  return formatUUID(hex.toLowerCase());
}

/** 32 lower-case hex digits → 8-4-4-4-12. */
export function formatUUID(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
