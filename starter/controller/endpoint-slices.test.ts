import pino from 'pino';
import type { KubernetesObject } from '@kubernetes/client-node';
import { SERVICE_NAME_LABEL } from '../../model/translation/endpoint-slices';
import type { Source, SourceEvent } from '../../platform/kubernetes/informer';
import { endpointsFromSlices } from './endpoint-slices';

const log = pino({ level: 'silent' });
const serviceUid = 'svc-uid-1';

function slice(name: string, ips: string[], { service = 'web', uid = serviceUid } = {}): KubernetesObject {
  return {
    metadata: {
      namespace: 'default',
      name,
      uid: `${name}-uid`,
      labels: { [SERVICE_NAME_LABEL]: service },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service, uid, controller: true }],
    },
    addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  } as KubernetesObject;
}

function harness() {
  const events: SourceEvent[] = [];
  const view = endpointsFromSlices((event) => events.push(event), log);
  const upsert = (object: KubernetesObject) => view.onEvent({ type: 'upsert', kind: 'Endpoints', object });
  const remove = (object: KubernetesObject) => view.onEvent({ type: 'delete', kind: 'Endpoints', object });
  const told = () =>
    events.splice(0).map((e) => ({
      type: e.type,
      name: e.object.metadata?.name,
      uid: e.object.metadata?.uid,
      ips: (e.object as { subsets?: { addresses: { ip: string }[] }[] }).subsets?.flatMap((s) =>
        s.addresses.map((a) => a.ip),
      ),
    }));
  return { view, upsert, remove, told };
}

describe("a Service's EndpointSlices, as the starter sees Endpoints", () => {
  it("tell one Endpoints per Service, under the Service's name and UID, as its slices change; gone with the last slice", () => {
    const { upsert, remove, told } = harness();
    const a = slice('web-abc', ['10.1.1.5']);
    upsert(a);
    expect(told()).toEqual([{ type: 'upsert', name: 'web', uid: serviceUid, ips: ['10.1.1.5'] }]);
    upsert(slice('web-def', ['10.1.2.5']));
    expect(told()).toEqual([{ type: 'upsert', name: 'web', uid: serviceUid, ips: ['10.1.1.5', '10.1.2.5'] }]);
    // A slice written again as it was (a resync) tells nothing.
    upsert(a);
    expect(told()).toEqual([]);
    remove(a);
    expect(told()).toEqual([{ type: 'upsert', name: 'web', uid: serviceUid, ips: ['10.1.2.5'] }]);
    remove(slice('web-def', []));
    expect(told()).toEqual([{ type: 'delete', name: 'web', uid: serviceUid, ips: ['10.1.2.5'] }]);
  });

  it("end the old Service's Endpoints before telling the new one's, when the Service is made again under its name", () => {
    const { upsert, remove, told } = harness();
    upsert(slice('web-abc', ['10.1.1.5']));
    told();
    upsert(slice('web-xyz', ['10.1.1.7'], { uid: 'svc-uid-2' }));
    remove(slice('web-abc', []));
    expect(told()).toEqual([
      { type: 'delete', name: 'web', uid: serviceUid, ips: ['10.1.1.5'] },
      { type: 'upsert', name: 'web', uid: 'svc-uid-2', ips: ['10.1.1.7'] },
    ]);
  });

  it("move a relabelled slice from one Service's Endpoints to the other's", () => {
    const { upsert, told } = harness();
    upsert(slice('s-1', ['10.1.1.5']));
    upsert(slice('s-2', ['10.1.1.6']));
    told();
    upsert(slice('s-1', ['10.1.1.5'], { service: 'api', uid: 'svc-uid-3' }));
    expect(told()).toEqual([
      { type: 'upsert', name: 'web', uid: serviceUid, ips: ['10.1.1.6'] },
      { type: 'upsert', name: 'api', uid: 'svc-uid-3', ips: ['10.1.1.5'] },
    ]);
  });

  it('answer for Endpoints in the source: get, counts and replay give the Endpoints, not the slices; other kinds as they are', () => {
    const { view, upsert } = harness();
    const pod = { metadata: { namespace: 'default', name: 'p', uid: 'p-uid' } };
    const inner: Source = {
      start: () => undefined,
      stop: () => Promise.resolve(),
      replay: (visit = () => undefined) => {
        visit({ type: 'upsert', kind: 'Pod', object: pod });
        visit({ type: 'upsert', kind: 'Endpoints', object: slice('web-abc', ['10.1.1.5']) });
      },
      counts: () => ({ Pod: 1, Endpoints: 2 }),
      get: (kind) => (kind === 'Pod' ? pod : undefined),
      synced: () => true,
    };
    upsert(slice('web-abc', ['10.1.1.5']));
    const source = view.over(inner);
    expect(source.get('Endpoints', 'default', 'web')?.metadata?.uid).toBe(serviceUid);
    expect(source.get('Pod', 'default', 'p')).toBe(pod);
    expect(source.counts()).toEqual({ Pod: 1, Endpoints: 1 });
    const replayed: string[] = [];
    source.replay((e) => replayed.push(`${e.kind}/${e.object.metadata?.name}`));
    expect(replayed).toEqual(['Pod/p', 'Endpoints/web']);
  });

  it("give slices no controller owns (the API server's for `kubernetes`) to their Service once the source has seen it", () => {
    const { view, upsert, told } = harness();
    const seen: { service?: KubernetesObject } = {};
    view.over({
      start: () => undefined,
      stop: () => Promise.resolve(),
      replay: () => undefined,
      counts: () => ({}),
      get: (kind) => (kind === 'Service' ? seen.service : undefined),
      synced: () => true,
    });
    const loose = slice('kubernetes', ['192.168.0.10'], { service: 'kubernetes' });
    loose.metadata!.ownerReferences = [];
    upsert(loose);
    expect(told()).toEqual([]);
    seen.service = { metadata: { namespace: 'default', name: 'kubernetes', uid: 'kubernetes-uid' } };
    view.onEvent({ type: 'upsert', kind: 'Service', object: seen.service });
    expect(told()).toEqual([
      { type: 'upsert', name: 'kubernetes', uid: 'kubernetes-uid', ips: undefined },
      { type: 'upsert', name: 'kubernetes', uid: 'kubernetes-uid', ips: ['192.168.0.10'] },
    ]);
  });
});
