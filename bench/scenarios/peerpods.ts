// Peer pods: N peer pods at once on the stack's libvirt, Steward against virsh alone in the same run. Steward: the Pods
// created (10 API calls in flight) until every PeerPod names its running VM, then deleted until every VM is gone. The
// baseline: the same VMs made with virsh, all at once, as Steward's workflows call the cloud (one activity per peer
// pod, in parallel): each one's root disk (backed by the pod-VM image) and cloud-init ISO made and filled, its domain
// defined with both and started; then destroyed, undefined and its two volumes deleted. The XML is Steward's own, so
// both sides make the same VM.
import * as k8s from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { virsh } from '../../deploy/local/libvirt';
import { libvirtSettings } from '../../test/support/cloud-backends';
import { domainXml } from '../../activities/cloud/libvirt/domain-xml';
import { writeNoCloudIso } from '../../activities/cloud/libvirt/cloud-init-iso';
import { parseVolume, podVmVolumes } from '../../activities/cloud/libvirt/volume-xml';
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
import { counted, sharedProcesses, startMeter, temporalProcesses, workerActivities, type Usage } from '../measure';
import type { Report, Row } from '../report';
import { compiledWorkerApp, deleteAllPods, inParallel } from '../support';
import { startWorkerProcess, type WorkerProcess } from '../../deploy/local/worker-process';
import { peerPodStages, type PeerPodStages } from '../peerpod-timeline';
import { median } from '../stats';
import type { Backend } from '../../platform/backends';

/**
 * The baseline's VMs: each as the worker makes it (its settings' defaults: 64 MiB, a 10 GiB root disk, no NIC where
 * the network is missing), its cloud-init ISO made in the clock as the worker makes it; the image is read once.
 */
async function virshVms(uri: string, marker: string, names: string[]) {
  const settings = { ...libvirtSettings(uri, marker), rootDiskGiB: 10 };
  const { pool } = settings;
  const image = parseVolume(await virsh(uri, 'vol-dumpxml', '--pool', pool, settings.imageVolume));
  if (!image) throw new Error(`the pod-VM image ${settings.imageVolume} names no path, format or capacity`);
  const dir = await mkdtemp(join(tmpdir(), 'bench-virsh-'));
  return names.map((name) => {
    const input = { name: `${marker}-virsh-${name}`, podUid: randomUUID(), podNamespace: namespace, podName: name };
    const volumes = podVmVolumes(settings, input, image);
    return {
      create: async () => {
        const started = Date.now();
        const files = await mkdtemp(join(dir, 'vm-'));
        const rootFile = join(files, 'root.xml');
        await writeFile(rootFile, volumes.root.xml);
        const iso = await writeNoCloudIso(files, volumes.cloudInit.files);
        const { size } = await stat(iso);
        await virsh(uri, 'vol-create', '--pool', pool, rootFile);
        await virsh(uri, 'vol-create-as', pool, volumes.cloudInit.name, String(size), '--format', 'raw');
        await virsh(uri, 'vol-upload', '--pool', pool, volumes.cloudInit.name, iso);
        // The paths a script knows: the pool's directory, the image's.
        const devices = {
          rootDisk: join(dirname(image.path), volumes.root.name),
          cloudInitIso: join(dirname(image.path), volumes.cloudInit.name),
        };
        const domainFile = join(files, 'domain.xml');
        await writeFile(domainFile, domainXml(settings, input, randomUUID(), devices));
        await virsh(uri, 'define', domainFile);
        await virsh(uri, 'start', input.name);
        return (Date.now() - started) / 1000;
      },
      delete: async () => {
        await virsh(uri, 'destroy', input.name);
        await virsh(uri, 'undefine', input.name);
        await virsh(uri, 'vol-delete', '--pool', pool, volumes.root.name);
        await virsh(uri, 'vol-delete', '--pool', pool, volumes.cloudInit.name);
      },
    };
  });
}

/** An environment's set variables (a ProcessEnv may hold undefined ones). */
const definedOnly = (env: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));

