// A Service's endpoints read from its EndpointSlices (STEWARD_ENDPOINTS_FROM=EndpointSlices), end to end: the real
// starter makes the Endpoints of the slices, the Endpoints' workflow writes and pushes the same Translations v1
// Endpoints give (owned by the Service, which owns the slices), the Service's workflow leaves them alone, and they go
// with the last slice, what they pushed with them.
import { isDeepStrictEqual } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { sampleCluster, type SampleCluster } from '../../model/translation/sample-cluster';
import { SERVICE_NAME_LABEL } from '../../model/translation/endpoint-slices';
import { translate, translateGlobals } from '../../model/translation';
import type { Translation } from '../../model/translation/types';
import type { TranslationObject } from '../support/objects-harness';
import { writeAsMidonetKubernetes } from '../support/midonet-kubernetes';
import { OWNER_UID_LABEL } from '../../model/translation/types';
import { endpointsSourceServed } from '../../platform/kubernetes/kinds';
import { toProjection } from '../../model/translation/to-projection';
import {
  createEndpoints,
  createNode,
  createService,
  deletePod,
  emulatorIds,
  expectedIds,
  listTranslations,
  objectsHarnessForFile,
  readyOf,
  translationsOfOthers,
  waitFor,
} from '../support/objects-harness';

const base = sampleCluster();
// The embedded API server allocates ClusterIPs from 10.0.0.0/24.
const cluster: SampleCluster = {
  ...base,
  service: { ...base.service, spec: { ...base.service.spec, clusterIP: '10.0.0.21' } },
};
const h = objectsHarnessForFile({ hosts: base.hosts, identity: 'e2e-slices', endpointsFrom: 'EndpointSlices' });

const translationsOf = (...results: ReturnType<typeof translate>[]): Translation[] =>
  results.flatMap((result) => {
    if (!result.ok) throw new Error(JSON.stringify(result));
    return result.translations;
  });
const key = (t: { namespace: string; name: string }) => `${t.namespace}/${t.name}`;

/** Until the API server holds exactly `wanted`'s Translations, each Ready, and the emulator exactly their resources. */
async function converged(wanted: Translation[]): Promise<void> {
  const names = wanted.map(key).sort();
  const ids = expectedIds(wanted, base.hosts);
  const live = async () => (await listTranslations(h)).filter((t) => !t.metadata.deletionTimestamp);
  await waitFor(
    'the Translations and MidoNet to converge',
    async () =>
      JSON.stringify((await live()).map((t) => key(t.metadata)).sort()) === JSON.stringify(names) &&
      (await live()).every(readyOf) &&
      JSON.stringify(await emulatorIds(h)) === JSON.stringify(ids),
    120_000,
  ).catch(() => undefined);
  expect((await live()).map((t) => key(t.metadata)).sort()).toEqual(names);
  expect((await live()).filter((t) => !readyOf(t)).map((t) => key(t.metadata))).toEqual([]);
  expect(await emulatorIds(h)).toEqual(ids);
}

