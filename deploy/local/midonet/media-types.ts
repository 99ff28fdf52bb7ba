// MidoNet vendor media types (ref §1.3) and the two negotiation styles the server uses (ref §1.2).

const vnd = (name: string): string => `application/vnd.org.midonet.${name}+json`;
const collection = (name: string): string => vnd(`collection.${name}`);

export const APPLICATION_JSON = 'application/json';
export const ERROR_TYPE = vnd('Error-v1');
export const TOKEN_TYPE = vnd('Token-v1');
export const APPLICATION_TYPE = vnd('Application-v5');

export interface MediaDecl {
  item: readonly string[];
  collection: readonly string[];
  /**
   * `midonet`: MidonetResource's own check, where a missing or wrong Content-Type and a wrong or missing
   * Accept are all 406. `jaxrs`: Jersey @Consumes/@Produces, where a wrong Content-Type is 415 and a missing
   * Accept means any (ref §1.2).
   */
  negotiation: 'midonet' | 'jaxrs';
  /** Plain application/json is accepted besides the vendor types (always true for `midonet`). */
  json: boolean;
}

const midonet = (item: string[], coll: string[]): MediaDecl => ({
  item: item.map(vnd),
  collection: coll.map(collection),
  negotiation: 'midonet',
  json: true,
});
// The ref says TunnelZoneHost and ARP entries refuse application/json; it is silent for the other Jersey
// resources, so they refuse it too: a client that names the vendor type works either way.
const jaxrs = (item: string[], coll: string[]): MediaDecl => ({
  item: item.map(vnd),
  collection: coll.map(collection),
  negotiation: 'jaxrs',
  json: false,
});

export const MEDIA = {
  Bridge: midonet(['Bridge-v4', 'Bridge-v5'], ['Bridge-v4', 'Bridge-v5']),
  Router: midonet(['Router-v3'], ['Router-v3']),
  Port: midonet(['Port-v3', 'Port-v4'], ['Port-v3', 'Port-v4']),
  Route: midonet(['Route-v1'], ['Route-v1']),
  Chain: midonet(['Chain-v1'], ['Chain-v1']),
  Rule: midonet(['Rule-v2'], ['Rule-v2']),
  Host: midonet(['Host-v3'], ['Host-v3']),
  TunnelZone: midonet(['TunnelZone-v1'], ['TunnelZone-v1']),
  TunnelZoneHost: jaxrs(['TunnelZoneHost-v1', 'GreTunnelZoneHost-v1'], ['TunnelZoneHost-v1', 'GreTunnelZoneHost-v1']),
  HostInterfacePort: jaxrs(['HostInterfacePort-v1'], ['HostInterfacePort-v1']),
  PortLink: jaxrs(['PortLink-v1'], []),
  MACPort: jaxrs(['MacPort-v2'], ['MacPort-v2']),
  IPv4MACPair: jaxrs(['IP4Mac-v1'], ['IP4Mac-v1']),
  // Not in the ref: the name follows MidoNet's Interface model; only listing is offered.
  HostInterface: jaxrs(['Interface-v1'], ['Interface-v1']),
} as const satisfies Record<string, MediaDecl>;

interface Parsed {
  type: string;
  subtype: string;
}

function parse(value: string): Parsed | null {
  const bare = value.split(';')[0]?.trim().toLowerCase() ?? '';
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(bare);
  return match ? { type: match[1]!, subtype: match[2]! } : null;
}

/** JAX-RS MediaType.isCompatible: case-insensitive, wildcards on either side, parameters ignored. */
export function isCompatible(a: string, b: string): boolean {
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return false;
  if (x.type === '*' || y.type === '*') return true;
  if (x.type !== y.type) return false;
  return x.subtype === '*' || y.subtype === '*' || x.subtype === y.subtype;
}

/**
 * The declared type to answer with, or null when nothing in `header` is acceptable. A list in Accept is
 * taken entry by entry (the ref is silent on lists; this is the JAX-RS reading).
 */
export function pickType(header: string, declared: readonly string[], json: boolean): string | null {
  const offered = json ? [...declared, APPLICATION_JSON] : [...declared];
  for (const entry of header.split(',')) {
    if (/;\s*q=0(\.0*)?\s*(;|$)/i.test(entry)) continue;
    const found = offered.find((t) => isCompatible(entry, t));
    if (found) return found;
  }
  return null;
}
