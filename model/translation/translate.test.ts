// Behaviour beyond the golden cluster: what becomes nothing, optional subs, options, and projections.
import {
  translate,
  translateGlobals,
  toProjection,
  type KubernetesProjection,
  type TranslationContext,
  type TranslationResult,
} from './index';
import { changed, sampleCluster } from './sample-cluster';

const cluster = sampleCluster();
const [node1, node2] = cluster.nodes;
const [nginx] = cluster.pods;
const { service, endpoints } = cluster;

function names(result: TranslationResult): string[] {
  if (!result.ok) throw new Error(`unexpected ${result.error.reason} at ${result.error.field}`);
  return result.translations.map((t) => t.name);
}

describe('objects that become nothing, as in midonet-kubernetes', () => {
  test.each<[string, KubernetesProjection, TranslationContext]>([
    ['an unscheduled Pod', changed(nginx!, (p) => delete p.spec.nodeName), { node: node1 }],
    [
      'a Pod on the host network (it needs no port)',
      changed(nginx!, (p) => (p.spec.hostNetwork = true)),
      { node: node1 },
    ],
    [
      'a Pod that has Succeeded (its port is released)',
      changed(nginx!, (p) => (p.status.phase = 'Succeeded')),
      { node: node1 },
    ],
    ['a Pod that has Failed', changed(nginx!, (p) => (p.status.phase = 'Failed')), { node: node1 }],
    [
      'a NodePort Service (only ClusterIP Services are in scope)',
      changed(service, (s) => (s.spec.type = 'NodePort')),
      {},
    ],
    ['a headless Service', changed(service, (s) => (s.spec.clusterIP = 'None')), {}],
    ['a Service without ports (MK writes no empty Translation)', changed(service, (s) => delete s.spec.ports), {}],
    ['Endpoints whose Service is not known', endpoints, {}],
    [
      'Endpoints given a Service of another name',
      endpoints,
      { service: changed(service, (s) => (s.metadata.name = 'other')) },
    ],
    ['Endpoints of a headless Service', endpoints, { service: changed(service, (s) => (s.spec.clusterIP = 'None')) }],
    [
      'Endpoints with only notReadyAddresses (they are not projected)',
      changed(endpoints, (e) => delete e.subsets![0]!.addresses),
      { service },
    ],
  ])('%s', (_what, object, context) => {
    expect(translate(object, context)).toEqual({ ok: true, translations: [] });
  });
});

describe('optional subs and tolerated input', () => {
  test('a Node not yet given a tunnel endpoint IP, and a Pod on it, name the missing annotation (MK pushed a binding MidoNet refuses)', () => {
    const bare = changed(node1!, (n) => delete n.metadata.annotations['midonet.org/tunnel-endpoint-ip']);
    const error = {
      reason: 'MissingTunnelEndpointIP',
      object: { kind: 'Node', name: 'node1' },
      field: 'metadata.annotations["midonet.org/tunnel-endpoint-ip"]',
    };
    expect(translate(bare)).toMatchObject({ ok: false, error });
    expect(translate(nginx!, { node: bare })).toMatchObject({ ok: false, error });
  });

  test('an explicit tunnel zone ID replaces the default zone, in the name and as the parent', () => {
    const zone = '8B80D6B7-F04B-4075-AB5D-0C4D5C85D15E';
    const result = translate(changed(node1!, (n) => (n.metadata.annotations['midonet.org/tunnel-zone-id'] = zone)));
    if (!result.ok) throw new Error(result.error.reason);
    const [tunnel] = result.translations;
    expect(tunnel!.name).toMatch(/^node-tunnel-endpoint\.4\.node1-192\.0\.2\.10-8b80d6b7-f04b-4075-ab5d-0c4d5c85d15e-/);
    expect(tunnel!.resources[0]!.parent).toBe('8b80d6b7-f04b-4075-ab5d-0c4d5c85d15e');
  });

  test('a host-id in upper case is bound in lower case, as Go prints UUIDs', () => {
    const upper = changed(
      node2!,
      (n) =>
        (n.metadata.annotations['midonet.org/host-id'] = n.metadata.annotations['midonet.org/host-id']!.toUpperCase()),
    );
    expect(translate(upper)).toEqual(translate(node2!));
  });

  test('IPv6 node addresses are left out instead of blocking the Node (MK would post a route MidoNet rejects), and noted', () => {
    const dualStack = changed(node2!, (n) =>
      n.status.addresses!.push(
        { type: 'InternalIP', address: 'fd00::11' },
        { type: 'ExternalIP', address: '2001:db8::11' },
        { type: 'InternalIP', address: 'fd00::11' },
      ),
    );
    const { notes, ...translated } = translate(dualStack) as Extract<TranslationResult, { ok: true }>;
    expect(translated).toEqual(translate(node2!));
    expect(notes).toEqual([
      {
        reason: 'IPv6AddressSkipped',
        message:
          "IPv6 addresses get no route (the cluster router's routes are IPv4 only): InternalIP fd00::11, ExternalIP 2001:db8::11",
      },
    ]);
    expect(translate(node2!)).not.toHaveProperty('notes');
  });

  test('an address listed twice yields one Translation (MK keys them in a map)', () => {
    const twice = changed(node2!, (n) => n.status.addresses!.push({ ...n.status.addresses![0]! }));
    expect(translate(twice)).toEqual(translate(node2!));
  });

  test('a Pod with a MAC but no IP yet gets the MAC entry but no ARP entry', () => {
    expect(
      names(
        translate(
          changed(nginx!, (p) => delete p.status.podIP),
          { node: node1 },
        ),
      ),
    ).toEqual(['pod.4.nginx', 'pod-mac.4.nginx-mac-0a580a010104-b1c216a50d007c34cf75cdfb879a0fa637bc1716']);
  });

  test('a Service port without a name keys its chain with an empty name, as MK does', () => {
    const unnamed = changed(service, (s) => (s.spec.ports = [{ name: '', protocol: 'TCP', port: 80 }]));
    const result = translate(unnamed);
    if (!result.ok) throw new Error(result.error.reason);
    expect(JSON.parse(result.translations[0]!.resources[0]!.body)).toMatchObject({ name: 'KUBE-SVC-default/web/' });
    expect(result.translations[1]!.name).toMatch(/^service-port\.4\.default-web--10\.96\.0\.20-6-80-[0-9a-f]{40}$/);
  });

  test('the same endpoint listed in two subsets yields one Translation', () => {
    const twice = changed(endpoints, (e) => e.subsets!.push(structuredClone(e.subsets![0]!)));
    expect(translate(twice, { service })).toEqual(translate(endpoints, { service }));
  });
});

