// Bad input gives a TranslationError naming the object and the field, never an exception.
import { translate, type TranslatedObjectRef, type TranslationContext, type TranslationError } from './index';
import { changed, sampleCluster } from './sample-cluster';
import type { KubernetesProjection } from './types';

const cluster = sampleCluster();
const [node1] = cluster.nodes;
const [nginx] = cluster.pods;
const { service, endpoints } = cluster;

const nodeRef: TranslatedObjectRef = { kind: 'Node', name: 'node1' };
const hostIdField = 'metadata.annotations["midonet.org/host-id"]';

test.each<[string, KubernetesProjection, TranslationContext, Omit<TranslationError, 'message'>]>([
  [
    'a Node without the host-id annotation waits for the node annotator',
    changed(node1!, (n) => delete n.metadata.annotations['midonet.org/host-id']),
    {},
    { reason: 'MissingHostId', object: nodeRef, field: hostIdField },
  ],
  [
    'a Node whose host-id is not a UUID',
    changed(node1!, (n) => (n.metadata.annotations['midonet.org/host-id'] = 'node1')),
    {},
    { reason: 'InvalidHostId', object: nodeRef, field: hostIdField },
  ],
  [
    'a Node without a PodCIDR (MK exits here)',
    changed(node1!, (n) => delete n.spec.podCIDR),
    {},
    { reason: 'MissingPodCIDR', object: nodeRef, field: 'spec.podCIDR' },
  ],
  [
    'a Node with a malformed PodCIDR (MK exits here)',
    changed(node1!, (n) => (n.spec.podCIDR = '10.1.1.0/33')),
    {},
    { reason: 'InvalidPodCIDR', object: nodeRef, field: 'spec.podCIDR' },
  ],
  [
    'a Node with a malformed InternalIP (MK exits here)',
    changed(node1!, (n) => (n.status.addresses![0]!.address = '192.0.2.300')),
    {},
    { reason: 'InvalidNodeAddress', object: nodeRef, field: 'status.addresses[0].address' },
  ],
  [
    'a Node with a malformed tunnel endpoint IP (MK silently drops the tunnel membership)',
    changed(node1!, (n) => (n.metadata.annotations['midonet.org/tunnel-endpoint-ip'] = '192.0.2')),
    {},
    {
      reason: 'InvalidTunnelEndpointIP',
      object: nodeRef,
      field: 'metadata.annotations["midonet.org/tunnel-endpoint-ip"]',
    },
  ],
  [
    'a Node with a malformed tunnel zone ID (MK silently drops the tunnel membership)',
    changed(node1!, (n) => (n.metadata.annotations['midonet.org/tunnel-zone-id'] = 'default')),
    {},
    { reason: 'InvalidTunnelZoneId', object: nodeRef, field: 'metadata.annotations["midonet.org/tunnel-zone-id"]' },
  ],
  [
    'a Node with a malformed MAC annotation',
    changed(node1!, (n) => (n.metadata.annotations['midonet.org/mac-address'] = '02:42:c0:00:02')),
    {},
    { reason: 'InvalidMacAddress', object: nodeRef, field: 'metadata.annotations["midonet.org/mac-address"]' },
  ],
  [
    'a Pod whose Node was not supplied (MK retries until its cache has the Node)',
    nginx!,
    {},
    { reason: 'NodeNotFound', object: { kind: 'Pod', namespace: 'default', name: 'nginx' }, field: 'spec.nodeName' },
  ],
  [
    'a Pod supplied with another Node than the one it runs on',
    nginx!,
    { node: cluster.nodes[1] },
    { reason: 'NodeNotFound', object: { kind: 'Pod', namespace: 'default', name: 'nginx' }, field: 'spec.nodeName' },
  ],
  [
    'a Pod on a Node without host-id names the Node, which is what must change',
    nginx!,
    { node: changed(node1!, (n) => delete n.metadata.annotations['midonet.org/host-id']) },
    { reason: 'MissingHostId', object: nodeRef, field: hostIdField },
  ],
  [
    'a Pod with a malformed MAC annotation',
    changed(nginx!, (p) => (p.metadata.annotations['midonet.org/mac-address'] = 'nope')),
    { node: node1 },
    {
      reason: 'InvalidMacAddress',
      object: { kind: 'Pod', namespace: 'default', name: 'nginx' },
      field: 'metadata.annotations["midonet.org/mac-address"]',
    },
  ],
  [
    'a Pod with an IPv6 podIP (MidoNet ARP tables are IPv4)',
    changed(nginx!, (p) => (p.status.podIP = 'fd00::4')),
    { node: node1 },
    { reason: 'InvalidPodIP', object: { kind: 'Pod', namespace: 'default', name: 'nginx' }, field: 'status.podIP' },
  ],
  [
    'a ClusterIP Service without a ClusterIP (MK skipped it silently)',
    changed(service, (s) => delete s.spec.clusterIP),
    {},
    {
      reason: 'MissingClusterIP',
      object: { kind: 'Service', namespace: 'default', name: 'web' },
      field: 'spec.clusterIP',
    },
  ],
  [
    'a Service with a malformed ClusterIP',
    changed(service, (s) => (s.spec.clusterIP = '10.96.0.256')),
    {},
    {
      reason: 'InvalidClusterIP',
      object: { kind: 'Service', namespace: 'default', name: 'web' },
      field: 'spec.clusterIP',
    },
  ],
  [
    'a Service port with SCTP (MK exits here)',
    changed(service, (s) => (s.spec.ports![1]!.protocol = 'SCTP')),
    {},
    {
      reason: 'UnsupportedProtocol',
      object: { kind: 'Service', namespace: 'default', name: 'web' },
      field: 'spec.ports[1].protocol',
    },
  ],
  [
    'a Service port out of range',
    changed(service, (s) => (s.spec.ports![0]!.port = 0)),
    {},
    {
      reason: 'InvalidPort',
      object: { kind: 'Service', namespace: 'default', name: 'web' },
      field: 'spec.ports[0].port',
    },
  ],
  [
    'Endpoints with a malformed address',
    changed(endpoints, (e) => (e.subsets![0]!.addresses![1]!.ip = '10.1.2')),
    { service },
    {
      reason: 'InvalidEndpointAddress',
      object: { kind: 'Endpoints', namespace: 'default', name: 'web' },
      field: 'subsets[0].addresses[1].ip',
    },
  ],
  [
    'Endpoints with a port out of range',
    changed(endpoints, (e) => (e.subsets![0]!.ports![1]!.port = 70000)),
    { service },
    {
      reason: 'InvalidPort',
      object: { kind: 'Endpoints', namespace: 'default', name: 'web' },
      field: 'subsets[0].ports[1].port',
    },
  ],
  [
    'Endpoints whose Service has a malformed ClusterIP name the Service',
    endpoints,
    { service: changed(service, (s) => (s.spec.clusterIP = 'ten')) },
    {
      reason: 'InvalidClusterIP',
      object: { kind: 'Service', namespace: 'default', name: 'web' },
      field: 'spec.clusterIP',
    },
  ],
])('%s', (_what, object, context, want) => {
  const result = translate(object, context);
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.error).toMatchObject(want);
  expect(result.error.message).not.toBe('');
});
