// Each invariant check fails on a hand-made inconsistent state, and all of them pass on a consistent one: the sample
// cluster (2 Nodes, 3 Pods, a Service and its Endpoints), a peer pod and a hand-written Translation pushed into the
// in-process MidoNet emulator by the real client, recorded as the pusher records it.
import type * as k8s from '@kubernetes/client-node';
import { translationOwner } from '../../model/translation/model';
import { createMidonetClient } from '../../activities/midonet';
import { identify } from '../../activities/midonet/client';
import { EmulatorAdmin, startMidonetEmulator, type MidonetEmulator, type StateDump } from '../../deploy/local/midonet';
import { workflowId, type ObjectRef } from '../../model/naming';
import { sampleCluster, sampleClusterTranslations } from '../../model/translation/sample-cluster';
import type { Translation } from '../../model/translation/types';
import {
  checkAll,
  checkFinalizers,
  checkMidonet,
  expectedTranslations,
  checkPeerPods,
  checkStatus,
  checkWorkflows,
  type Snapshot,
  type TranslationObject,
  type Violation,
} from './invariants';
import { handWritten, HAND_WRITTEN_LABEL, PEER_POD_RUNTIME_CLASS } from './ops';

const cluster = sampleCluster();
const handWrittenSpec = {
  kind: 'Translation' as const,
  name: 'hw-0',
  finalizer: true,
  resources: [{ kind: 'Bridge' as const, id: 'c4a05001-0000-4000-8000-000000000001', name: 'hw-0-1' }],
};
const meta = (name: string, uid: string, namespace = ''): k8s.V1ObjectMeta & { name: string; namespace: string } => ({
  name,
  uid,
  namespace,
  generation: 1,
});

let emulator: MidonetEmulator;
let consistent: Snapshot;

/** A Translation as the API server holds it once pushed: Ready, every resource recorded as synced. */
function pushed(t: Translation, labels: Record<string, string> = {}): TranslationObject {
  return {
    metadata: {
      name: t.name,
      namespace: t.namespace,
      uid: `uid-${t.name}`,
      generation: 1,
      labels: { ...t.labels, ...labels },
      ownerReferences: t.ownerReferences,
      finalizers: t.finalizers,
    },
    resources: t.resources,
    status: {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Synced', message: '', observedGeneration: 1 }],
      childResources: t.resources.map((r) => ({ kind: r.kind, id: identify(r).id, state: 'synced' })),
    },
  };
}

beforeAll(async () => {
  emulator = await startMidonetEmulator({ port: 0 });
  const admin = new EmulatorAdmin(emulator.adminUrl);
  for (const host of cluster.hosts) await admin.seedHost(host);
  const midonet = createMidonetClient({ baseUrl: emulator.url, username: 'admin', password: 'secret' });
  const hand = handWritten(handWrittenSpec, cluster.tenant);
  const translations = [...sampleClusterTranslations(cluster), hand];
  for (const r of translations.flatMap((t) => t.resources)) await midonet.ensure(r);
  const peerPod: k8s.V1Pod = {
    metadata: meta('pp-0', 'uid-pp-0', 'default'),
    spec: { runtimeClassName: PEER_POD_RUNTIME_CLASS, containers: [] },
  };
  const pods: k8s.V1Pod[] = [
    ...cluster.pods.map((p) => ({
      metadata: { ...meta(p.metadata.name, p.metadata.uid, 'default'), annotations: p.metadata.annotations },
      spec: { ...p.spec, containers: [] },
      status: p.status,
    })),
    peerPod,
  ];
  const objects: ObjectRef[] = [
    ...cluster.nodes.map((n) => ({ kind: 'Node' as const, name: n.metadata.name })),
    ...pods.map((p) => ({ kind: 'Pod' as const, namespace: 'default', name: p.metadata!.name! })),
    { kind: 'PeerPod', namespace: 'default', name: 'pp-0' },
    { kind: 'Service', namespace: 'default', name: 'web' },
    { kind: 'Endpoints', namespace: 'default', name: 'web' },
    // Only the Translations no object owns have workflows of their own.
    ...translations
      .filter((t) => !translationOwner(t))
      .map((t) => ({ kind: 'Translation' as const, namespace: t.namespace, name: t.name })),
  ];
  consistent = {
    tenant: cluster.tenant,
    hosts: cluster.hosts,
    peerPodRuntimeClasses: [PEER_POD_RUNTIME_CLASS],
    nodes: cluster.nodes.map((n) => ({
      metadata: { ...meta(n.metadata.name, n.metadata.uid), annotations: n.metadata.annotations },
      spec: n.spec,
      status: n.status,
    })),
    pods,
    services: [{ metadata: meta('web', cluster.service.metadata.uid, 'default'), spec: cluster.service.spec }],
    endpoints: [
      { metadata: meta('web', cluster.endpoints.metadata.uid, 'default'), subsets: cluster.endpoints.subsets },
    ],
    translations: [
      ...sampleClusterTranslations(cluster).map((t) => pushed(t)),
      pushed(hand, { [HAND_WRITTEN_LABEL]: 'true' }),
    ],
    peerPods: [
      {
        metadata: {
          ...meta('pp-0', 'uid-peerpod', 'default'),
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'pp-0', uid: 'uid-pp-0' }],
        },
        spec: { instanceID: 'vm-1' },
      },
    ],
    emulator: await admin.dump(),
    vms: [
      { instanceId: 'vm-1', name: 'podvm-pp-0-uidpp0', podUid: 'uid-pp-0', podNamespace: 'default', podName: 'pp-0' },
    ],
    runningWorkflows: ['global/midonet', ...objects.map((ref) => workflowId(ref))],
  };
});
afterAll(() => emulator?.close());

