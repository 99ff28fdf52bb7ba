// The orphan sweeper on the real stack: the sweep workflow on Temporal, VMs on real libvirt and on moto's EC2, PeerPods,
// Pods and Translations in the real API server, MidoNet objects in the emulator. Each describe has its own marker or
// tenant, so what other test files leave on the shared daemons is never in its lists.
import { EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import * as k8s from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { createCloudActivities } from '../activities/cloud/activities';
import { createKubernetesActivities } from '../activities/kubernetes';
import { MIDONET_USER, runStackWorker } from '../test/support';
import { awsBackend, libvirtBackend, libvirtSettings, TEST_AMI } from '../test/support/cloud-backends';
import { caaPodVm, podVmPool, type PodVmPool } from '../test/support/caa-pod-vm';
import { createLibvirtProvider } from '../activities/cloud/libvirt';
import { virsh } from '../deploy/local/libvirt';
import { adminConfig, createNamespace, createService, translationOf } from '../test/support/kubernetes';
import { backendResource, createMidonetClient } from '../activities/midonet';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { sleep } from '../deploy/local/process';
import { type RunningWorker } from '../worker';
import { sweepProgressQuery } from '../model/messages';
import type { SweepInput } from './sweep';
import type { BackendReport, SweepReport } from '../model/sweep-report';
import { globalIds } from '../model/translation/ids';

const info = stackInfo();
const run = Date.now().toString(36);
const PEERPOD = { group: 'confidentialcontainers.org', version: 'v1alpha1', plural: 'peerpods' };

const kc = adminConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
let namespace: string;

const start = (worker: RunningWorker, taskQueue: string, input: SweepInput) =>
  worker.client.workflow.start<(input: SweepInput) => Promise<SweepReport>>('sweep', {
    taskQueue,
    workflowId: `gc/sweep/test-${randomUUID()}`,
    args: [input],
  });
const execute = async (worker: RunningWorker, taskQueue: string, input: SweepInput) =>
  (await start(worker, taskQueue, input)).result();

/** Starts a sweep, runs `during` once it waits out its grace period, and resolves its report. */
async function sweepWithGrace(
  worker: RunningWorker,
  taskQueue: string,
  input: SweepInput,
  during: () => Promise<void>,
): Promise<SweepReport> {
  const handle = await start(worker, taskQueue, input);
  for (let i = 0; (await handle.query(sweepProgressQuery)).phase !== 'waiting'; i++) {
    if (i > 200) throw new Error('the sweep never reached its grace period');
    await sleep(100);
  }
  await during();
  return handle.result();
}

const row = (report: SweepReport, backend: string) =>
  report.backends.find((b) => b.backend === backend) as BackendReport;

/** A PeerPod in the test namespace that records `instanceID`. */
const createPeerPod = (name: string, cloudProvider: string, instanceID: string) =>
  custom.createNamespacedCustomObject({
    ...PEERPOD,
    namespace,
    body: {
      apiVersion: `${PEERPOD.group}/${PEERPOD.version}`,
      kind: 'PeerPod',
      metadata: { name },
      spec: { cloudProvider, instanceID },
    },
  });

beforeAll(async () => {
  namespace = await createNamespace(kc, 'steward-test-sweep');
});
afterAll(async () => {
  await core.deleteNamespace({ name: namespace });
});

describe.each([
  { name: 'libvirt', make: libvirtBackend },
  { name: 'aws', make: awsBackend },
])('sweeping $name VMs', ({ name, make }) => {
  const taskQueue = `sweep-test-${name}-${run}`;
  const marker = `steward-sweep-test-${run}`;
  const cloud = make(info, marker);
  const made: string[] = [];
  let unmarked: string;
  let worker: RunningWorker;
  let serial = 0;

  /** A VM with Steward's marker, for a pod that does not exist unless `podUid` is given. */
  const markedVm = async (podUid: string = randomUUID()) => {
    const { instanceId } = await cloud.provider.create({
      name: `steward-sweep-${run}-${name}-${serial++}`,
      podUid,
      podNamespace: namespace,
      podName: `web-${serial}`,
    });
    made.push(instanceId);
    return instanceId;
  };
  const peerPodFor = (instanceId: string) => createPeerPod(`pp-${name}-${serial++}`, cloud.provider.name, instanceId);
  const exists = async (instanceId: string) => (await cloud.provider.get({ instanceId })).exists;

  beforeAll(async () => {
    worker = await runStackWorker(info, taskQueue, createCloudActivities({ provider: cloud.provider }));
    unmarked = await cloud.createUnmarked(`steward-sweep-unmarked-${run}-${name}`);
  });
  afterAll(async () => {
    await worker?.shutdown();
    for (const instanceId of made) await cloud.provider.delete({ instanceId }).catch(() => undefined);
    if (unmarked) await cloud.deleteOutOfBand(unmarked).catch(() => undefined);
  });

  it('dry run: reports the VM nothing records and deletes nothing', async () => {
    const orphan = await markedVm();
    const report = await execute(worker, taskQueue, { dryRun: true, graceMs: 0, backends: ['cloud'] });
    expect(row(report, 'cloud')).toEqual(
      expect.objectContaining({
        outcome: 'dryRun',
        counts: { found: 1, candidates: 1, orphans: 1, deleted: 0, kept: 0 },
        orphans: [expect.objectContaining({ kind: 'VM', id: orphan })],
      }),
    );
    expect(await exists(orphan)).toBe(true);
    expect(await exists(unmarked)).toBe(true);
  });

  it('after the grace period deletes the VM nothing records; keeps the ones a PeerPod, a live Pod or a PeerPod written during the grace period records; never touches a VM without the marker', async () => {
    const [orphan] = made;
    const recorded = await markedVm();
    await peerPodFor(recorded);
    const pod = await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: `live-${name}` },
        spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }] },
      },
    });
    const ofLivePod = await markedVm(pod.metadata!.uid);
    const claimedLate = await markedVm();

    const report = await sweepWithGrace(worker, taskQueue, { graceMs: 3_000, backends: ['cloud'] }, () =>
      peerPodFor(claimedLate).then(() => undefined),
    );
    expect(row(report, 'cloud')).toEqual(
      expect.objectContaining({
        outcome: 'swept',
        counts: { found: 4, candidates: 2, orphans: 1, deleted: 1, kept: 1 },
        orphans: [expect.objectContaining({ id: orphan })],
      }),
    );
    expect(await exists(orphan!)).toBe(false);
    for (const kept of [recorded, ofLivePod, claimedLate, unmarked])
      expect({ kept, exists: await exists(kept) }).toEqual({ kept, exists: true });

    const metrics = await (await fetch(`http://127.0.0.1:${worker.httpPort}/metrics`)).text();
    expect(metrics).toMatch(
      new RegExp(
        `^steward_sweep_orphans_deleted_total\\{(?=.*backend="cloud")(?=.*task_queue="${taskQueue}").*\\} 1$`,
        'm',
      ),
    );
    expect(metrics).toMatch(
      new RegExp(`^steward_sweep_orphans_found\\{(?=.*backend="cloud")(?=.*task_queue="${taskQueue}").*\\} 1$`, 'm'),
    );
  });
});

