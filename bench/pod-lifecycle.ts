// Performance of the object lifecycles on the embedded stack (issue 4, "Performance from the start"):
//   (a) history events of one Pod's whole lifecycle (create on a ready Node, pushed, deleted, everything gone), per
//       workflow: the Pod's, its Translations', and what its Node's workflow got from it;
//   (b) 200 Pods on 4 Nodes: seconds from creating them to every Translation Ready, and from deleting them to
//       everything gone, with the events all their workflows took.
// Usage: node --import tsx bench/pod-lifecycle.ts [path/to/stack.json]
// Without a stack.json it starts its own stack (free ports) in $STEWARD_BENCH_STATE_DIR/steward-bench (default in /tmp).
import type { Client } from '@temporalio/client';
import { nodeIds, podPortId } from '../workflows/translation/ids';
import { translate } from '../workflows/translation';
import type { NodeProjection, PodProjection } from '../workflows/translation/types';
import { createNode, createPod, isReady, listTranslations, readyOf, startObjectsHarness, waitFor, type ObjectsHarness } from '../test/support/objects-harness';
import { benchStack, costOf, inParallel, noneRunning, printTable, runBench, seconds, type RunCost } from './support';

const NAMESPACE = 'bench';
const TENANT = 'midonetkube';
const NODES = 4;
const PODS = 200;

const hosts = Array.from({ length: NODES }, (_, i) => ({ id: `b0000000-0000-4000-8000-00000000000${i + 1}`, name: `bench-node-${i + 1}` }));
const nodes: NodeProjection[] = hosts.map((host, i) => ({
  kind: 'Node',
  metadata: {
    name: host.name,
    uid: '',
    annotations: { 'midonet.org/host-id': host.id, 'midonet.org/tunnel-zone-id': '', 'midonet.org/tunnel-endpoint-ip': `192.0.2.${20 + i}` },
  },
  spec: { podCIDR: `10.2.${i + 1}.0/24` },
  status: { addresses: [{ type: 'InternalIP', address: `192.0.2.${20 + i}` }] },
}));
/** Pod `i` on Node `i mod 4`, addressed in that Node's PodCIDR. */
const podAt = (name: string, i: number, annotations: Record<string, string> = {}): PodProjection => ({
  kind: 'Pod',
  metadata: { name, namespace: NAMESPACE, uid: '', annotations },
  spec: { nodeName: nodes[i % NODES]!.metadata.name },
  status: { phase: 'Running', podIP: `10.2.${(i % NODES) + 1}.${10 + Math.floor(i / NODES)}` },
});

/** The Translations a Pod gets, by name: what (a) waits for and counts. */
function translationNames(pod: PodProjection): string[] {
  const node = nodes.find((n) => n.metadata.name === pod.spec.nodeName)!;
  const result = translate(pod, { node });
  if (!result.ok) throw new Error(`the bench Pod does not translate: ${result.error.message}`);
  return result.translations.map((t) => t.name);
}




const emulatorPortIds = async (h: ObjectsHarness) => new Set(((await h.admin.dump()).Port ?? []).map((p) => p.id as string));

/** (a) One Pod, created on a ready Node, pushed, deleted, gone; its own workflows' events and its Node's extra. */
async function onePod(h: ObjectsHarness, pod: PodProjection, label: string): Promise<void> {
  const names = translationNames(pod);
  const nodeId = `node/${pod.spec.nodeName!}`;
  const nodeBefore = await costOf(h.client, nodeId);
  const started = Date.now();
  await createPod(h, pod);
  await waitFor(`${label}: Translations Ready`, async () => (await Promise.all(names.map((n) => isReady(h, NAMESPACE, n)))).every(Boolean), 120_000, 100);
  const ready = Date.now();
  await h.core.deleteNamespacedPod({ namespace: NAMESPACE, name: pod.metadata.name, gracePeriodSeconds: 0 });
  const portId = podPortId(TENANT, NAMESPACE, pod.metadata.name);
  const ids = [`pod/${NAMESPACE}/${pod.metadata.name}`, ...names.map((n) => `translation/${NAMESPACE}/${n}`)];
  await waitFor(
    `${label}: everything gone`,
    async () =>
      (await listTranslations(h, NAMESPACE)).length === 0 &&
      !(await emulatorPortIds(h)).has(portId) &&
      (await Promise.all(ids.map((id) => noneRunning(h.client, `WorkflowId="${id}"`)))).every(Boolean),
    120_000,
    100,
  );
  const gone = Date.now();
  const rows: (string | number)[][] = [];
  const total: RunCost = { runs: 0, events: 0, stateTransitions: 0 };
  for (const id of ids) {
    const cost = await costOf(h.client, id);
    rows.push([id, cost.runs, cost.events, cost.stateTransitions]);
    total.runs += cost.runs;
    total.events += cost.events;
    total.stateTransitions += cost.stateTransitions;
  }
  const nodeAfter = await costOf(h.client, nodeId);
  const nodeExtra = { events: nodeAfter.events - nodeBefore.events, stateTransitions: nodeAfter.stateTransitions - nodeBefore.stateTransitions };
  rows.push([`${nodeId} (extra, from this Pod)`, nodeAfter.runs - nodeBefore.runs, nodeExtra.events, nodeExtra.stateTransitions]);
  rows.push(['total', total.runs, total.events + nodeExtra.events, total.stateTransitions + nodeExtra.stateTransitions]);
  printTable(
    `(a) ${label}: ${names.length} Translation(s); create → Ready ${seconds(ready - started)} s, delete → gone ${seconds(gone - ready)} s`,
    ['workflow', 'runs', 'events', 'state transitions'],
    rows,
  );
}