describe("a Service's endpoints from its EndpointSlices", () => {
  let others: Translation[];
  let service: k8s.V1Service;

  it("push the Translations its v1 Endpoints would, owned by the Service; the Service's own stay", async () => {
    others = await translationsOfOthers(h, [
      { kind: 'Service', namespace: 'default', name: 'web' },
      { kind: 'Endpoints', namespace: 'default', name: 'web' },
    ]);
    service = await createService(h, cluster.service);
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromFile(h.info.kubernetes.kubeconfig);
    const api = kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
    const owner = { apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata!.uid!, controller: true };
    const ports = cluster.endpoints.subsets![0]!.ports!;
    // One slice per address, as the endpointslice controller may split them.
    for (const [i, { ip }] of cluster.endpoints.subsets![0]!.addresses!.entries())
      await api.createNamespacedEndpointSlice({
        namespace: 'default',
        body: {
          metadata: { name: `web-${i}`, labels: { [SERVICE_NAME_LABEL]: 'web' }, ownerReferences: [owner] },
          addressType: 'IPv4',
          endpoints: [{ addresses: [ip], conditions: { ready: true } }],
          ports,
        },
      });
    const services = translationsOf(translateGlobals({}), translate(cluster.service));
    const endpoints = translationsOf(translate(cluster.endpoints, { service: cluster.service }));
    await converged([...services, ...endpoints, ...others]);
    const live = await listTranslations(h);
    for (const t of live.filter((t) => endpoints.some((e) => e.name === t.metadata.name)))
      expect(t.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'Service', name: 'web', uid: service.metadata!.uid }),
      ]);

    // The Service changed: its workflow applies its Translations again and deletes its stale ones, which the
    // Endpoints' are not, though the Service's UID owns them too.
    const admin = { name: 'admin', protocol: 'TCP', port: 8089 };
    const changed = {
      ...cluster.service,
      spec: { ...cluster.service.spec, ports: [...cluster.service.spec.ports!, admin] },
    };
    const current = await h.core.readNamespacedService({ namespace: 'default', name: 'web' });
    current.spec!.ports = [...current.spec!.ports!, admin];
    await h.core.replaceNamespacedService({ namespace: 'default', name: 'web', body: current });
    const servicesNow = translationsOf(translateGlobals({}), translate(changed));
    expect(servicesNow.length).toBe(services.length + 1);
    await converged([...servicesNow, ...endpoints, ...others]);

    // The last slice gone: the Endpoints' Translations go, and what they pushed; the Service's stay.
    await api.deleteNamespacedEndpointSlice({ namespace: 'default', name: 'web-0' });
    await api.deleteNamespacedEndpointSlice({ namespace: 'default', name: 'web-1' });
    await converged([...servicesNow, ...others]);
  });
});

/** The projection of a live object, as the starter hands it on. */
function projectionOf(kind: string, object: object) {
  const result = toProjection({ ...object, kind });
  if (!result.ok) throw new Error(`${kind} does not project: ${result.error.message}`);
  return result.projection;
}

/** What a Translation is, as Steward writes it: no server-set metadata, no status. */
const written = (t: TranslationObject | Translation) =>
  'metadata' in t
    ? {
        name: t.metadata.name,
        namespace: t.metadata.namespace,
        labels: t.metadata.labels,
        ownerReferences: t.metadata.ownerReferences,
        resources: t.resources,
      }
    : {
        name: t.name,
        namespace: t.namespace,
        labels: t.labels,
        ownerReferences: t.ownerReferences,
        resources: t.resources,
      };

/** The live Endpoints Translations of the namespace, as written, by name. */
async function endpointsTranslationsIn(namespace: string) {
  return (await listTranslations(h))
    .filter((t) => t.metadata.namespace === namespace && !t.metadata.deletionTimestamp)
    .filter((t) => t.metadata.name.startsWith('endpoints-port.'))
    .map(written)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Without the fields that are undefined (as toEqual compares). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

async function untilEndpointsTranslations(namespace: string, wanted: ReturnType<typeof written>[]) {
  const sorted = [...wanted].sort((a, b) => a.name.localeCompare(b.name));
  await waitFor(
    `the Endpoints Translations of ${namespace}`,
    async () => isDeepStrictEqual(plain(await endpointsTranslationsIn(namespace)), plain(sorted)),
    90_000,
  ).catch(() => undefined);
  expect(await endpointsTranslationsIn(namespace)).toEqual(sorted);
}

/**
 * Until no Translation of `namespace` is left, those being deleted included: each goes once its finalizer is released,
 * after MidoNet no longer holds what it pushed. A test that stopped at their deletion left those MidoNet deletes to land
 * in the next test's count of writes (2 Endpoints-Port Translations: DELETE Chain 2, DELETE Rule 2).
 */
async function untilTranslationsGone(namespace: string) {
  await waitFor(
    `every Translation of ${namespace} gone`,
    async () => !(await listTranslations(h)).some((t) => t.metadata.namespace === namespace),
    120_000,
  );
}

/** What a kubelet would report of a running Pod. */
const reportPod = (namespace: string, name: string, ip: string, ready: boolean) =>
  h.core.patchNamespacedPodStatus(
    {
      namespace,
      name,
      body: {
        status: {
          phase: 'Running',
          podIP: ip,
          podIPs: [{ ip }],
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        },
      },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );

/** A Service of `labels`' Pods, port http 80 to 8080, on a node of the sample cluster. */
async function selectingService(namespace: string, clusterIP: string, labels: Record<string, string>) {
  await h.core.createNamespace({ body: { metadata: { name: namespace } } });
  return h.core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: 'web' },
      spec: { clusterIP, selector: labels, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] },
    },
  });
}