describe('sweeping MidoNet', () => {
  const taskQueue = `sweep-test-midonet-${run}`;
  const tenant = `sweep-test-${run}`;
  const midonet = createMidonetClient({ baseUrl: info.midonet.url, ...MIDONET_USER });
  const k8sActivities = createKubernetesActivities({ kubeConfig: kc });
  const stamp = Date.now().toString(16).slice(-8);
  const id = (n: number) => `5eeb0000-0000-4000-8000-${stamp}${String(n).padStart(4, '0')}`;
  const ids = {
    listed: id(1),
    orphan: id(2),
    otherTenant: id(3),
    claimedLate: id(4),
    orphanPort: id(5),
    noTenant: id(6),
  };
  const clusterRouter = globalIds(tenant).clusterRouter;
  let worker: RunningWorker;
  let owner: Awaited<ReturnType<typeof createService>>;

  /** The test's Translation lists these bridges (no finalizer: no pusher runs here to release it). */
  const listBridges = (...bridgeIds: string[]) =>
    k8sActivities.applyTranslations({
      owner,
      translations: [{ ...translationOf(owner, `sweep-test-${run}`, bridgeIds), finalizers: [] }],
    });
  const present = async (bridge: string) =>
    (await midonet.observe(backendResource('Bridge', '', { id: bridge }))).exists;

  beforeAll(async () => {
    worker = await runStackWorker(info, taskQueue, undefined);
    owner = await createService(kc, namespace);
    await listBridges(ids.listed);
    for (const bridge of [ids.listed, ids.orphan, ids.claimedLate])
      await midonet.ensure(backendResource('Bridge', '', { id: bridge, name: bridge.slice(-4), tenantId: tenant }));
    await midonet.ensure(backendResource('Port', ids.orphan, { id: ids.orphanPort, type: 'Bridge' }));
    await midonet.ensure(backendResource('Bridge', '', { id: ids.otherTenant, tenantId: `${tenant}-other` }));
    await midonet.ensure(backendResource('Bridge', '', { id: ids.noTenant }));
    // The deployer's router: no Translation lists it here, and it is still never swept.
    await midonet.ensure(backendResource('Router', '', { id: clusterRouter, name: 'ClusterRouter', tenantId: tenant }));
  });
  afterAll(() => worker?.shutdown());

  it("dry run: reports the bridge of Steward's tenant that no Translation lists, deletes nothing", async () => {
    const report = await execute(worker, taskQueue, { dryRun: true, graceMs: 0, backends: ['midonet'], tenant });
    const midonetRow = row(report, 'midonet');
    expect(midonetRow).toEqual(
      expect.objectContaining({
        outcome: 'dryRun',
        counts: { found: 4, candidates: 2, orphans: 2, deleted: 0, kept: 1 },
        message: 'the cluster router is never swept',
      }),
    );
    expect(midonetRow.orphans.map((o) => o.id).sort()).toEqual([ids.orphan, ids.claimedLate].sort());
    for (const bridge of Object.values(ids).filter((i) => i !== ids.orphanPort))
      expect({ bridge, present: await present(bridge) }).toEqual({ bridge, present: true });
  });

  it('after the grace period deletes it (its port with it); keeps what a Translation lists, lists during the grace period, the cluster router, and objects of other tenants or none', async () => {
    const report = await sweepWithGrace(worker, taskQueue, { graceMs: 3_000, backends: ['midonet'], tenant }, () =>
      listBridges(ids.listed, ids.claimedLate).then(() => undefined),
    );
    expect(row(report, 'midonet')).toEqual(
      expect.objectContaining({
        outcome: 'swept',
        counts: { found: 4, candidates: 2, orphans: 1, deleted: 1, kept: 2 },
        orphans: [expect.objectContaining({ kind: 'Bridge', id: ids.orphan })],
      }),
    );
    expect(await present(ids.orphan)).toBe(false);
    expect(
      (await midonet.observe(backendResource('Port', ids.orphan, { id: ids.orphanPort, type: 'Bridge' }))).exists,
    ).toBe(false);
    for (const bridge of [ids.listed, ids.claimedLate, ids.otherTenant, ids.noTenant])
      expect({ bridge, present: await present(bridge) }).toEqual({ bridge, present: true });
    expect((await midonet.observe(backendResource('Router', '', { id: clusterRouter }))).exists).toBe(true);
  });

  it('on a worker without cloud activities, says so for the cloud and still sweeps MidoNet; the sweep then fails with its report', async () => {
    const failure = await execute(worker, taskQueue, { dryRun: true, graceMs: 0, tenant }).then(
      () => undefined,
      (error: unknown) => error as { cause?: { type?: string; message: string; details?: unknown[] } },
    );
    expect(failure?.cause?.type).toBe('SweepIncomplete');
    expect(failure?.cause?.message).toMatch(
      /^cloud: the worker has no cloud activities \(cloudListVms is not registered\): configure a cloud provider/,
    );
    const report = failure?.cause?.details?.[0] as SweepReport;
    expect(row(report, 'cloud').outcome).toBe('failed');
    expect(row(report, 'midonet').outcome).toBe('dryRun');
    expect(row(report, 'midonet').counts).toEqual({ found: 3, candidates: 0, orphans: 0, deleted: 0, kept: 1 });
  });
});

