// The v1 Endpoints a Service's EndpointSlices stand for, so that Steward derives the same Translations from either
// (v1 Endpoints is deprecated since Kubernetes 1.33, KEP-4974). The Endpoints controller writes, per set of ports,
// the ready addresses of the Service's primary family, sorted by IP (RepackSubsets); the endpointslice controller
// writes a slice per port set and address family, each endpoint with its conditions. So: IPv4 slices only (what
// translateEndpoints takes), each endpoint's first address (kube-proxy's), ready or with no ready condition, one
// subset per port set, addresses sorted by IP as the Endpoints controller sorts them. Subsets are ordered by their
// ports here; the Endpoints controller orders them by an MD5 of Go's printing of each, which nothing outside Go
// reproduces (a Service whose endpoints share one port set, the usual, has one subset and the same order).

/** The label that names a slice's Service. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface OwnerReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** An EndpointSlice as the API server returns it: what the Endpoints it stands for are made of. */
export interface EndpointSliceObject {
  metadata?: {
    namespace?: string;
    name?: string;
    labels?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    deletionTimestamp?: unknown;
  };
  addressType?: string;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean | null } | null }[] | null;
  ports?: { name?: string | null; protocol?: string | null; port?: number | null }[] | null;
}

/** The Endpoints object the slices stand for, as the starter hands objects on (its projection is made from it). */
export interface EndpointsOfSlices {
  apiVersion: 'v1';
  kind: 'Endpoints';
  metadata: { namespace: string; name: string; uid: string };
  ownerKind?: 'Service';
  subsets: { addresses: { ip: string }[]; ports: { name: string; protocol: string; port: number }[] }[];
}

/**
 * Who the slices belong to: the Service (the endpointslice controller's), or the Endpoints they mirror (the
 * endpointslicemirroring controller's, for a Service without a selector).
 */
function controllerOf(slice: EndpointSliceObject): OwnerReference | undefined {
  const owner = slice.metadata?.ownerReferences?.find((o) => o.controller && o.apiVersion === 'v1');
  return owner?.uid && (owner.kind === 'Service' || owner.kind === 'Endpoints') ? owner : undefined;
}

/**
 * The Endpoints one Service's slices stand for. Slices no controller owns (the API server's own for the `kubernetes`
 * Service, a hand-made one) belong to the Service of their label, `serviceUid` when it is known; undefined when it
 * is not, since nothing would then take their Translations along when the Service goes.
 */
export function endpointsOfSlices(
  slices: readonly EndpointSliceObject[],
  serviceUid?: string,
): EndpointsOfSlices | undefined {
  // The Service's own slices first: mirroring happens only for a Service without a selector, which has none.
  const owners = slices.map(
    (slice) => controllerOf(slice) ?? (serviceUid ? { kind: 'Service', uid: serviceUid } : undefined),
  );
  const owner = owners.find((o) => o?.kind === 'Service') ?? owners.find((o) => o?.kind === 'Endpoints');
  const namespace = slices[0]?.metadata?.namespace;
  const service = slices[0]?.metadata?.labels?.[SERVICE_NAME_LABEL];
  if (!owner?.uid || !namespace || !service) return undefined;
  const bySet = new Map<string, { ports: EndpointsOfSlices['subsets'][number]['ports']; ips: Set<string> }>();
  slices.forEach((slice, i) => {
    if (owners[i]?.uid !== owner.uid || slice.addressType !== 'IPv4') return;
    const ports = (slice.ports ?? []).flatMap(({ name, protocol, port }) =>
      typeof port === 'number' ? [{ name: name ?? '', protocol: protocol ?? 'TCP', port }] : [],
    );
    const key = JSON.stringify(ports);
    const set = bySet.get(key) ?? { ports, ips: new Set<string>() };
    bySet.set(key, set);
    for (const endpoint of slice.endpoints ?? []) {
      const ip = endpoint.addresses?.[0];
      if (ip && endpoint.conditions?.ready !== false) set.ips.add(ip);
    }
  });
  const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const subsets = [...bySet.entries()]
    .filter(([, set]) => set.ips.size > 0)
    .sort(([a], [b]) => byKey(a, b))
    .map(([, { ports, ips }]) => ({ addresses: [...ips].sort(byKey).map((ip) => ({ ip })), ports }));
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { namespace, name: service, uid: owner.uid },
    ...(owner.kind === 'Service' ? { ownerKind: 'Service' as const } : {}),
    subsets,
  };
}