/** The snapshot, changed by `edit` on a deep copy. */
function broken(edit: (s: Snapshot) => void): Snapshot {
  const copy = structuredClone(consistent);
  edit(copy);
  return copy;
}
const removeEntry = (dump: StateDump, kind: keyof StateDump, match: (e: Record<string, unknown>) => boolean) => {
  const before = dump[kind].length;
  dump[kind] = dump[kind].filter((e) => !match(e));
  expect(dump[kind].length).toBe(before - 1);
};
const summary = (violations: Violation[]) => violations.map((v) => `${v.invariant} | ${v.object} | ${v.detail}`);
const podPort = () =>
  JSON.parse(
    sampleClusterTranslations(cluster).find((t) => t.ownerReferences[0]?.name === 'nginx')!.resources[0]!.body,
  ) as { id: string };

describe('chaos invariants', () => {
  it('hold on a consistent state (no check reports what is not there)', () => {
    expect(summary(checkAll(consistent))).toEqual([]);
  });

  const cases: { what: string; check: (s: Snapshot) => Violation[]; edit: (s: Snapshot) => void; expected: RegExp }[] =
    [
      {
        what: 'midonet: a resource of a live Pod missing from MidoNet',
        check: (s) => checkMidonet(s),
        edit: (s) => removeEntry(s.emulator, 'Port', (e) => e.id === podPort().id),
        expected: /midonet \| Pod default\/nginx \| missing from MidoNet: Port /,
      },
      {
        what: 'midonet: a bridge no live object or Translation accounts for (orphaned)',
        check: (s) => checkMidonet(s),
        edit: (s) => s.emulator.Bridge.push({ id: 'c4a05001-0000-4000-8000-0000000000ff', name: 'leaked' }),
        expected:
          /midonet \| Bridge c4a05001-0000-4000-8000-0000000000ff \| orphaned in MidoNet: Bridge c4a05001-0000-4000-8000-0000000000ff, listed by no Translation/,
      },
      {
        what: "midonet: a deleted Pod's resources left behind, named after the Pod by the attribution",
        check: (s) => checkMidonet(s, new Map([[`Port ${podPort().id}`, 'Pod default/nginx']])),
        edit: (s) => (s.pods = s.pods.filter((p) => p.metadata?.name !== 'nginx')),
        expected: /midonet \| Pod default\/nginx \| orphaned in MidoNet: Port /,
      },
      {
        what: 'midonet: the same binding twice (a duplicate)',
        check: (s) => checkMidonet(s),
        edit: (s) => s.emulator.HostInterfacePort.push({ ...s.emulator.HostInterfacePort[0] }),
        expected: /midonet \| .* \| 2 copies in MidoNet: HostInterfacePort /,
      },
      {
        what: "midonet: a hand-written Translation's bridge missing",
        check: (s) => checkMidonet(s),
        edit: (s) => removeEntry(s.emulator, 'Bridge', (e) => e.id === handWrittenSpec.resources[0]!.id),
        expected: /midonet \| Translation default\/hw-0 \| missing from MidoNet: Bridge/,
      },
      {
        what: 'peer-pods: a live peer pod without a VM',
        check: checkPeerPods,
        edit: (s) => (s.vms = []),
        expected: /peer-pods \| Pod default\/pp-0 \| 0 VMs \(none\), expected 1/,
      },
      {
        what: 'peer-pods: a peer pod with two VMs',
        check: checkPeerPods,
        edit: (s) => s.vms!.push({ instanceId: 'vm-2', name: 'podvm-pp-0-again', podUid: 'uid-pp-0' }),
        expected: /peer-pods \| Pod default\/pp-0 \| 2 VMs/,
      },
      {
        what: 'peer-pods: a VM whose Pod is gone',
        check: checkPeerPods,
        edit: (s) =>
          s.vms!.push({
            instanceId: 'vm-3',
            name: 'podvm-old-1234',
            podUid: 'uid-old',
            podNamespace: 'default',
            podName: 'old',
          }),
        expected: /peer-pods \| Pod default\/old \| VM podvm-old-1234 of pod UID uid-old has no live Pod/,
      },
      {
        what: 'finalizers: a deleted Translation still held by its finalizer',
        check: checkFinalizers,
        edit: (s) =>
          (s.translations.find((t) => t.metadata.name === 'hw-0')!.metadata.deletionTimestamp = new Date(
            '2026-01-01T00:00:00Z',
          )),
        expected:
          /finalizers \| Translation default\/hw-0 \| deleted at 2026-01-01T00:00:00.000Z, still held by midonet.org\/deleter/,
      },
      {
        what: 'finalizers: a deleted Node held by the referrers finalizer',
        check: checkFinalizers,
        edit: (s) =>
          Object.assign(s.nodes[0]!.metadata!, {
            deletionTimestamp: new Date(),
            finalizers: ['steward.midonet.org/referrers'],
          }),
        expected: /finalizers \| Node node1 \| .*steward.midonet.org\/referrers/,
      },
      {
        what: 'workflows: the workflow of a deleted Pod still running',
        check: checkWorkflows,
        edit: (s) => s.runningWorkflows.push('pod/default/gone'),
        expected: /workflows \| Pod default\/gone \| workflow pod\/default\/gone still running, its object is gone/,
      },
      {
        what: 'workflows: a live Service without its workflow (level-triggered)',
        check: checkWorkflows,
        edit: (s) => (s.runningWorkflows = s.runningWorkflows.filter((id) => id !== 'service/default/web')),
        expected: /workflows \| Service default\/web \| live object without a running workflow service\/default\/web/,
      },
      {
        what: 'workflows: a live peer pod without its peer-pod workflow',
        check: checkWorkflows,
        edit: (s) => (s.runningWorkflows = s.runningWorkflows.filter((id) => id !== 'peerpod/default/pp-0')),
        expected: /workflows \| PeerPod default\/pp-0 \| live object without a running workflow/,
      },
      {
        what: 'status: Ready=True while MidoNet lacks a resource the Translation lists (and it records as synced)',
        check: checkStatus,
        edit: (s) => removeEntry(s.emulator, 'Bridge', (e) => e.id === handWrittenSpec.resources[0]!.id),
        expected: /status \| Translation default\/hw-0 \| Ready=True but MidoNet lacks 1 of its 1 resources/,
      },
      {
        what: 'status: Ready=True about an older generation',
        check: checkStatus,
        edit: (s) => (s.translations.find((t) => t.metadata.name === 'hw-0')!.metadata.generation = 2),
        expected: /status \| Translation default\/hw-0 \| Ready=True is about generation 1, the spec is at 2/,
      },
      {
        what: 'status: Ready=True with an empty record (the record behind the backend)',
        check: checkStatus,
        edit: (s) => (s.translations.find((t) => t.metadata.name === 'hw-0')!.status!.childResources = []),
        expected: /status \| Translation default\/hw-0 \| Ready=True but status.childResources does not record 1/,
      },
      {
        what: 'status: Ready=False although MidoNet holds everything',
        check: checkStatus,
        edit: (s) =>
          (s.translations.find((t) => t.metadata.name === 'hw-0')!.status!.conditions = [
            { type: 'Ready', status: 'False', reason: 'Stuck', message: 'gave up' },
          ]),
        expected: /status \| Translation default\/hw-0 \| Ready=False \(Stuck: gave up\) though MidoNet holds all 1/,
      },
      {
        what: 'status: one bridge recorded as synced by two Translations (one owner per resource)',
        check: checkStatus,
        edit: (s) => {
          const other = structuredClone(s.translations.find((t) => t.metadata.name === 'hw-0')!);
          other.metadata.name = 'hw-1';
          s.translations.push(other);
        },
        expected:
          /status \| Translation default\/hw-0 \| Bridge c4a05001-0000-4000-8000-000000000001 recorded as synced by 2 Translations: Translation default\/hw-0, Translation default\/hw-1/,
      },
    ];
  it.each(cases)('$what', ({ check, edit, expected }) => {
    expect(summary(check(consistent))).toEqual([]);
    expect(summary(check(broken(edit)))).toEqual(expect.arrayContaining([expect.stringMatching(expected)]));
  });
  it('midonet: Endpoints naming a port their Service lacks can never be pushed (as in MK): excused only while the Translation says MidonetDependencyMissing', () => {
    const withAdminPort = (s: Snapshot) =>
      s.endpoints[0]!.subsets![0]!.ports!.push({ name: 'admin', port: 9999, protocol: 'TCP' });
    const silent = summary(checkMidonet(broken(withAdminPort)));
    expect(silent).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /missing from MidoNet: Rule .* \(its Translation default\/endpoints-port\.4\.web-admin-.* needs .*, which no live object makes, yet says nothing\)/,
        ),
      ]),
    );
    const told = broken((s) => {
      withAdminPort(s);
      const admin = expectedTranslations(s)
        .flatMap((o) => o.translations)
        .filter((t) => t.name.includes('-admin-'));
      expect(admin).toHaveLength(2); // one per endpoint address
      for (const t of admin) {
        const object = pushed(t);
        object.status!.conditions = [
          {
            type: 'Ready',
            status: 'False',
            reason: 'MidonetDependencyMissing',
            message: 'no chain',
            observedGeneration: 1,
          },
        ];
        object.status!.childResources = [];
        s.translations.push(object);
      }
    });
    expect(summary(checkMidonet(told))).toEqual([]);
  });
});
