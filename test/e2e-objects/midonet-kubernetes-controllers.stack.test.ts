// What midonet-kubernetes' controllers did beside the translation, as Steward does it, on the real stack: its node
// annotator (Nodes created with none or some of the midonet.org annotations, as a cluster adds them after
// midonet-kubernetes is switched off, get them filled from MidoNet's hosts and their own addresses, are pushed, and
// their Pods get their ports without a change of their own), and Endpoints without their Service left alone.
import type { NodeProjection, PodProjection } from '../../model/translation/types';
import { podPortId } from '../../model/translation/ids';
import { workflowId } from '../../model/naming';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createEndpoints,
  createNode,
  createService,
  createPod,
  emulatorIds,
  eventsAbout,
  objectsHarnessForFile,
  podTranslationNames,
  stateOf,
  waitFor,
  waitForReady,
  waitForState,
} from '../support/objects-harness';

const registered = { id: '5b0c6c1e-2d5f-4b8e-9a51-1f2e3d4c5b6a', name: 'anno-1' };
const late = { id: '6c1d7d2f-3e60-4c9f-8b62-2a3f4e5d6c7b', name: 'anno-2' };
const h = objectsHarnessForFile({ hosts: [registered], identity: 'node-annotator' });

const node = (name: string, index: number, annotations: Record<string, string>): NodeProjection => ({
  kind: 'Node',
  metadata: { name, uid: 'set-by-the-api-server', annotations },
  spec: { podCIDR: `10.9.${index}.0/24` },
  status: {
    addresses: [
      { type: 'Hostname', address: name },
      { type: 'InternalIP', address: `192.0.2.${100 + index}` },
      { type: 'InternalIP', address: `192.0.2.${200 + index}` },
    ],
  },
});
const pod = (name: string, nodeName: string, podIP: string): PodProjection => ({
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: 'set-by-the-api-server', annotations: {} },
  spec: { nodeName },
  status: { phase: 'Running', podIP },
});

const annotationsOf = async (name: string) => (await h.core.readNode({ name })).metadata?.annotations ?? {};
const midonetAnnotations = async (name: string) =>
  Object.fromEntries(Object.entries(await annotationsOf(name)).filter(([key]) => key.startsWith('midonet.org/')));
const reasonsAbout = async (name: string) =>
  (await eventsAbout(h, 'Node', name)).map((e) => `${e.reason}: ${e.message}`);

/** The Pod's Translations (its Node's first) are Ready and its bridge port is in MidoNet. */
async function expectPodPushed(podOf: PodProjection, nodeOf: NodeProjection): Promise<void> {
  const names = podTranslationNames(podOf, nodeOf, 'midonetkube');
  await waitForReady(h, `Pod ${podOf.metadata.name}'s Translations`, names, 60_000);
  expect((await emulatorIds(h)).Port ?? []).toContain(podPortId('midonetkube', 'default', podOf.metadata.name));
}

