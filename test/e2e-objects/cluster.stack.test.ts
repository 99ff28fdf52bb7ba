// The object lifecycles end to end: Nodes, Pods, a Service and its Endpoints created, changed and deleted in the real
// API server; the real starter signals their workflows, which write their Translations and push them into the MidoNet
// emulator themselves, and on deletion delete what they pushed and the Translations.
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import type { temporal } from '@temporalio/proto';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordHistory } from '../replay/record';
import { observationsIn, startTestStarter } from '../support';
import { loadKubeConfig } from '../../platform/kubernetes/kubeconfig';
import { observedSignal } from '../../model/messages';
import { TASK_QUEUE, workflowId, type ObjectRef } from '../../model/naming';
import { K8sUID } from '../../model/search-attributes';
import { sampleCluster, sampleClusterTranslations, type SampleCluster } from '../../model/translation/sample-cluster';
import type { Translation } from '../../model/translation/types';
import {
  createEndpoints,
  createNode,
  createPod,
  createService,
  deletePod,
  emulatorIds,
  eventsAbout,
  expectedIds,
  isReady,
  listTranslations,
  objectsHarnessForFile,
  readTranslation,
  readyOf,
  referrersOf,
  stateOf,
  translationsOfOthers,
  TRANSLATIONS,
  type TranslationObject,
  uiDetailsOf,
  waitFor,
  waitForReady,
  waitForState,
} from '../support/objects-harness';
import { identify } from '../../model/translation/types';

// The embedded API server allocates ClusterIPs from 10.0.0.0/24; the sample's 10.96.0.20 is outside it.
const base = sampleCluster();
const initial: SampleCluster = {
  ...base,
  service: { ...base.service, spec: { ...base.service.spec, clusterIP: '10.0.0.20' } },
};
const sampleRefs: ObjectRef[] = [
  { kind: 'Service', namespace: 'default', name: 'web' },
  { kind: 'Endpoints', namespace: 'default', name: 'web' },
];

// Its own stack: its starter watches every object in the cluster and the test compares all that MidoNet holds.
const h = objectsHarnessForFile({ hosts: base.hosts, identity: 'e2e-objects' });
let others: Translation[];
beforeAll(async () => {
  others = await translationsOfOthers(h, sampleRefs);
});

const key = (t: { namespace: string; name: string }) => `${t.namespace}/${t.name}`;
const liveKey = (t: { metadata: { namespace: string; name: string } }) => key(t.metadata);
const podRef = (name: string): ObjectRef => ({ kind: 'Pod', namespace: 'default', name });
const ownedBy = (translations: Translation[], kind: string, name: string) =>
  translations.filter((t) => t.ownerReferences[0]?.kind === kind && t.ownerReferences[0]?.name === name);

/** What the cluster must look like: Translation names in the API server, and the emulator's content. */
function expectationsOf(cluster: SampleCluster) {
  const translations = [...sampleClusterTranslations(cluster), ...others];
  return { translations, names: translations.map(key).sort(), ids: expectedIds(translations, cluster.hosts) };
}