const timed = async (call: () => Promise<unknown>): Promise<number> => {
  const start = Date.now();
  await call();
  return (Date.now() - start) / 1000;
};

/** VMs with this run's marker, as libvirt lists them. */
const markedVms = async (h: PeerPodHarness) => (await h.backend('libvirt').provider.list()).length;

const totalActivities = async (httpPort: number) =>
  [...(await workerActivities(httpPort)).values()].reduce((a, b) => a + b, 0);

/**
 * What the bench's installation drives: peer pods alone, as a cluster beside cloud-api-adaptor runs Steward. Left to its
 * default (both), the starter also gave each Pod a MidoNet workflow, which this bench cannot serve (its worker has no
 * MidoNet settings, no Node is watched): each recorded a warning Event and waited on a retry timer, work virsh does
 * not do, on the same cores.
 */
const INSTALLED: readonly Backend[] = ['peerpods'];

export async function peerPods(info: StackInfo, { pods }: { pods: number }): Promise<Report> {
  const h = await startPeerPodHarness(info, {
    identity: 'bench-peerpods',
    log: pino({ level: 'error' }),
    backends: INSTALLED,
  });
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  const driver = { requests: 0 };
  const core = counted(h.core, driver);
  const custom = counted(h.custom, driver);
  // The MidoNet counters are not used here; the meter reads them all the same.
  const admin = new EmulatorAdmin(info.midonet.adminUrl!);
  const meter = (workerPids: number[] = []) =>
    startMeter({
      kubeConfig,
      admin,
      temporal: temporalProcesses(info),
      shared: sharedProcesses(info),
      driver,
      workerPids,
    });
  const run = `${Date.now().toString(36)}`;
  const names = Array.from({ length: pods }, (_, i) => `bench-${run}-${String(i).padStart(3, '0')}`);
  let steward: {
    create: number;
    delete: number;
    usage: Usage;
    events: number;
    activities: number;
    stages: PeerPodStages[];
  };
  // The worker in a process of its own, compiled, as the image runs it (as the burst's): its CPU and memory are its
  // own, and its event loop is not the starter's and the driver's. Straight to the daemon, as a deployment reaches it
  // (the tests' relay is for cutting it off).
  const { appRoot, workflowBundle } = await compiledWorkerApp(info);
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorkerProcess({
      env: { ...definedOnly(h.env('libvirt', { direct: true })), STEWARD_WORKFLOW_BUNDLE: workflowBundle },
      logFile: join(info.stateDir, 'logs', 'bench-peerpods-worker.log'),
      appRoot,
    });
    const activitiesBefore = await totalActivities(worker.httpPort);
    const m = await meter([worker.process.pid]);
    const createdAt = new Map<string, number>();
    const create = await timed(async () => {
      await inParallel(names, 10, async (name) => {
        await createPeerPodPod({ core }, name);
        createdAt.set(name, Date.now());
      });
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
      await deleteAllPods(core, namespace);
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
    const stages: PeerPodStages[] = [];
    for await (const wf of h.client.workflow.list()) {
      const name = names.find((n) => wf.workflowId.endsWith(`/${namespace}/${n}`));
      if (name === undefined) continue;
      events += wf.historyLength;
      const history = await h.client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
      const stage = peerPodStages(createdAt.get(name)!, history.events ?? []);
      if (stage) stages.push(stage);
    }
    steward = { create, delete: deleted, usage, events, activities, stages };
  } finally {
    await h.stop();
    await worker?.stop();
  }

  const { uri } = info.libvirt;
  const m = await meter();
  const baseline = await virshVms(uri, h.marker, names);
  const virshEach: number[] = [];
  const virshCreate = await timed(() => inParallel(baseline, pods, async (vm) => virshEach.push(await vm.create())));
  const virshDelete = await timed(() => inParallel(baseline, pods, (vm) => vm.delete()));
  const virshUsage = await m.stop();

  const row = (metric: string, s: number | undefined, v: number | undefined, digits?: number): Row => ({
    metric,
    steward: s,
    baseline: v,
    ...(digits === undefined ? {} : { digits }),
  });
  return {
    scenario: 'peerpods',
    title: `peerpods: ${pods} peer pods at once on libvirt (qemu, 64 MiB, a root disk and a cloud-init ISO each), Steward (STEWARD_BACKENDS=${INSTALLED.join(',')}) vs virsh`,
    baseline: 'virsh',
    converged: { steward: true, baseline: true },
    rows: [
      row(
        'create → every PeerPod names a running VM (s) (virsh: volumes, define, start)',
        steward.create,
        virshCreate,
        2,
      ),
      ...stageRows(steward.stages, virshEach),
      row('delete → every VM gone (s) (virsh: destroy, undefine, volumes)', steward.delete, virshDelete, 2),
      row('history events per peer pod (all workflows)', steward.events / pods, undefined),
      row(
        'activities per peer pod (minimum 4: create VM, record, delete VM, release)',
        steward.activities / pods,
        undefined,
      ),
      row('API server requests per peer pod', steward.usage.apiRequests / pods, virshUsage.apiRequests / pods),
      row(
        'CPU of the side s (Steward: the worker, the starter and the driver; virsh: the process running it)',
        steward.usage.processCpuSeconds + (steward.usage.worker?.cpuSeconds ?? 0),
        virshUsage.processCpuSeconds,
      ),
      row('worker process CPU s', steward.usage.worker?.cpuSeconds, undefined),
      row('worker process peak RSS MB', steward.usage.worker?.peakRssMb, undefined, 0),
      row('worker process RSS growth in the window MB', steward.usage.worker?.rssGrowthMb, undefined, 0),
      row('Temporal server CPU s', steward.usage.temporalCpuSeconds, virshUsage.temporalCpuSeconds),
      ...(steward.usage.databaseCpuSeconds === undefined
        ? []
        : [row("Temporal's PostgreSQL CPU s", steward.usage.databaseCpuSeconds, virshUsage.databaseCpuSeconds)]),
    ],
    notes: [
      "Steward's worker runs as `steward worker` in a process of its own, compiled, as the image runs it; its starter and the bench's driver run in the bench process.",
      `As a cluster beside cloud-api-adaptor runs Steward (STEWARD_BACKENDS=${INSTALLED.join(',')}): a Pod has no workflow of its own, only its peer pod's.`,
      "virsh runs as child processes (Steward's from the worker's program helper, whose own CPU is the worker's): its CPU is counted on neither side, nor libvirtd's and QEMU's, which both sides share.",
      "converged = every PeerPod names its VM (create), no VM of this run's marker is left (delete), as libvirt lists them.",
      `create's stages: each peer pod's from its workflow's history (${steward.stages.length} of ${pods} with a completed VM activity), the median of the peer pods; the slowest peer pod's ${slowest(steward.stages)}.`,
    ],
  };
}

const stageOf = (stages: PeerPodStages[], pick: (s: PeerPodStages) => number) => median(stages.map(pick));

/** A create's stages, the median peer pod's; virsh's VM is its create of one VM (volumes, define, start). */
function stageRows(stages: PeerPodStages[], virshEach: number[]): Row[] {
  return [
    {
      metric: 'create stage: the Pod created → its workflow started (s, median)',
      steward: stageOf(stages, (s) => s.toWorkflow),
      digits: 2,
    },
    {
      metric: 'create stage: its workflow started → its VM activity started (s, median)',
      steward: stageOf(stages, (s) => s.toActivity),
      digits: 2,
    },
    {
      metric: 'create stage: the VM activity, VM made and started and PeerPod written (s, median; virsh: one VM)',
      steward: stageOf(stages, (s) => s.activity),
      baseline: median(virshEach),
      digits: 2,
    },
  ];
}

function slowest(stages: PeerPodStages[]): string {
  const total = (s: PeerPodStages) => s.toWorkflow + s.toActivity + s.activity;
  const last = [...stages].sort((a, b) => total(b) - total(a))[0];
  if (!last) return 'none';
  return `${last.toWorkflow.toFixed(2)} + ${last.toActivity.toFixed(2)} + ${last.activity.toFixed(2)} s`;
}
