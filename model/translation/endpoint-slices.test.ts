import { endpointsOfSlices, SERVICE_NAME_LABEL, type EndpointSliceObject } from './endpoint-slices';
import { translate } from './index';
import { sampleCluster } from './sample-cluster';
import { ownsTranslation, translationOwner } from './model';
import { toProjection } from './to-projection';
import type { EndpointsProjection, Translation } from './types';

const cluster = sampleCluster();
const { service } = cluster;
const serviceUid = service.metadata.uid;
const endpointsUid = cluster.endpoints.metadata.uid;

/** A slice as the endpointslice controller writes one for the sample Service (or, `mirrored`, the mirroring one). */
function slice(
  name: string,
  endpoints: { ip: string; ready?: boolean | null }[],
  ports = [
    { name: 'http', protocol: 'TCP', port: 8080 },
    { name: 'syslog', protocol: 'UDP', port: 5514 },
  ],
  { addressType = 'IPv4', mirrored = false } = {},
): EndpointSliceObject {
  const owner = mirrored
    ? { apiVersion: 'v1', kind: 'Endpoints', name: 'web', uid: endpointsUid, controller: true }
    : { apiVersion: 'v1', kind: 'Service', name: 'web', uid: serviceUid, controller: true };
  return {
    metadata: { namespace: 'default', name, labels: { [SERVICE_NAME_LABEL]: 'web' }, ownerReferences: [owner] },
    addressType,
    endpoints: endpoints.map(({ ip, ready = true }) => ({ addresses: [ip], conditions: { ready } })),
    ports,
  };
}

const translationsOf = (object: Parameters<typeof translate>[0]): Translation[] => {
  const result = translate(object, { service });
  if (!result.ok) throw new Error(JSON.stringify(result));
  return result.translations;
};

function fromSlices(slices: EndpointSliceObject[]): EndpointsProjection {
  const projected = toProjection(endpointsOfSlices(slices));
  if (!projected.ok || projected.projection.kind !== 'Endpoints') throw new Error('not an Endpoints projection');
  return projected.projection;
}

/** What differs by design: the owner the Translations name (the Service, whose UID the slices give). */
const withoutOwner = (translations: Translation[]) =>
  translations.map(({ labels: _labels, ownerReferences: _owners, ...rest }) => rest);

describe("a Service's EndpointSlices, as the Endpoints they stand for", () => {
  it('give the Translations its v1 Endpoints give, byte for byte and in order: names, IDs, bodies', () => {
    // Spread over two slices, in another order, with a not-ready endpoint and an IPv6 slice beside: as the controller may.
    const slices = [
      slice('web-b', [{ ip: '10.1.2.5' }, { ip: '10.1.3.9', ready: false }]),
      slice('web-a', [{ ip: '10.1.1.5', ready: null }]),
      slice('web-v6', [{ ip: 'fd00::5' }], undefined, { addressType: 'IPv6' }),
    ];
    const fromEndpoints = translationsOf(cluster.endpoints);
    const translations = translationsOf(fromSlices(slices));
    expect(fromEndpoints.length).toBeGreaterThan(0);
    expect(withoutOwner(translations)).toEqual(withoutOwner(fromEndpoints));
    expect(JSON.stringify(translations.map((t) => t.resources))).toBe(
      JSON.stringify(fromEndpoints.map((t) => t.resources)),
    );
  });

  it('are owned by the Service that owns the slices: its UID in the label and the ownerReference, so the garbage collector keeps them', () => {
    const translations = translationsOf(fromSlices([slice('web-a', [{ ip: '10.1.1.5' }])]));
    for (const t of translations) {
      expect(t.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: serviceUid }]);
      expect(t.labels).toEqual({ 'midonet.org/owner-uid': serviceUid });
    }
  });

  it("are pushed by the Endpoints' workflow though the Service owns them, and are none of the Service's own", () => {
    const fromEndpointSlices = translationsOf(fromSlices([slice('web-a', [{ ip: '10.1.1.5' }])]));
    const services = translationsOf(service);
    const ownerOf = (t: Translation) => translationOwner({ ...t, name: t.name });
    for (const t of fromEndpointSlices) {
      expect(ownerOf(t)).toEqual({ kind: 'Endpoints', namespace: 'default', name: 'web', uid: serviceUid });
      expect([ownsTranslation('Endpoints', t.name), ownsTranslation('Service', t.name)]).toEqual([true, false]);
    }
    for (const t of services) {
      expect(ownerOf(t)).toEqual({ kind: 'Service', namespace: 'default', name: 'web', uid: serviceUid });
      expect([ownsTranslation('Endpoints', t.name), ownsTranslation('Service', t.name)]).toEqual([false, true]);
    }
  });

  it('mirrored from hand-made Endpoints, give exactly what those Endpoints give, owner included', () => {
    const slices = [slice('web-m', [{ ip: '10.1.1.5' }, { ip: '10.1.2.5' }], undefined, { mirrored: true })];
    expect(translationsOf(fromSlices(slices))).toEqual(translationsOf(cluster.endpoints));
  });

  it("owned by no controller (the API server's own for `kubernetes`, a hand-made one), belong to their Service when its UID is known, else stand for nothing", () => {
    const loose = slice('web-x', [{ ip: '10.1.1.5' }]);
    loose.metadata!.ownerReferences = [];
    expect(endpointsOfSlices([loose])).toBeUndefined();
    expect(endpointsOfSlices([loose], serviceUid)).toMatchObject({
      metadata: { namespace: 'default', name: 'web', uid: serviceUid },
      ownerKind: 'Service',
    });
    expect(endpointsOfSlices([], serviceUid)).toBeUndefined();
  });

  it('keep a Service with no ready endpoint, with no subsets: its Translations go, its workflow stays', () => {
    const endpoints = fromSlices([slice('web-a', [{ ip: '10.1.1.5', ready: false }])]);
    expect(endpoints.subsets).toEqual([]);
    expect(translationsOf(endpoints)).toEqual([]);
  });
});