describe("sweeping cloud-api-adaptor's leaked libvirt VMs (no marker, its name shape, in the configured pool)", () => {
  const taskQueue = `sweep-test-caa-${run}`;
  // Hex, as a sandbox ID's first 8 characters are.
  const tail = randomUUID().slice(0, 8);
  const { uri } = info.libvirt;
  let pool: PodVmPool;
  let worker: RunningWorker;

  beforeAll(async () => {
    pool = await podVmPool(uri, `steward-sweep-${tail}`);
    // The pool scopes the listing: cloud-api-adaptor-shaped VMs of other test files on this daemon are not in it.
    const provider = createLibvirtProvider({ ...libvirtSettings(uri, `steward-sweep-caa-${run}`), pool: pool.name });
    worker = await runStackWorker(info, taskQueue, createCloudActivities({ provider }));
  });
  afterAll(async () => {
    await worker?.shutdown();
    for (const name of (await virsh(uri, 'list', '--all', '--name')).split('\n').filter((n) => n.includes(tail))) {
      await virsh(uri, 'destroy', name).catch(() => undefined);
      await virsh(uri, 'undefine', '--nvram', name).catch(() => undefined);
    }
    await pool.remove();
  });

  it('a VM no PeerPod names is reported (dry run, and by default), then deleted with its volumes when switched on; one a PeerPod names is never touched', async () => {
    const leaked = await caaPodVm(uri, pool, `podvm-leaked-${tail}`);
    const owned = await caaPodVm(uri, pool, `podvm-owned-${tail}`);
    await createPeerPod(`owned-resource-${tail.slice(0, 5)}`, 'libvirt', owned.uuid);
    const caaRow = (report: SweepReport) => row(report, 'cloud-api-adaptor');

    const dry = await execute(worker, taskQueue, { dryRun: true, graceMs: 0, backends: ['cloud'], caaLeaks: 'delete' });
    expect(caaRow(dry)).toEqual(
      expect.objectContaining({
        outcome: 'dryRun',
        counts: { found: 2, candidates: 1, orphans: 1, deleted: 0, kept: 0 },
        orphans: [{ kind: 'VM', id: leaked.uuid, name: leaked.name }],
      }),
    );
    const reported = await execute(worker, taskQueue, { graceMs: 0, backends: ['cloud'], caaLeaks: 'report' });
    expect(caaRow(reported)).toEqual(expect.objectContaining({ outcome: 'dryRun', orphans: [expect.anything()] }));
    expect(await virsh(uri, 'list', '--all', '--name')).toContain(leaked.name);

    const swept = await execute(worker, taskQueue, { graceMs: 0, backends: ['cloud'], caaLeaks: 'delete' });
    expect(caaRow(swept)).toEqual(
      expect.objectContaining({
        outcome: 'swept',
        counts: { found: 2, candidates: 1, orphans: 1, deleted: 1, kept: 0 },
      }),
    );
    const domains = await virsh(uri, 'list', '--all', '--name');
    expect(domains).not.toContain(leaked.name);
    expect(domains).toContain(owned.name);
    expect(await pool.volumes()).toEqual([pool.base, `${owned.name}-cloudinit.iso`, `${owned.name}-root.qcow2`].sort());
  });

  it('without the setting (a sweep input from before it existed) no cloud-api-adaptor row is made', async () => {
    const report = await execute(worker, taskQueue, { dryRun: true, graceMs: 0, backends: ['cloud'] });
    expect(report.backends.map((b) => b.backend)).toEqual(['cloud']);
  });
});