describe('tenant', () => {
  test('another tenant changes the IDs and the tenantId (checked on the cluster router)', () => {
    const result = translateGlobals({ tenant: 'acme' });
    if (!result.ok) throw new Error(result.error.reason);
    const router = result.translations[1]!.resources[0]!;
    // Computed with Python's uuid.uuid5 from the same formula (ids.ts).
    expect(router.body).toBe(
      JSON.stringify({ id: '139dc380-21cc-5082-a9d9-0bf68e444109', tenantId: 'acme', name: 'ClusterRouter' }),
    );
  });

  test('bodies escape <, > and & as Go does, so they match MK byte for byte', () => {
    const result = translateGlobals({ tenant: 'a&b' });
    if (!result.ok) throw new Error(result.error.reason);
    expect(result.translations[1]!.resources[0]!.body).toContain('"tenantId":"a\\u0026b"');
  });
});

describe('projections', () => {
  test('projecting a full object keeps only what the translation reads, including only the midonet.org annotations it reads', () => {
    const full = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'nginx',
        namespace: 'default',
        uid: 'u1',
        resourceVersion: '42',
        labels: { app: 'web' },
        annotations: {
          'midonet.org/mac-address': '0a:58:0a:01:01:04',
          'midonet.org/host-id': 'x',
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
        },
      },
      spec: { nodeName: 'node1', containers: [{ name: 'c', image: 'nginx' }] },
      status: { phase: 'Running', podIP: '10.1.1.4', conditions: [{ type: 'Ready', status: 'True' }] },
    };
    expect(toProjection(full)).toEqual({
      ok: true,
      projection: {
        kind: 'Pod',
        metadata: {
          name: 'nginx',
          namespace: 'default',
          uid: 'u1',
          annotations: { 'midonet.org/mac-address': '0a:58:0a:01:01:04' },
        },
        spec: { nodeName: 'node1' },
        status: { podIP: '10.1.1.4' },
      },
    });
  });

  test('defaults follow the API server: Service type ClusterIP, port protocol TCP', () => {
    const result = toProjection({
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', uid: 'u' },
      spec: { clusterIP: '10.96.0.20', ports: [{ name: 'http', port: 80 }] },
    });
    expect(result).toMatchObject({
      ok: true,
      projection: { spec: { type: 'ClusterIP', ports: [{ protocol: 'TCP' }] } },
    });
  });

  test('a malformed object is a MalformedObject error naming the field', () => {
    const result = toProjection({
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', uid: 'u' },
      spec: { ports: [{ name: 'http', port: '80' }] },
    });
    expect(result).toMatchObject({
      ok: false,
      error: {
        reason: 'MalformedObject',
        object: { kind: 'Service', namespace: 'default', name: 'web' },
        field: 'spec.ports[0].port',
      },
    });
  });

  test('an object of a kind the translation does not know is a MalformedObject of kind Unknown', () => {
    expect(toProjection({ kind: 'ConfigMap', metadata: { name: 'x' } })).toMatchObject({
      ok: false,
      error: { reason: 'MalformedObject', object: { kind: 'Unknown', name: 'x' } },
    });
  });

  test('every sample object projects to what its translation reads: itself, but a Pod short of its MAC or end', () => {
    for (const object of [...cluster.nodes, ...cluster.pods, service, endpoints]) {
      const projected = toProjection(object);
      if (!projected.ok) throw new Error(`${object.metadata.name} does not project`);
      expect(toProjection(projected.projection)).toEqual(projected);
      const node = cluster.nodes.find((n) => object.kind === 'Pod' && n.metadata.name === object.spec.nodeName);
      const context = { ...(node ? { node } : {}), service };
      expect(translate(projected.projection, context)).toEqual(translate(object, context));
      if (object.kind !== 'Pod') expect(projected.projection).toEqual(object);
    }
  });
});