/** Waits until the API server and the emulator hold exactly what `cluster` translates to, every Translation Ready. */
async function converged(cluster: SampleCluster, timeoutMs = 120_000): Promise<void> {
  const wanted = expectationsOf(cluster);
  const matches = async () => {
    const live = await listTranslations(h);
    return (
      JSON.stringify(live.map(liveKey).sort()) === JSON.stringify(wanted.names) &&
      live.every(readyOf) &&
      JSON.stringify(sortedKeys(await emulatorIds(h))) === JSON.stringify(sortedKeys(wanted.ids))
    );
  };
  // On a timeout the assertions below show the difference.
  await waitFor('the cluster to converge', matches, timeoutMs).catch(() => undefined);
  const live = await listTranslations(h);
  expect(live.map(liveKey).sort()).toEqual(wanted.names);
  expect(await emulatorIds(h)).toEqual(sortedKeys(wanted.ids));
  expect(live.filter((t) => !readyOf(t)).map(liveKey)).toEqual([]);
}
const sortedKeys = (o: Record<string, string[]>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

/** Activity types a workflow ran, in order: regular ones by their scheduling, local ones by their marker. */
async function activitiesRun(id: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(id).fetchHistory();
  return (history.events ?? []).flatMap((e: temporal.api.history.v1.IHistoryEvent) => {
    const scheduled = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (scheduled) return [scheduled];
    const payloads = Object.values(e.markerRecordedEventAttributes?.details ?? {}).flatMap((p) => p.payloads ?? []);
    return payloads.flatMap(
      (p) => /"activity_type"\s*:\s*"(\w+)"/.exec(Buffer.from(p.data ?? []).toString())?.[1] ?? [],
    );
  });
}

describe('object lifecycles on the embedded stack', () => {
  let cluster = initial;

  it('2 Nodes, 3 Pods, a Service with 2 ports and its Endpoints give exactly the expected MidoNet resources, each Translation Ready, each workflow ready', async () => {
    for (const node of cluster.nodes) await createNode(h, node);
    for (const pod of cluster.pods) await createPod(h, pod);
    await createService(h, cluster.service);
    await createEndpoints(h, cluster.endpoints);

    await converged(cluster);
    for (const node of cluster.nodes)
      expect((await waitForState(h, { kind: 'Node', name: node.metadata.name }, 'ready')).state).toBe('ready');
    for (const pod of cluster.pods)
      expect((await waitForState(h, podRef(pod.metadata.name), 'ready')).state).toBe('ready');
    for (const ref of sampleRefs) expect((await waitForState(h, ref, 'ready')).state).toBe('ready');
  });

  it("each object's Temporal UI page shows its state, its Translations and, by id, the MidoNet resources they hold", async () => {
    const objects: [ObjectRef, string][] = [
      [podRef('nginx'), 'Pod'],
      [{ kind: 'Node', name: 'node1' }, 'Node'],
    ];
    for (const [ref, kind] of objects) {
      const details = await uiDetailsOf(h, ref);
      expect(details).toMatch(/^\*\*State:\*\* ready\n/);
      const owned = (await listTranslations(h)).filter(
        (t) => t.metadata.ownerReferences?.[0]?.kind === kind && t.metadata.ownerReferences[0].name === ref.name,
      );
      expect(owned.length).toBeGreaterThan(0);
      for (const t of owned) {
        expect(details).toContain(`| Translation | \`${liveKey(t)}\` | applied |`);
        const held = t.status?.childResources ?? [];
        expect(held.length).toBeGreaterThan(0);
        for (const r of held) expect(details).toContain(`| ${r.kind} | \`${r.id}\` | synced |`);
      }
      expect(details).not.toContain("listed in the Translations' status");
    }
  });

  it("each Pod's workflow depends on its Node: the Node's referrers annotation lists exactly its Pods", async () => {
    expect(await referrersOf(h, 'node1')).toEqual(['Pod default/nginx', 'Pod default/web-0']);
    expect(await referrersOf(h, 'node2')).toEqual(['Pod default/web-1']);
  });

  it('removing a port from the Service (and from its Endpoints, as the endpoints controller would) removes its Translations and its chain from the API server and the emulator', async () => {
    const before = expectationsOf(cluster);
    const endpointsSubsets = cluster.endpoints.subsets!.map((s) => ({
      ...s,
      ports: s.ports!.filter((p) => p.name === 'http'),
    }));
    cluster = {
      ...cluster,
      service: {
        ...cluster.service,
        spec: { ...cluster.service.spec, ports: cluster.service.spec.ports!.filter((p) => p.name === 'http') },
      },
      endpoints: { ...cluster.endpoints, subsets: endpointsSubsets },
    };
    const after = expectationsOf(cluster);
    const goneNames = before.names.filter((n) => !after.names.includes(n));
    const goneChains = before.ids.Chain!.filter((id) => !after.ids.Chain!.includes(id));
    // The syslog port's own Translation and chain, and its Endpoints' Translations.
    expect(goneNames.length).toBeGreaterThan(0);
    expect(goneChains.length).toBeGreaterThan(0);

    await h.core.patchNamespacedService(
      { namespace: 'default', name: 'web', body: { spec: { ports: cluster.service.spec.ports } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await h.core.patchNamespacedEndpoints(
      { namespace: 'default', name: 'web', body: { subsets: endpointsSubsets } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await converged(cluster);
    for (const name of goneNames)
      expect([name, await readTranslation(h, name.split('/')[0]!, name.split('/')[1]!)]).toEqual([name, undefined]);
    const chains = (await emulatorIds(h)).Chain ?? [];
    expect(goneChains.filter((id) => chains.includes(id))).toEqual([]);
  });

  it("deleting a Pod removes its port and binding from the emulator, and the Pod's own workflow deletes them, then lets its Translations go; its Node no longer lists it", async () => {
    const translations = ownedBy(expectationsOf(cluster).translations, 'Pod', 'nginx');
    expect(translations.map((t) => t.resources[0]!.kind)).toEqual(['Port', 'MACPort', 'IPv4MACPair']);
    await deletePod(h, 'default', 'nginx');
    cluster = { ...cluster, pods: cluster.pods.filter((p) => p.metadata.name !== 'nginx') };

    await converged(cluster);
    for (const t of translations) {
      expect([t.name, await readTranslation(h, t.namespace, t.name)]).toEqual([t.name, undefined]);
      // One workflow per object: no Translation of the Pod ever had one of its own.
      const id = workflowId({ kind: 'Translation', namespace: t.namespace, name: t.name });
      await expect(h.client.workflow.getHandle(id).describe()).rejects.toThrow(/not found/i);
    }
    // Pushed with the apply (after waiting for its Node), deleted with the finalization: one local activity each.
    await h.client.workflow.getHandle(workflowId(podRef('nginx'))).result();
    const run = await activitiesRun(workflowId(podRef('nginx')));
    // Its deletion proven by the API server in the finalization itself (a gone is not believed on its word).
    expect([...new Set(run.slice(0, -1))]).toEqual(['syncObject']);
    expect(run.at(-1)).toBe('finalizeObject');
    expect(await referrersOf(h, 'node1')).toEqual(['Pod default/web-0']);
    expect((await waitForState(h, podRef('nginx'), 'done')).state).toBe('done');
    await recordHistory(h.client, workflowId(podRef('nginx')), 'object-pod-deleted');
    await recordHistory(h.client, workflowId({ kind: 'Node', name: 'node1' }), 'object-node-ready');
  });

  it('a Pod deleted and created again under the same name ends with exactly one port and one Translation, owned by the new Pod', async () => {
    const old = await h.core.readNamespacedPod({ namespace: 'default', name: 'web-0' });
    await deletePod(h, 'default', 'web-0');
    const created = await createPod(h, cluster.pods.find((p) => p.metadata.name === 'web-0')!);
    expect(created.metadata?.uid).not.toBe(old.metadata?.uid);

    // Until the old Translation is finalized the cluster looks converged already: wait for the new owner first.
    await waitFor('the Translation of the new web-0', async () => {
      const owned = (await listTranslations(h, 'default')).filter(
        (t) => t.metadata.ownerReferences?.[0]?.name === 'web-0',
      );
      return owned.some((t) => t.metadata.ownerReferences?.[0]?.uid === created.metadata?.uid && readyOf(t));
    });
    await converged(cluster);
    const owned = (await listTranslations(h, 'default')).filter(
      (t) => t.metadata.ownerReferences?.[0]?.name === 'web-0',
    );
    expect(owned.map((t) => [t.metadata.ownerReferences?.[0]?.uid, readyOf(t)])).toEqual([
      [created.metadata?.uid, true],
    ]);
    expect(await referrersOf(h, 'node1')).toEqual(['Pod default/web-0']);
    // Found in the Temporal UI under the new incarnation's UID (the workflow id stays the same).
    const described = await h.client.workflow.getHandle(workflowId(podRef('web-0'))).describe();
    expect(described.typedSearchAttributes.get(K8sUID)).toBe(created.metadata?.uid);

    // Incarnations are proven by the API server: an observation of the old UID (stale) or of a made-up one is
    // checked against it and dropped; the live Pod keeps its port and its Translation.
    const id = workflowId(podRef('web-0'));
    const handle = h.client.workflow.getHandle(id);
    const latest = observationsIn(await handle.fetchHistory()).at(-1)!;
    expect(latest.uid).toBe(created.metadata?.uid);
    for (const uid of [old.metadata!.uid!, randomUUID()]) await handle.signal(observedSignal, { ...latest, uid });
    await waitFor('both claims checked', async () =>
      (await activitiesRun(id)).filter((type) => type === 'readIncarnation').length === 2 ? true : undefined,
    );
    const view = await waitForState(h, podRef('web-0'), 'ready');
    expect(view.uid).toBe(created.metadata?.uid);
    await converged(cluster);
  });

  // A regression test: the Node's referrers finalizer keeps the list readable while it is deleted, its workflow tells
  // the Pods, and they push again once the new Node (another UID) is there.
  it("a Node deleted and created again (its bridge re-created) gets its Pods' ports back on the new bridge", async () => {
    const node2 = cluster.nodes.find((n) => n.metadata.name === 'node2')!;
    // web-1 and 20 more Pods on node2, so that one DELETE cascades many ports away.
    const web1 = cluster.pods.find((p) => p.metadata.name === 'web-1')!;
    const more = Array.from({ length: 20 }, (_, i) => ({
      ...web1,
      metadata: { ...web1.metadata, name: `more-${i}`, uid: randomUUID() },
      status: { ...web1.status, podIP: `10.1.2.${20 + i}` },
    }));
    for (const pod of more) await createPod(h, pod);
    cluster = { ...cluster, pods: [...cluster.pods, ...more] };
    await converged(cluster);

    const nodeTranslations = ownedBy(expectationsOf(cluster).translations, 'Node', 'node2');
    const podTranslations = [web1, ...more].flatMap((p) =>
      ownedBy(expectationsOf(cluster).translations, 'Pod', p.metadata.name),
    );
    const portIds = podTranslations
      .filter((t) => t.resources[0]!.kind === 'Port')
      .map((t) => (JSON.parse(t.resources[0]!.body) as { id: string }).id);
    expect(portIds).toHaveLength(21);
    await h.core.deleteNode({ name: 'node2' });
    // The bridge's DELETE takes the 21 ports with it: their Translations say so within 2 s of the cascade.
    const notReady = await waitFor(
      "the Pods' Translations not Ready",
      async () => {
        const live = await Promise.all(podTranslations.map((t) => readTranslation(h, t.namespace, t.name)));
        return live.every((t) => t !== undefined && !readyOf(t)) ? { at: Date.now(), live } : undefined;
      },
      30_000,
      50,
    );
    for (const t of notReady.live) {
      const ready = t?.status?.conditions?.find((c) => c.type === 'Ready');
      expect([ready?.reason, ready?.message?.includes('node2')]).toEqual(['WaitingForDependency', true]);
    }
    // Each port goes with the bridge's cascading DELETE, or first by its own when its Pod, told before the bridge
    // goes, is faster (a busy machine): either way its Translation says so within 2 s of the last removal.
    // The Translations may say so before the removals land (the Pods learn of the Node's deletion from the starter
    // too): then the bound holds all the more.
    const { journal, removedAt } = await waitFor(
      'every port removed',
      async () => {
        const journal = await h.admin.journal();
        const removedAt = portIds.map(
          (id) =>
            journal.find(
              (e) =>
                e.method === 'DELETE' &&
                e.status < 300 &&
                (e.path.includes(id) || e.cascaded?.some((c) => c.includes(id))),
            )?.answeredAt,
        );
        return removedAt.every((at) => at !== undefined) ? { journal, removedAt } : undefined;
      },
      30_000,
    );
    const lastRemoval = Math.max(...removedAt);
    const cascaded = portIds.filter((id) =>
      journal.some((e) => e.method === 'DELETE' && e.cascaded?.some((c) => c.includes(id))),
    ).length;
    console.log(
      `21 ports removed (${cascaded} by the bridge's cascade) → their Translations not Ready: ${notReady.at - lastRemoval} ms after the last removal`,
    );
    expect(notReady.at - lastRemoval).toBeLessThanOrEqual(2_000);
    // Its workflow deletes its Translations first, then tells its Pods and lets the Node go.
    await waitFor('node2 Translations gone', async () =>
      (await Promise.all(nodeTranslations.map((t) => readTranslation(h, t.namespace, t.name)))).every(
        (t) => t === undefined,
      ),
    );
    await waitFor('node2 gone', async () =>
      h.core.readNode({ name: 'node2' }).then(
        () => false,
        () => true,
      ),
    );
    await createNode(h, node2);

    await converged(cluster);
    expect((await waitForState(h, podRef('web-1'), 'ready')).state).toBe('ready');
  });

  // A missing annotation is the node annotator's to fill (midonet-kubernetes-controllers.stack.test.ts); one set by
  // hand is never overwritten, so a value that does not parse stays the Node's own error.
  it.each([
    ['midonet.org/host-id', 'node3', '10.1.3.0/24', 'node3-host'],
    ['midonet.org/tunnel-endpoint-ip', 'node4', '10.1.4.0/24', '192.0.2.300'],
  ])(
    'a Node whose %s annotation does not parse is invalid: its workflow names the Node and the field, and a Warning Event is on the Node',
    async (annotation, name, podCIDR, value) => {
      const node2 = cluster.nodes.find((n) => n.metadata.name === 'node2')!;
      const annotations = { ...node2.metadata.annotations, [annotation]: value };
      await createNode(h, {
        ...node2,
        metadata: { ...node2.metadata, name, annotations },
        spec: { podCIDR },
      });

      const view = await waitForState(h, { kind: 'Node', name }, 'invalid');
      expect(view.lastError?.message).toContain(`Node ${name}`);
      expect(view.lastError?.message).toContain(`metadata.annotations["${annotation}"]`);
      const events = await waitFor(`a Warning Event on ${name}`, async () => {
        const found = (await eventsAbout(h, 'Node', name)).filter((e) => e.type === 'Warning');
        return found.length ? found : undefined;
      });
      expect(events[0]!.message).toContain(`metadata.annotations["${annotation}"]`);
      await h.core.deleteNode({ name });
    },
  );

  it('a Pod on a Node that does not exist waits, and an Event on the Pod says for what', async () => {
    const web0 = cluster.pods.find((p) => p.metadata.name === 'web-0')!;
    const name = 'early-0';
    await createPod(h, {
      ...web0,
      metadata: { ...web0.metadata, name, annotations: {} },
      spec: { ...web0.spec, nodeName: 'node9' },
    });
    await waitForState(h, podRef(name), 'waitingForDependency');
    const events = await waitFor('an Event on the waiting Pod', async () => {
      const found = await eventsAbout(h, 'Pod', name);
      return found.length ? found : undefined;
    });
    expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Normal', 'WaitingForDependency', 'Node node9 does not exist (yet)'],
    ]);
    // Its page in the Temporal UI says so too.
    expect(await uiDetailsOf(h, podRef(name))).toContain(
      '**State:** waitingForDependency\n\n**Last error:** WaitingForDependency: Node node9 does not exist (yet)',
    );

    // A forged "gone" (issue 43): the Pod's real UID, sent straight to its workflow by whoever has Temporal access. It
    // is believed only when the API server confirms it: the Pod lives, so its workflow keeps waiting for its Node.
    const id = workflowId(podRef(name));
    const handle = h.client.workflow.getHandle(id);
    const latest = observationsIn(await handle.fetchHistory()).at(-1)!;
    await handle.signal(observedSignal, { ...latest, gone: true });
    // Its finalization reads the Pod first, finds it live, and does nothing: the object decides again.
    const run = await waitFor('the claim taken', async () => {
      const types = await activitiesRun(id);
      return types.includes('finalizeObject') && types.at(-1) === 'syncObject' ? types : undefined;
    });
    expect(run.filter((type) => type === 'finalizeObject')).toHaveLength(1);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect((await waitForState(h, podRef(name), 'waitingForDependency')).state).toBe('waitingForDependency');
    expect(await uiDetailsOf(h, podRef(name))).toContain('**State:** waitingForDependency');

    // Its real deletion is proven the same way, and ends it.
    await deletePod(h, web0.metadata.namespace, name);
    await handle.result();
    expect((await activitiesRun(id)).filter((type) => type === 'finalizeObject')).toHaveLength(2);
  });

  it("a Pod stuck on MidoNet's errors is pushed at once when its Node changes (the Node tells its referrers): its hour-long retry timer is not waited for", async () => {
    const web0 = cluster.pods.find((p) => p.metadata.name === 'web-0')!;
    const name = 'stuck-0';
    const ref = podRef(name);
    const nodeName = web0.spec.nodeName!;
    // MidoNet's own answer (not down: its return wakes nothing), to every port's creation.
    const failing = await h.admin.injectFault({
      method: 'POST',
      path: '/bridges/*/ports',
      action: 'error',
      status: 500,
    });
    // Started ahead of the starter with an hour-long stuck retry: only a wake moves it on here.
    await h.client.workflow.start('podLifecycle', {
      workflowId: workflowId(ref),
      taskQueue: TASK_QUEUE,
      args: [{ ref, timings: { stuckRetryMs: 60 * 60_000 } }],
    });
    await createPod(h, {
      ...web0,
      metadata: { ...web0.metadata, name, uid: randomUUID(), annotations: {} },
      status: { ...web0.status, podIP: '10.1.1.40' },
    });
    await waitForState(h, ref, 'stuck', 120_000);
    expect(await referrersOf(h, nodeName)).toContain(`Pod default/${name}`);
    await h.admin.removeFault(failing.id);

    // node1 gets another address: its Translations change, so it tells the Pods that depend on it.
    const node = await h.core.readNode({ name: nodeName });
    const addresses = node.status?.addresses ?? [];
    const changed = Date.now();
    await h.core.patchNodeStatus(
      {
        name: nodeName,
        body: { status: { addresses: [...addresses, { type: 'ExternalIP', address: '198.51.100.40' }] } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const view = await waitForState(h, ref, 'ready', 30_000);
    console.log(`its Node changed: the stuck Pod ready after ${Date.now() - changed} ms (its retry timer: 1 h)`);
    expect(view.lastError).toBeUndefined();

    await deletePod(h, web0.metadata.namespace, name);
    await h.core.patchNodeStatus(
      { name: nodeName, body: { status: { addresses } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  });

  it('the IDs Steward derives for a Pod are its own: a hand-written Translation in another namespace that pushed them first yields them when the Pod appears, with an Event on both', async () => {
    const web0 = cluster.pods.find((p) => p.metadata.name === 'web-0')!;
    const name = 'squatted-0';
    const pod = {
      ...web0,
      metadata: { ...web0.metadata, name, annotations: {} },
      status: { ...web0.status, podIP: '10.1.1.50' },
    };
    const derived = sampleClusterTranslations({ ...cluster, pods: [pod] }).find(
      (t) => t.ownerReferences[0]?.name === name,
    )!;
    const ports = derived.resources.filter((r) => r.kind === 'Port').map((r) => identify(r).id);
    expect(ports).toHaveLength(1);
    // Whoever may write a Translation in any namespace: the Pod's port, pushed before the Pod exists.
    await h.core.createNamespace({ body: { metadata: { name: 'squat' } } });
    await h.custom.createNamespacedCustomObject({
      ...TRANSLATIONS,
      namespace: 'squat',
      body: {
        apiVersion: `${TRANSLATIONS.group}/${TRANSLATIONS.version}`,
        kind: 'Translation',
        metadata: { name: 'squatter', namespace: 'squat' },
        resources: derived.resources,
      },
    });
    await waitFor('the squatter Ready', () => isReady(h, 'squat', 'squatter'));
    expect((await emulatorIds(h)).Port).toContain(ports[0]);
    // In place for a while, as a squatter is: every worker's watch of the Translations has its record.
    await sleep(3_000);

    await createPod(h, pod);
    // Its own Translation takes the port over; the squatter is refused it, naming the Pod's Translation.
    const settled = await waitFor('the Pod ready or stuck', async () => {
      const view = await stateOf(h, podRef(name)).catch(() => undefined);
      return view && ['ready', 'stuck'].includes(view.state) ? view : undefined;
    });
    expect({ state: settled.state, lastError: settled.lastError }).toEqual({ state: 'ready', lastError: undefined });
    await waitForReady(h, 'its Translation', [derived]);
    const squatter = await waitFor('the squatter refused', async () => {
      const ready = (await readTranslation(h, 'squat', 'squatter'))?.status?.conditions?.find(
        (c) => c.type === 'Ready',
      );
      return ready?.reason === 'ResourceClaimed' ? ready : undefined;
    });
    expect(squatter.message).toContain(`owned by translation/default/${derived.name}`);
    const reasons = async (namespace: string, of: string) =>
      (await eventsAbout(h, 'Translation', of)).filter((e) => e.metadata?.namespace === namespace).map((e) => e.reason);
    expect(await reasons('default', derived.name)).toContain('ResourceTakenOver');
    expect(await reasons('squat', 'squatter')).toContain('ResourceYielded');

    // The squatter's deletion leaves the Pod's port; the Pod's takes it.
    await h.custom.deleteNamespacedCustomObject({ ...TRANSLATIONS, namespace: 'squat', name: 'squatter' });
    await waitFor('the squatter gone', async () =>
      (await readTranslation(h, 'squat', 'squatter')) ? undefined : true,
    );
    expect((await emulatorIds(h)).Port).toContain(ports[0]);
    await deletePod(h, 'default', name);
    await waitForState(h, podRef(name), 'done');
    expect((await emulatorIds(h)).Port ?? []).not.toContain(ports[0]);
    await h.core.deleteNamespace({ name: 'squat' });
    await converged(cluster);
  });

  // Chaos seed 82: a Pod's run failed (a nondeterminism error now fails it: worker/nondeterminism.stack.test.ts)
  // before it finalized, the Pod was deleted, and its Translations stayed held by midonet.org/deleter for good.
  it("Translations a Pod's ended run left held are let go at the starter's next repair by workflows of their own, whether or not a new Pod took the name", async () => {
    // With a MAC address, as nginx: a port, a MAC entry and an ARP entry, each its own Translation.
    const nginx = initial.pods.find((p) => p.metadata.name === 'nginx')!;
    const podAt = (name: string, last: number) => ({
      ...nginx,
      metadata: { ...nginx.metadata, name, annotations: { 'midonet.org/mac-address': `0a:58:0a:01:01:${last}` } },
      status: { ...nginx.status, podIP: `10.1.1.${last}` },
    });
    const names = ['orphan-0', 'orphan-1'];
    const first = await Promise.all(names.map((name, i) => createPod(h, podAt(name, 41 + i))));
    for (const name of names) await waitForState(h, podRef(name), 'ready');
    const ofUid = (uid: string | undefined) => listTranslations(h, 'default', `midonet.org/owner-uid=${uid}`);
    const left = (await Promise.all(first.map((pod) => ofUid(pod.metadata?.uid)))).flat();
    const kinds = (translations: TranslationObject[]) => translations.map((t) => t.metadata.name.split('.')[0]).sort();
    expect(kinds(left)).toEqual(['pod', 'pod', 'pod-arp', 'pod-arp', 'pod-mac', 'pod-mac']);

    // Their runs end as a failed one does: nothing of them runs any more.
    for (const name of names)
      await h.client.workflow.getHandle(workflowId(podRef(name))).terminate('as a nondeterminism error fails it');
    for (const name of names) await deletePod(h, 'default', name);
    await waitFor('the garbage collector to delete their Translations', async () => {
      const held = (await Promise.all(first.map((pod) => ofUid(pod.metadata?.uid)))).flat();
      return held.length === left.length && held.every((t) => t.metadata.deletionTimestamp);
    });
    // orphan-1 comes back at another address: its new run lets go of the old Translation of its own name only.
    const again = await createPod(h, podAt('orphan-1', 43));
    // Its run's first state is the ended run's last: wait for its Translations.
    await waitFor('the Translations of the new orphan-1', async () => {
      const owned = await ofUid(again.metadata?.uid);
      return owned.length === 3 && owned.every(readyOf);
    });
    // The old Translation of its name went with the new run's apply; the other 5 stay held until a repair (one may
    // come early: a busy machine's late Lease renewal is a leadership regained, which repairs at once).
    const others = left.map((t) => t.metadata.name).filter((n) => n !== 'pod.4.orphan-1');
    const stillHeld = (await Promise.all(first.map((pod) => ofUid(pod.metadata?.uid)))).flat();
    expect(stillHeld.map((t) => t.metadata.name).filter((n) => !others.includes(n))).toEqual([]);
    const ownName = h.client.workflow.getHandle(
      workflowId({ kind: 'Translation', namespace: 'default', name: 'pod.4.orphan-1' }),
    );
    await expect(ownName.describe()).rejects.toThrow(/not found/i);

    // A starter taking the Lease repairs at once (the running one would at its next re-list).
    await h.starter.stop();
    const kubeConfig = loadKubeConfig(h.info.kubernetes.kubeconfig)!;
    const starter = startTestStarter({
      kubeConfig,
      temporalClient: h.client,
      identity: 'e2e-objects',
      debounceMs: 50,
      logger: pino({ level: 'error' }),
    });
    try {
      await waitFor('the held Translations let go', async () =>
        (await Promise.all(first.map((pod) => ofUid(pod.metadata?.uid)))).flat().length === 0 ? true : undefined,
      );
      // Each by a Translation workflow of its own, which completed.
      for (const name of others) {
        const run = h.client.workflow.getHandle(workflowId({ kind: 'Translation', namespace: 'default', name }));
        await run.result();
        expect([name, (await run.describe()).status.name]).toEqual([name, 'COMPLETED']);
      }
      await converged({ ...cluster, pods: [...cluster.pods, podAt('orphan-1', 43)] });
      const owned = await ofUid(again.metadata?.uid);
      expect(kinds(owned)).toEqual(['pod', 'pod-arp', 'pod-mac']);
      expect(owned.filter((t) => !readyOf(t))).toEqual([]);
      await deletePod(h, 'default', 'orphan-1');
      await converged(cluster);
    } finally {
      await starter.stop();
    }
  });
});
