// Performance of peer pods on the embedded stack's libvirt (issue 5), next to virsh itself in the same run:
//   (a) one peer pod (create → its PeerPod names a running VM → Pod deleted → VM and PeerPod gone): seconds, and the
//       history events and state transitions of its workflow;
//   (b) 20 peer pods at once: seconds until every PeerPod names its VM, and from deleting them until every VM is
//       gone; the baseline is the same number of domains defined+started, then destroyed+undefined, with virsh, all at
//       once, as Steward's workflows call the cloud (one activity per peer pod, in parallel).
// Usage: node --import tsx bench/peer-pods.ts [path/to/stack.json]
// Without a stack.json it starts its own stack (free ports) in $STEWARD_BENCH_STATE_DIR/steward-bench-peerpods.
import pino from 'pino';
import { plainDomainFile } from '../test/support/cloud-backends';
import { virsh } from '../deploy/local/libvirt';
import { createPeerPodPod, namespace, peerPodGone, readPeerPod, recordedPeerPod, startPeerPodHarness, type PeerPodHarness } from '../test/support/peerpods-harness';
import { waitFor } from '../test/support';
import { workflowId } from '../workflows/naming';
import { benchStack, costOf, inParallel, noneRunning, printTable, runBench, seconds } from './support';

const MANY = 20;

const timed = async (call: () => Promise<unknown>): Promise<number> => {
  const start = Date.now();
  await call();
  return Date.now() - start;
};

/** VMs with this run's marker, as libvirt lists them. */
const markedVms = async (h: PeerPodHarness) => (await h.backend('libvirt').provider.list()).length;

async function onePeerPod(h: PeerPodHarness): Promise<void> {
  const name = 'bench-solo';
  const created = await timed(async () => {
    await createPeerPodPod(h, name);
    await recordedPeerPod(h, name, 60_000, 20);
  });
  const deleted = await timed(async () => {
    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(h, name);
    await waitFor('the workflow closed', () => noneRunning(h.client, `WorkflowId="${workflowId({ kind: 'PeerPod', namespace, name })}"`), 30_000, 50);
  });
  const cost = await costOf(h.client, workflowId({ kind: 'PeerPod', namespace, name }));
  printTable(
    `(a) one peer pod on libvirt: create → PeerPod names a running VM ${seconds(created)} s, delete → VM and PeerPod gone ${seconds(deleted)} s`,
    ['workflow', 'runs', 'events', 'state transitions'],
    [[`peerpod/${namespace}/${name}`, cost.runs, cost.events, cost.stateTransitions]],
  );
}

async function manyPeerPods(h: PeerPodHarness): Promise<void> {
  const names = Array.from({ length: MANY }, (_, i) => `bench-${String(i).padStart(2, '0')}`);
  const stewardCreate = await timed(async () => {
    await inParallel(names, 10, (name) => createPeerPodPod(h, name));
    await waitFor('every PeerPod naming its VM', async () => (await Promise.all(names.map(async (name) => (await readPeerPod(h, name))?.spec.instanceID))).every(Boolean), 300_000, 200);
  });
  const stewardDelete = await timed(async () => {
    await h.core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
    await waitFor('every VM gone', async () => (await markedVms(h)) === 0, 300_000, 200);
  });
  await waitFor('every PeerPod gone', async () => (await Promise.all(names.map((name) => readPeerPod(h, name)))).every((peerPod) => peerPod === undefined), 60_000);

  const { uri } = h.info.libvirt;
  const domains = names.map((name) => `${h.marker}-virsh-${name}`);
  const virshCreate = await timed(() => inParallel(domains, MANY, async (domain) => (await virsh(uri, 'define', plainDomainFile(domain)), await virsh(uri, 'start', domain))));
  const virshDelete = await timed(() => inParallel(domains, MANY, async (domain) => (await virsh(uri, 'destroy', domain), await virsh(uri, 'undefine', domain))));

  const row = (what: string, steward: number, direct: number) => [what, seconds(steward), seconds(direct), seconds(steward - direct), (steward / direct).toFixed(2)];
  printTable(
    `(b) ${MANY} peer pods at once on libvirt (qemu, 64 MiB diskless domains), Steward vs virsh, all at once (same run)`,
    ['phase', 'Steward s', 'virsh s', 'difference s', 'ratio'],
    [
      row('create: Pods created → every PeerPod names a running VM (virsh: define+start)', stewardCreate, virshCreate),
      row('delete: Pods deleted → every VM gone (virsh: destroy+undefine)', stewardDelete, virshDelete),
    ],
  );
}

async function main(): Promise<void> {
  const { info, stop } = await benchStack('steward-bench-peerpods');
  const h = await startPeerPodHarness(info, { identity: 'bench-peerpods', log: pino({ level: 'error' }) });
  try {
    // Straight to the daemon, as a deployment reaches it (the tests' relay is for cutting it off).
    await h.startWorker('libvirt', { direct: true });
    await onePeerPod(h);
    await manyPeerPods(h);
  } finally {
    await h.stop();
    await stop();
  }
}

runBench(main);