describe("midonet-kubernetes' node annotator, as a step of the Node's lifecycle", () => {
  it('fills every missing annotation of a Node whose host its agent registered, pushes it, and its Pod gets its port', async () => {
    const anno1 = node('anno-1', 1, {});
    const onAnno1 = pod('on-anno-1', 'anno-1', '10.9.1.5');
    await createNode(h, anno1);
    await createPod(h, onAnno1);

    await waitFor('anno-1 annotated', async () => (await annotationsOf('anno-1'))['midonet.org/host-id'] !== undefined);
    const annotations = {
      'midonet.org/host-id': registered.id,
      'midonet.org/tunnel-endpoint-ip': '192.0.2.101',
      'midonet.org/tunnel-zone-id': '',
    };
    expect(await midonetAnnotations('anno-1')).toEqual(annotations);
    expect(await reasonsAbout('anno-1')).toContain(
      `MidoNetHostIDAnnotated: Annotated map[midonet.org/host-id:${registered.id} midonet.org/tunnel-endpoint-ip:192.0.2.101 midonet.org/tunnel-zone-id:]`,
    );
    expect((await waitForState(h, { kind: 'Node', name: 'anno-1' }, 'ready')).state).toBe('ready');
    await expectPodPushed(onAnno1, { ...anno1, metadata: { ...anno1.metadata, annotations } });
  });

  it('waits while MidoNet has no host of its name (saying so on the Node), keeps a value set by hand, and once the agent registers, the Node and the Pod that waited on it are pushed', async () => {
    // Its tunnel endpoint set by hand to its second address: kept.
    const anno2 = node('anno-2', 2, { 'midonet.org/tunnel-endpoint-ip': '192.0.2.202' });
    const onAnno2 = pod('on-anno-2', 'anno-2', '10.9.2.5');
    await createNode(h, anno2);
    await createPod(h, onAnno2);
    await waitForState(h, { kind: 'Node', name: 'anno-2' }, 'waitingForMidonetHost');
    await waitFor('the wait told on the Node', async () =>
      (await reasonsAbout('anno-2')).some((r) =>
        r.startsWith('WaitingForMidonetHost: MidoNet has no host named anno-2'),
      ),
    );
    expect(await midonetAnnotations('anno-2')).toEqual({ 'midonet.org/tunnel-endpoint-ip': '192.0.2.202' });
    // The Pod waits for its Node: registered on it, not translated as invalid.
    expect(
      (await waitForState(h, { kind: 'Pod', namespace: 'default', name: 'on-anno-2' }, 'waitingForDependency')).state,
    ).toBe('waitingForDependency');

    await h.admin.seedHost(late);
    await waitFor(
      'anno-2 annotated',
      async () => (await annotationsOf('anno-2'))['midonet.org/host-id'] === late.id,
      60_000,
    );
    const annotations = {
      'midonet.org/host-id': late.id,
      'midonet.org/tunnel-endpoint-ip': '192.0.2.202',
      'midonet.org/tunnel-zone-id': '',
    };
    expect(await midonetAnnotations('anno-2')).toEqual(annotations);
    await expectPodPushed(onAnno2, { ...anno2, metadata: { ...anno2.metadata, annotations } });
  });
});

describe('Endpoints without their Service', () => {
  const { service, endpoints } = sampleCluster();
  const lone = {
    service: {
      ...service,
      metadata: { ...service.metadata, name: 'lone' },
      spec: { ...service.spec, clusterIP: '10.0.0.30' },
    },
    endpoints: { ...endpoints, metadata: { ...endpoints.metadata, name: 'lone' } },
  };
  const ref = { kind: 'Endpoints' as const, namespace: 'default', name: 'lone' };

  /** How many times its workflow translated it (one syncObject marker each). */
  const syncs = async () => {
    const history = await h.client.workflow.getHandle(workflowId(ref)).fetchHistory();
    return (history.events ?? []).filter((e) =>
      Object.values(e.markerRecordedEventAttributes?.details ?? {})
        .flatMap((p) => p.payloads ?? [])
        .some((p) =>
          Buffer.from(p.data ?? [])
            .toString()
            .includes('"syncObject"'),
        ),
    ).length;
  };

  it('are left alone until the Service comes (no polling, one Event), then translated at once', async () => {
    await createEndpoints(h, lone.endpoints);
    await waitForState(h, ref, 'waitingForDependency');
    // Before, it looked again every 5 s, with an Event each time.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(await syncs()).toBe(1);
    const waits = (await eventsAbout(h, 'Endpoints', 'lone')).filter((e) => e.reason === 'WaitingForDependency');
    expect(waits.map((e) => [e.message, e.count])).toEqual([['Service default/lone does not exist (yet)', 1]]);

    const created = Date.now();
    await createService(h, lone.service);
    await waitFor('the Endpoints translated', async () => (await stateOf(h, ref)).state === 'ready', 30_000);
    // At once: told by the Service, not found by a timer (the drift check's is 30 minutes).
    expect(Date.now() - created).toBeLessThan(15_000);
  });
});