async function createPods(
  namespace: string,
  labels: Record<string, string>,
  ips: string[],
  ready: (i: number) => boolean,
) {
  for (const [i, ip] of ips.entries()) {
    const name = `web-${i}`;
    await h.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name, labels },
        spec: {
          nodeName: base.nodes[0]!.metadata.name,
          containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }],
        },
      },
    });
    await reportPod(namespace, name, ip, ready(i));
  }
}

describe("a Service's endpoints from the EndpointSlices Kubernetes' own controllers write", () => {
  const kubeConfig = new k8s.KubeConfig();
  beforeAll(async () => {
    kubeConfig.loadFromFile(h.info.kubernetes.kubeconfig);
    // The endpointslice controller leaves out a Pod whose Node it does not know.
    await createNode(h, base.nodes[0]!);
  });
  afterAll(() => h.core.deleteNode({ name: base.nodes[0]!.metadata.name }));

  it('are what `auto` reads on this API server (discovery.k8s.io/v1 serves them)', async () => {
    await expect(endpointsSourceServed(kubeConfig, 'auto')).resolves.toBe('EndpointSlices');
  });

  it('mirrored from hand-written Endpoints (a Service without a selector): the same Translations as from v1, byte for byte, owner included; gone with the Endpoints', async () => {
    const namespace = 'slices-mirrored';
    await h.core.createNamespace({ body: { metadata: { name: namespace } } });
    const service = await createService(h, {
      ...cluster.service,
      metadata: { ...cluster.service.metadata, namespace },
      spec: { ...cluster.service.spec, clusterIP: '10.0.0.22' },
    });
    const endpoints = await createEndpoints(h, {
      ...cluster.endpoints,
      metadata: { ...cluster.endpoints.metadata, namespace },
    });
    const fromV1 = translationsOf(
      translate(projectionOf('Endpoints', endpoints), { service: projectionOf('Service', service) as never }),
    );
    // One per address and port.
    expect(fromV1.length).toBe(4);
    expect(fromV1.every((t) => t.ownerReferences[0]?.kind === 'Endpoints')).toBe(true);
    await untilEndpointsTranslations(namespace, fromV1.map(written));

    await h.core.deleteNamespacedEndpoints({ namespace, name: 'web' });
    await untilEndpointsTranslations(namespace, []);
    await h.core.deleteNamespace({ name: namespace });
    await untilTranslationsGone(namespace);
  });

  it("written by the endpointslice controller from a Service's ready Pods: the Translations of the Endpoints the endpoints controller would write, owned by the Service", async () => {
    const namespace = 'slices-selected';
    const labels = { app: 'selected' };
    const service = await selectingService(namespace, '10.0.0.23', labels);
    const ips = ['10.1.1.21', '10.1.1.7', '10.1.1.30'];
    // The last one not ready.
    await createPods(namespace, labels, ips, (i) => i < 2);
    // The Endpoints controller's: ready addresses sorted, the Service's target port under the Service port's name.
    const asV1 = {
      kind: 'Endpoints',
      ownerKind: 'Service',
      metadata: { namespace, name: 'web', uid: service.metadata!.uid! },
      subsets: [
        {
          addresses: [{ ip: '10.1.1.21' }, { ip: '10.1.1.7' }],
          ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
        },
      ],
    };
    const expected = translationsOf(
      translate(projectionOf('Endpoints', asV1), { service: projectionOf('Service', service) as never }),
    );
    expect(expected.map((t) => t.ownerReferences[0]?.kind)).toEqual(['Service', 'Service']);
    await untilEndpointsTranslations(namespace, expected.map(written));

    // The Service gone: the garbage collector takes its slices, and with them go the Endpoints' Translations.
    await h.core.deleteNamespacedService({ namespace, name: 'web' });
    await untilEndpointsTranslations(namespace, []);
    for (const i of ips.keys()) await deletePod(h, namespace, `web-${i}`);
    await h.core.deleteNamespace({ name: namespace });
    await untilTranslationsGone(namespace);
  });

  it("takes over the Translations midonet-kubernetes wrote of the same Service's v1 Endpoints without a MidoNet write; they move to the Service", async () => {
    const namespace = 'slices-takeover';
    const labels = { app: 'takeover' };
    const service = await selectingService(namespace, '10.0.0.24', labels);
    const ips = ['10.1.1.41', '10.1.1.42'];
    await createPods(namespace, labels, ips, () => false);
    // midonet-kubernetes ran with the endpoints controller: the Endpoints of the ready Pods, Translations owned by them,
    // and MidoNet holding their resources.
    const endpoints = await h.core.createNamespacedEndpoints({
      namespace,
      body: {
        metadata: { name: 'web' },
        subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] }],
      },
    });
    const theirs = translationsOf(
      translate(projectionOf('Endpoints', endpoints), { service: projectionOf('Service', service) as never }),
    );
    // Until the Service's and the Pods' Translations are Ready: what Steward pushes of its own goes before the count.
    await waitFor(
      `the Service's and the Pods' Translations in ${namespace} Ready`,
      async () => {
        const live = (await listTranslations(h)).filter((t) => !t.metadata.name.startsWith('endpoints-port.'));
        const pods = new Set(
          live
            .filter((t) => t.metadata.namespace === namespace)
            .flatMap((t) => (t.metadata.ownerReferences ?? []).filter((o) => o.kind === 'Pod').map((o) => o.name)),
        );
        return pods.size === ips.length && live.every(readyOf);
      },
      90_000,
    );
    for (const t of theirs) {
      await writeAsMidonetKubernetes(h, { ...t, owner: 'Endpoints/web' });
      for (const resource of t.resources) await h.midonet.ensure(resource);
    }
    await h.admin.resetCounters();

    // The Pods turn ready: the endpointslice controller writes their slice, and Steward takes over.
    for (const [i, ip] of ips.entries()) await reportPod(namespace, `web-${i}`, ip, true);
    const moved = theirs.map((t) =>
      written({
        ...t,
        labels: { ...t.labels, [OWNER_UID_LABEL]: service.metadata!.uid! },
        ownerReferences: [
          ...t.ownerReferences,
          { apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata!.uid! },
        ],
      }),
    );
    await untilEndpointsTranslations(namespace, moved);
    await waitFor(
      'the taken-over Translations Ready',
      async () => (await listTranslations(h)).filter((t) => t.metadata.namespace === namespace).every(readyOf),
      60_000,
    );
    const { byKind } = await h.admin.counters();
    const writes = Object.entries(byKind).flatMap(([kind, methods]) =>
      Object.entries(methods)
        .filter(([method]) => method !== 'GET' && kind !== 'Login')
        .map(([method, n]) => `${method} ${kind} ${n}`),
    );
    expect(writes).toEqual([]);

    await h.core.deleteNamespacedService({ namespace, name: 'web' });
    await h.core.deleteNamespacedEndpoints({ namespace, name: 'web' });
    await untilEndpointsTranslations(namespace, []);
    for (const i of ips.keys()) await deletePod(h, namespace, `web-${i}`);
    await h.core.deleteNamespace({ name: namespace });
    await untilTranslationsGone(namespace);
  });
});