/** Sum of history events of the bench namespace's workflows of one kind whose id starts with `prefix` (closed runs included). */
async function eventsOfKind(client: Client, kind: string, prefix: string): Promise<{ workflows: number; events: number }> {
  const out = { workflows: 0, events: 0 };
  for await (const wf of client.workflow.list({ query: `K8sNamespace="${NAMESPACE}" AND K8sKind="${kind}"` })) {
    // (a)'s Pods live in the same namespace.
    if (!wf.workflowId.startsWith(prefix)) continue;
    out.workflows++;
    out.events += wf.historyLength;
  }
  return out;
}

/** (b) 200 Pods on 4 Nodes: time to every Translation Ready, and from deletion to everything gone. */
async function manyPods(h: ObjectsHarness): Promise<void> {
  const pods = Array.from({ length: PODS }, (_, i) => podAt(`p-${String(i).padStart(3, '0')}`, i));
  const portIds = new Set(pods.map((p) => podPortId(TENANT, NAMESPACE, p.metadata.name)));
  const nodeEventsBefore = await Promise.all(nodes.map((n) => costOf(h.client, `node/${n.metadata.name}`)));
  const t0 = Date.now();
  await inParallel(pods, 10, (pod) => createPod(h, pod));
  const created = Date.now();
  await waitFor(
    'every Translation Ready',
    async () => {
      const live = await listTranslations(h, NAMESPACE);
      return live.length === PODS && live.every(readyOf);
    },
    900_000,
    500,
  );
  const ready = Date.now();
  await h.core.deleteCollectionNamespacedPod({ namespace: NAMESPACE, gracePeriodSeconds: 0 });
  const deleted = Date.now();
  await waitFor(
    'everything gone',
    async () => {
      if ((await listTranslations(h, NAMESPACE)).length > 0) return false;
      const ports = await emulatorPortIds(h);
      return [...portIds].every((id) => !ports.has(id)) && (await noneRunning(h.client, `K8sNamespace="${NAMESPACE}"`));
    },
    900_000,
    500,
  );
  const gone = Date.now();
  // Visibility is eventually consistent: let the closed runs' final history lengths land.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const podEvents = await eventsOfKind(h.client, 'Pod', `pod/${NAMESPACE}/p-`);
  const translationEvents = await eventsOfKind(h.client, 'Translation', `translation/${NAMESPACE}/pod.4.p-`);
  const nodeEventsAfter = await Promise.all(nodes.map((n) => costOf(h.client, `node/${n.metadata.name}`)));
  const nodeExtra = nodeEventsAfter.reduce((sum, after, i) => sum + after.events - nodeEventsBefore[i]!.events, 0);
  const totalEvents = podEvents.events + translationEvents.events + nodeExtra;
  printTable(
    `(b) ${PODS} Pods on ${NODES} Nodes`,
    ['phase', 'Pods', 'seconds', 'Pods/s'],
    [
      ['create (API calls, 10 in parallel)', PODS, seconds(created - t0), (PODS / ((created - t0) / 1000)).toFixed(1)],
      ['create → every Translation Ready', PODS, seconds(ready - t0), (PODS / ((ready - t0) / 1000)).toFixed(1)],
      ['delete → everything gone', PODS, seconds(gone - deleted), (PODS / ((gone - deleted) / 1000)).toFixed(1)],
    ],
  );
  printTable(
    `(b) events, ${PODS} Pods (whole lifecycle)`,
    ['workflows', 'count', 'events', 'events/Pod'],
    [
      ['pod/*', podEvents.workflows, podEvents.events, (podEvents.events / PODS).toFixed(1)],
      ['translation/*', translationEvents.workflows, translationEvents.events, (translationEvents.events / PODS).toFixed(1)],
      ['node/* (extra)', NODES, nodeExtra, (nodeExtra / PODS).toFixed(1)],
      ['total', podEvents.workflows + translationEvents.workflows, totalEvents, (totalEvents / PODS).toFixed(1)],
      ['events/s (create → gone, wall clock incl. idle)', '', (totalEvents / ((gone - t0) / 1000)).toFixed(1), ''],
    ],
  );
  const stats = h.starter.stats();
  console.log(`starter: ${stats.events} watch events, ${stats.signalsSent} signals sent, ${stats.suppressed} suppressed, ${stats.coalesced} coalesced, ${stats.errors} errors`);
}

async function main(): Promise<void> {
  const { info, stop } = await benchStack('steward-bench');
  const h = await startObjectsHarness(info, { hosts, identity: 'bench' });
  try {
    await h.core.createNamespace({ body: { metadata: { name: NAMESPACE } } });
    for (const node of nodes) await createNode(h, node);
    const bridges = nodes.map((n) => nodeIds(TENANT, n.metadata.name).bridge);
    await waitFor('the Nodes pushed', async () => {
      const nodeTranslations = await listTranslations(h, 'default');
      const ready = nodeTranslations.filter(readyOf).length === nodeTranslations.length && nodeTranslations.length > 0;
      const bridgesThere = new Set(((await h.admin.dump()).Bridge ?? []).map((b) => b.id as string));
      return ready && bridges.every((b) => bridgesThere.has(b));
    });
    // Let the Nodes' workflows settle (notifications, status writes) before counting their extra events.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await onePod(h, podAt('solo', 0), 'one Pod');
    await onePod(h, podAt('solo-mac', 1, { 'midonet.org/mac-address': '0a:58:0a:02:02:0b' }), 'one Pod with a MAC annotation');
    await manyPods(h);
  } finally {
    await h.stop();
    await stop();
  }
}

runBench(main);
