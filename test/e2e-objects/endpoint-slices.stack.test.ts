// A Service's endpoints read from its EndpointSlices (STEWARD_ENDPOINTS_FROM=EndpointSlices), end to end: the real
// starter makes the Endpoints of the slices, the Endpoints' workflow writes and pushes the same Translations v1
// Endpoints give (owned by the Service, which owns the slices), the Service's workflow leaves them alone, and they go
// with the last slice, what they pushed with them.
import * as k8s from '@kubernetes/client-node';
import { sampleCluster, type SampleCluster } from '../../model/translation/sample-cluster';
import { SERVICE_NAME_LABEL } from '../../model/translation/endpoint-slices';
import { translate, translateGlobals } from '../../model/translation';
import type { Translation } from '../../model/translation/types';
import {
  createService,
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