describe("sweeping cloud-api-adaptor's leaked EC2 instances (no marker, its Name tag shape, in the region)", () => {
  const taskQueue = `sweep-test-caa-aws-${run}`;
  const tail = randomUUID().slice(0, 8);
  const ec2 = new EC2Client({ region: info.ec2.region, endpoint: info.ec2.endpoint });
  const made: string[] = [];
  let worker: RunningWorker;

  /** An instance as cloud-api-adaptor's aws provider makes it: its VM name as the Name tag, no Steward tag. */
  const caaInstance = async (name: string) => {
    const reply = await ec2.send(
      new RunInstancesCommand({
        ImageId: TEST_AMI,
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'Name', Value: name }] }],
      }),
    );
    const instanceId = reply.Instances![0]!.InstanceId!;
    made.push(instanceId);
    return { instanceId, name };
  };

  beforeAll(async () => {
    const { provider } = awsBackend(info, `steward-sweep-caa-aws-${run}`);
    worker = await runStackWorker(info, taskQueue, createCloudActivities({ provider }));
  });
  afterAll(async () => {
    await worker?.shutdown();
    if (made.length) await ec2.send(new TerminateInstancesCommand({ InstanceIds: made })).catch(() => undefined);
  });

  it('an instance no PeerPod names is reported (dry run, and by default); one a PeerPod names is not; neither is terminated', async () => {
    const leaked = await caaInstance(`podvm-ec2-leaked-${tail}`);
    const owned = await caaInstance(`podvm-ec2-owned-${tail}`);
    // Named unlike cloud-api-adaptor's (<pod>-resource-<5>), so only its instanceID can record the instance.
    await createPeerPod(`ec2-claim-${tail.slice(0, 5)}`, 'aws', owned.instanceId);
    // Other test files' instances share the region: these two are checked by ID, not the whole list.
    const orphanIds = (report: SweepReport) => row(report, 'cloud-api-adaptor').orphans.map((o) => o.id);

    const dry = await execute(worker, taskQueue, { dryRun: true, graceMs: 0, backends: ['cloud'], caaLeaks: 'delete' });
    expect(row(dry, 'cloud-api-adaptor').outcome).toBe('dryRun');
    expect(row(dry, 'cloud-api-adaptor').orphans).toContainEqual({
      kind: 'VM',
      id: leaked.instanceId,
      name: leaked.name,
    });
    expect(orphanIds(dry)).not.toContain(owned.instanceId);

    const reported = await execute(worker, taskQueue, { graceMs: 0, backends: ['cloud'], caaLeaks: 'report' });
    const caa = row(reported, 'cloud-api-adaptor');
    expect(caa.outcome).toBe('dryRun');
    expect(orphanIds(reported)).toContain(leaked.instanceId);
    expect(orphanIds(reported)).not.toContain(owned.instanceId);
    expect(caa.counts.deleted).toBe(0);

    const live = await awsBackend(info, 'any').provider.get({ instanceId: leaked.instanceId });
    expect(live).toEqual(expect.objectContaining({ exists: true, marker: false }));
    const metrics = await (await fetch(`http://127.0.0.1:${worker.httpPort}/metrics`)).text();
    expect(metrics).toMatch(
      new RegExp(`^steward_cloud_unrecorded_vms\\{(?=.*task_queue="${taskQueue}").*\\} ${caa.counts.orphans}$`, 'm'),
    );
  });
});
