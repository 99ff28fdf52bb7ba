// Peer pods: N peer pods at once on the stack's libvirt, Steward against virsh alone in the same run. Steward: the Pods
// created (10 API calls in flight) until every PeerPod names its running VM, then deleted until every VM is gone. The
// baseline: the same number of domains defined and started, then destroyed and undefined, with virsh, all at once, as
// Steward's workflows call the cloud (one activity per peer pod, in parallel).
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { virsh } from '../../deploy/local/libvirt';
import { plainDomainFile } from '../../test/support/cloud-backends';
import {
  createPeerPodPod,
  namespace,
  readPeerPod,
  startPeerPodHarness,
  type PeerPodHarness,
} from '../../test/support/peerpods-harness';
import { waitFor } from '../../test/support';
import type { StackInfo } from '../../deploy/local';
import { EmulatorAdmin } from '../../deploy/local/midonet';
import { counted, startMeter, temporalProcesses, workerActivities, type Usage } from '../measure';
import type { Report, Row } from '../report';
import { inParallel } from '../support';

const timed = async (call: () => Promise<unknown>): Promise<number> => {
  const start = Date.now();
  await call();
  return (Date.now() - start) / 1000;
};

/** VMs with this run's marker, as libvirt lists them. */
const markedVms = async (h: PeerPodHarness) => (await h.backend('libvirt').provider.list()).length;

const totalActivities = async (httpPort: number) =>
  [...(await workerActivities(httpPort)).values()].reduce((a, b) => a + b, 0);

export async function peerPods(info: StackInfo, { pods }: { pods: number }): Promise<Report> {
  const h = await startPeerPodHarness(info, { identity: 'bench-peerpods', log: pino({ level: 'error' }) });
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  const driver = { requests: 0 };
  const core = counted(h.core, driver);
  const custom = counted(h.custom, driver);
  // The MidoNet counters are not used here; the meter reads them all the same.
  const admin = new EmulatorAdmin(info.midonet.adminUrl!);
  const meter = () => startMeter({ kubeConfig, admin, temporal: temporalProcesses(info), driver });
  const run = `${Date.now().toString(36)}`;
  const names = Array.from({ length: pods }, (_, i) => `bench-${run}-${String(i).padStart(3, '0')}`);
  let steward: { create: number; delete: number; usage: Usage; events: number; activities: number };
  try {
    // Straight to the daemon, as a deployment reaches it (the tests' relay is for cutting it off).
    const worker = await h.startWorker('libvirt', { direct: true });
    const activitiesBefore = await totalActivities(worker.httpPort);
    const m = await meter();
    const create = await timed(async () => {
      await inParallel(names, 10, (name) => createPeerPodPod({ core }, name));
      await waitFor(
        'every PeerPod naming its VM',
        async () =>
          (await Promise.all(names.map(async (name) => (await readPeerPod({ custom }, name))?.spec.instanceID))).every(
            Boolean,
          ),
        600_000,
        200,
      );
    });
    const deleted = await timed(async () => {
      await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
      await waitFor('every VM gone', async () => (await markedVms(h)) === 0, 600_000, 200);
    });
    await waitFor(
      'every PeerPod gone',
      async () =>
        (await Promise.all(names.map((name) => readPeerPod({ custom }, name)))).every(
          (peerPod) => peerPod === undefined,
        ),
      120_000,
    );
    const usage = await m.stop();
    const activities = (await totalActivities(worker.httpPort)) - activitiesBefore;
    // Visibility is eventually consistent: let closed runs' final history lengths land.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    let events = 0;
    for await (const wf of h.client.workflow.list())
      if (names.some((name) => wf.workflowId.endsWith(`/${namespace}/${name}`))) events += wf.historyLength;
    steward = { create, delete: deleted, usage, events, activities };
  } finally {
    await h.stop();
  }

  const { uri } = info.libvirt;
  const domains = names.map((name) => `${h.marker}-virsh-${name}`);
  const m = await meter();
  const virshCreate = await timed(() =>
    inParallel(
      domains,
      pods,
      async (domain) => (await virsh(uri, 'define', plainDomainFile(domain)), await virsh(uri, 'start', domain)),
    ),
  );
  const virshDelete = await timed(() =>
    inParallel(
      domains,
      pods,
      async (domain) => (await virsh(uri, 'destroy', domain), await virsh(uri, 'undefine', domain)),
    ),
  );
  const virshUsage = await m.stop();

  const row = (metric: string, s: number | undefined, v: number | undefined, digits?: number): Row => ({
    metric,
    steward: s,
    baseline: v,
    ...(digits === undefined ? {} : { digits }),
  });
  return {
    scenario: 'peerpods',
    title: `peerpods: ${pods} peer pods at once on libvirt (qemu, 64 MiB diskless domains), Steward vs virsh`,
    baseline: 'virsh',
    converged: { steward: true, baseline: true },
    rows: [
      row('create → every PeerPod names a running VM (s) (virsh: define+start)', steward.create, virshCreate, 2),
      row('delete → every VM gone (s) (virsh: destroy+undefine)', steward.delete, virshDelete, 2),
      row('history events per peer pod (all workflows)', steward.events / pods, undefined),
      row(
        'activities per peer pod (minimum 4: create VM, record, delete VM, release)',
        steward.activities / pods,
        undefined,
      ),
      row('API server requests per peer pod', steward.usage.apiRequests / pods, virshUsage.apiRequests / pods),
      row('worker process CPU s', steward.usage.processCpuSeconds, virshUsage.processCpuSeconds),
      row('worker process peak RSS MB', steward.usage.peakRssMb, virshUsage.peakRssMb, 0),
      row('worker process RSS growth in the window MB', steward.usage.rssGrowthMb, virshUsage.rssGrowthMb, 0),
      row('Temporal server CPU s', steward.usage.temporalCpuSeconds, virshUsage.temporalCpuSeconds),
      ...(steward.usage.databaseCpuSeconds === undefined
        ? []
        : [row("Temporal's PostgreSQL CPU s", steward.usage.databaseCpuSeconds, virshUsage.databaseCpuSeconds)]),
    ],
    notes: [
      "virsh runs as child processes: its CPU is not in this process's; libvirtd and QEMU, shared by both sides, are counted on neither.",
      "converged = every PeerPod names its VM (create), no VM of this run's marker is left (delete), as libvirt lists them.",
    ],
  };
}
