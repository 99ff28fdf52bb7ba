import pino from 'pino';
import { Registry } from 'prom-client';
import { Writable } from 'node:stream';
import type { SourceEvent } from '../../platform/kubernetes/informer';
import { createStarterMetrics } from './metrics';
import { MANAGED_BY_LABEL, MANAGED_BY_STEWARD } from '../../model/vocabulary';
import { createServedClouds } from './served-clouds';

const peerPod = (uid: string, cloudProvider?: string, type: SourceEvent['type'] = 'upsert'): SourceEvent =>
  ({
    kind: 'PeerPod',
    type,
    object: {
      metadata: { uid, namespace: 'default', name: `web-${uid}-resource-abcde`, finalizers: ['peer.pod/finalizer'] },
      spec: { ...(cloudProvider ? { cloudProvider } : {}), instanceID: 'i-1' },
    },
  }) as SourceEvent;

function setup(served: string[] | undefined) {
  const lines: { msg: string; cloud?: string; name?: string }[] = [];
  const log = pino(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
        done();
      },
    }),
  );
  const registry = new Registry();
  const metrics = createStarterMetrics(registry, { kinds: ['PeerPod'], isLeader: () => true, queueDepth: () => 0 });
  const notServed = async () =>
    (await registry.getSingleMetric('steward_starter_peerpods_not_served_total')!.get()).values.map(
      (v) => `${JSON.stringify(v.labels)} ${v.value}`,
    );
  return { lines, notServed, clouds: createServedClouds(served, log, metrics) };
}

describe('PeerPods of clouds this installation does not serve', () => {
  it('are left alone, said once per PeerPod in the log and the metric however many events come', async () => {
    const { lines, notServed, clouds } = setup(['libvirt']);
    expect(clouds.leftAlone(peerPod('a', 'azure', 'upsert'))).toBe(true);
    expect(clouds.leftAlone(peerPod('a', 'azure'))).toBe(true);
    expect(clouds.leftAlone(peerPod('b', 'ibmcloud'))).toBe(true);
    expect(clouds.leftAlone(peerPod('a', 'azure'))).toBe(true);
    expect(lines.map((l) => [l.name, l.cloud])).toEqual([
      ['web-a-resource-abcde', 'azure'],
      ['web-b-resource-abcde', 'ibmcloud'],
    ]);
    expect(lines[0]!.msg).toMatch(/^PeerPod left to its own controller/);
    expect(await notServed()).toEqual(['{"cloud":"azure"} 1', '{"cloud":"ibmcloud"} 1']);
    // Its deletion is left alone too, and a new PeerPod of the same UID (none can be) would be said again.
    expect(clouds.leftAlone(peerPod('a', 'azure', 'delete'))).toBe(true);
    expect(clouds.leftAlone(peerPod('a', 'azure', 'upsert'))).toBe(true);
    expect(lines).toHaveLength(3);
  });

  it('never include one Steward wrote: its workflow holds the finalizer, whatever clouds this starter was told', () => {
    const { lines, clouds } = setup([]);
    const stewards = (type: SourceEvent['type']) => {
      const event = peerPod('s', 'libvirt', type);
      event.object.metadata!.labels = { [MANAGED_BY_LABEL]: MANAGED_BY_STEWARD };
      return event;
    };
    expect(clouds.leftAlone(stewards('upsert'))).toBe(false);
    expect(clouds.leftAlone(stewards('delete'))).toBe(false);
    // cloud-api-adaptor's of the same cloud is left alone.
    expect(clouds.leftAlone(peerPod('c', 'libvirt'))).toBe(true);
    expect(lines.map((l) => l.name)).toEqual(['web-c-resource-abcde']);
  });

  it('are served when their cloud is listed, when they name none, and by a starter given no list', () => {
    const { lines, clouds } = setup(['libvirt', 'aws']);
    expect(clouds.leftAlone(peerPod('a', 'aws'))).toBe(false);
    expect(clouds.leftAlone(peerPod('b', 'libvirt'))).toBe(false);
    expect(clouds.leftAlone(peerPod('c'))).toBe(false);
    expect(setup(undefined).clouds.leftAlone(peerPod('d', 'azure'))).toBe(false);
    expect(lines).toEqual([]);
  });

  it('leave other kinds alone', () => {
    const { clouds } = setup([]);
    const pod = { ...peerPod('a', 'azure'), kind: 'Pod' } as SourceEvent;
    expect(clouds.leftAlone(pod)).toBe(false);
  });
});
