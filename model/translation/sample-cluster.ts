// A small cluster for tests: 2 Nodes, 3 Pods, a Service with 2 ports and its Endpoints with 2 addresses.
// The golden tests pin its translations; the end-to-end test pushes them into the MidoNet emulator.
import { translate, translateGlobals, type TranslationResult } from './index';
import type {
  EndpointsProjection,
  KubernetesProjection,
  NodeProjection,
  PodProjection,
  ServiceProjection,
  Translation,
} from './types';

export interface SampleCluster {
  tenant: string;
  /** MidoNet hosts the emulator must know (agents register them in a real deployment). */
  hosts: { id: string; name: string }[];
  nodes: NodeProjection[];
  pods: PodProjection[];
  service: ServiceProjection;
  endpoints: EndpointsProjection;
}

export function sampleCluster(): SampleCluster {
  const hosts = [
    { id: '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90', name: 'node1' },
    { id: '4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718', name: 'node2' },
  ];
  const node = (
    index: number,
    extra: Record<string, string>,
    addresses: { type: string; address: string }[],
  ): NodeProjection => ({
    kind: 'Node',
    metadata: {
      name: hosts[index]!.name,
      uid: `00000000-0000-4000-8000-00000000000${index + 1}`,
      annotations: {
        'midonet.org/host-id': hosts[index]!.id,
        'midonet.org/tunnel-zone-id': '',
        'midonet.org/tunnel-endpoint-ip': addresses[0]!.address,
        ...extra,
      },
    },
    spec: { podCIDR: `10.1.${index + 1}.0/24` },
    status: { addresses: [...addresses, { type: 'Hostname', address: hosts[index]!.name }] },
  });
  const pod = (
    name: string,
    nodeName: string,
    podIP: string,
    uid: string,
    annotations: Record<string, string> = {},
  ): PodProjection => ({
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid, annotations },
    spec: { nodeName },
    status: { phase: 'Running', podIP },
  });
  return {
    tenant: 'midonetkube',
    hosts,
    nodes: [
      node(0, { 'midonet.org/mac-address': '02:42:c0:00:02:0a' }, [{ type: 'InternalIP', address: '192.0.2.10' }]),
      node(1, {}, [
        { type: 'InternalIP', address: '192.0.2.11' },
        { type: 'ExternalIP', address: '198.51.100.11' },
      ]),
    ],
    pods: [
      pod('nginx', 'node1', '10.1.1.4', '00000000-0000-4000-8000-000000000011', {
        'midonet.org/mac-address': '0a:58:0a:01:01:04',
      }),
      pod('web-0', 'node1', '10.1.1.5', '00000000-0000-4000-8000-000000000012'),
      pod('web-1', 'node2', '10.1.2.5', '00000000-0000-4000-8000-000000000013'),
    ],
    service: {
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', uid: '00000000-0000-4000-8000-000000000021' },
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.0.20',
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'syslog', protocol: 'UDP', port: 514 },
        ],
      },
    },
    endpoints: {
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'default', uid: '00000000-0000-4000-8000-000000000031' },
      subsets: [
        {
          addresses: [{ ip: '10.1.1.5' }, { ip: '10.1.2.5' }],
          ports: [
            { name: 'http', protocol: 'TCP', port: 8080 },
            { name: 'syslog', protocol: 'UDP', port: 5514 },
          ],
        },
      ],
    },
  };
}

/**
 * The backend resources of the sample cluster's Translations per MidoNet kind, counted by hand from ref §2.4: e.g.
 * Port = 3 per Node + 1 per Pod; Route = per Node its subnet route, plus one per Node address (node2 has two);
 * Chain and Rule as global + per Node + per service port + per (endpoint address × port).
 */
export const SAMPLE_CLUSTER_RESOURCE_COUNTS = {
  TunnelZone: 1,
  TunnelZoneHost: 2,
  Router: 1,
  Bridge: 2,
  Port: 9,
  PortLink: 2,
  Route: 5,
  Chain: 3 + 2 + 2 + 4,
  Rule: 4 + 2 + 2 + 4 * 3,
  HostInterfacePort: 5,
  MACPort: 2,
  IPv4MACPair: 2,
};

/** A copy of a sample object changed by `edit`, so each test case states only what it changes. */
export function changed<T extends KubernetesProjection>(object: T, edit: (copy: T) => void): T {
  const copy = structuredClone(object);
  edit(copy);
  return copy;
}

/**
 * Every Translation of the sample cluster, in an order that pushes without retries: globals, Nodes, Pods,
 * the Service, its Endpoints. Throws if the fixture stops translating, which would be a bug in the fixture.
 */
export function sampleClusterTranslations(cluster: SampleCluster = sampleCluster()): Translation[] {
  const { tenant, service } = cluster;
  const byName = (name: string) => cluster.nodes.find((n) => n.metadata.name === name) ?? null;
  const results: TranslationResult[] = [
    translateGlobals({ tenant }),
    ...cluster.nodes.map((node) => translate(node, { tenant })),
    ...cluster.pods.map((pod) => translate(pod, { tenant, node: byName(pod.spec.nodeName ?? '') })),
    translate(service, { tenant }),
    translate(cluster.endpoints, { tenant, service }),
  ];
  return results.flatMap((result) => {
    if (!result.ok) throw new Error(`sample cluster does not translate: ${JSON.stringify(result.error)}`);
    return result.translations;
  });
}
