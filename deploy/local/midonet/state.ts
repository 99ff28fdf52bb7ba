// The emulator's whole state: plain JSON, one table per stored kind, so it can be written to a file as is.
// Bindings (host ↔ port) and links (port ↔ port) are fields on the Port, as in MidoNet (ref §1.4).

export interface HostInterfaceRec {
  name: string;
  mac: string | null;
  mtu: number;
  type: string;
  endpoint: string;
  portType: string | null;
  addresses: string[];
  status: number;
}

export interface HostRec {
  id: string;
  name: string;
  alive: boolean;
  addresses: string[];
  interfaces: HostInterfaceRec[];
  floodingProxyWeight: number;
  containerWeight: number;
  containerLimit: number;
  enforceContainerLimit: boolean;
}

export interface TunnelZoneRec {
  id: string;
  name: string;
  type: 'gre' | 'vxlan' | 'vtep';
}

export interface TunnelZoneHostRec {
  tunnelZoneId: string;
  hostId: string;
  ipAddress: string;
}

/** What MidoNet's two virtual devices, bridges and routers, have alike. */
export interface DeviceRec {
  id: string;
  tenantId: string | null;
  name: string | null;
  adminStateUp: boolean;
  inboundFilterId: string | null;
  outboundFilterId: string | null;
  inboundMirrorIds: string[];
  outboundMirrorIds: string[];
}

export interface BridgeRec extends DeviceRec {
  qosPolicyId: string | null;
}

export interface RouterRec extends DeviceRec {
  loadBalancerId: string | null;
  asNumber: number | null;
  localRedirectChainId: string | null;
  forwardChainId: string | null;
}

export interface PortRec {
  id: string;
  type: 'Bridge' | 'Router';
  /** Exactly one of bridgeId / routerId is set: IDs are unique per kind only, so one `deviceId` could clash. */
  bridgeId: string | null;
  routerId: string | null;
  adminStateUp: boolean;
  inboundFilterId: string | null;
  outboundFilterId: string | null;
  tunnelKey: number;
  vifId: string | null;
  hostId: string | null;
  previousHostId: string | null;
  interfaceName: string | null;
  peerId: string | null;
  inboundMirrorIds: string[];
  outboundMirrorIds: string[];
  postInFilterMirrorIds: string[];
  preOutFilterMirrorIds: string[];
  insertionIds: string[];
  qosPolicyId: string | null;
  vlanId: number | null;
  portSubnet: string[];
  portMac: string | null;
  rtrPortVni: number | null;
  offRampVxlan: boolean | null;
  serviceContainerId: string | null;
}

export type RouteType = 'Normal' | 'BlackHole' | 'Reject' | 'Local' | 'Fip64';

export interface RouteRec {
  id: string;
  /** Always the owning router here; rendered as null when the route hangs off its next-hop port (ref §1.4 Route). */
  routerId: string;
  srcNetworkAddr: string;
  srcNetworkLength: number;
  dstNetworkAddr: string;
  dstNetworkLength: number;
  nextHopPort: string | null;
  nextHopGateway: string | null;
  type: RouteType;
  weight: number;
  attributes: string | null;
}

export interface ChainRec {
  id: string;
  tenantId: string | null;
  name: string | null;
  /** Rule order; a rule's position is its index here plus one. */
  ruleIds: string[];
}

/** A rule keeps the validated request fields as given (conditions, NAT targets, jump target). */
export interface RuleRec {
  id: string;
  chainId: string;
  type: string;
  jumpChainId: string | null;
  fields: Record<string, unknown>;
}

export interface MacEntryRec {
  bridgeId: string;
  macAddr: string;
  portId: string;
  vlanId: number | null;
}

export interface ArpEntryRec {
  bridgeId: string;
  ip: string;
  mac: string;
}

export interface TokenRec {
  issuedAt: string;
  project: string | null;
}

export interface Tables {
  hosts: Record<string, HostRec>;
  tunnelZones: Record<string, TunnelZoneRec>;
  tunnelZoneHosts: Record<string, TunnelZoneHostRec>;
  bridges: Record<string, BridgeRec>;
  routers: Record<string, RouterRec>;
  ports: Record<string, PortRec>;
  routes: Record<string, RouteRec>;
  chains: Record<string, ChainRec>;
  rules: Record<string, RuleRec>;
  macEntries: Record<string, MacEntryRec>;
  arpEntries: Record<string, ArpEntryRec>;
}

export type TableName = keyof Tables;

export interface State extends Tables {
  version: 1;
  nextTunnelKey: number;
  tokens: Record<string, TokenRec>;
}

export const TABLE_NAMES: readonly TableName[] = [
  'hosts',
  'tunnelZones',
  'tunnelZoneHosts',
  'bridges',
  'routers',
  'ports',
  'routes',
  'chains',
  'rules',
  'macEntries',
  'arpEntries',
];

export function emptyState(): State {
  return {
    version: 1,
    nextTunnelKey: 1,
    tokens: {},
    hosts: {},
    tunnelZones: {},
    tunnelZoneHosts: {},
    bridges: {},
    routers: {},
    ports: {},
    routes: {},
    chains: {},
    rules: {},
    macEntries: {},
    arpEntries: {},
  };
}
