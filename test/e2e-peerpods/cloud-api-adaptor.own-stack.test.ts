// Steward beside cloud-api-adaptor, as peerpod-ctrl's successor (issue 11), on a stack of its own, for libvirt and
// aws: PeerPods exactly as cloud-api-adaptor writes them (`<pod>-resource-<5 chars>`, owned by the Pod as its
// controller, finalizer, spec) beside VMs made as it makes them (no Steward marker). Steward makes no second VM for
// such a Pod, deletes the older VMs a restart of cloud-api-adaptor leaves, refuses to release a PeerPod recorded in
// another cloud, and resolves the numeric libvirt IDs of PeerPods older than v0.20.0.
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { virsh } from '../../deploy/local/libvirt';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { repoRoot } from '../../deploy/local/paths';
import { ensureHelm, helmEnv } from '../../deploy/testing/helm';
import { POLLER_WINDOW_MS } from '../../cli/pollers';
import { loadStarterConfig } from '../../starter/config';
import { KATA_REMOTE } from '../../starter/controller';
import { cleanupUpdate, refreshUpdate } from '../../model/messages';
import { PEERPOD_API } from '../../model/naming';
import { PEERPOD_FINALIZER, Reason, VM_CLOUD_ANNOTATION } from '../../model/vocabulary';
import { waitFor } from '../support';
import type { Backend } from '../support/cloud-backends';
import { caaPodVm, podVmPool, type PodVm, type PodVmPool } from '../support/caa-pod-vm';
import { guideBlocks, guideRunner, untilUninstallAllowed, userPath } from '../support/guide';
import * as peerPods from '../support/peerpods-harness';
import { namespace, type PeerPodHarness } from '../support/peerpods-harness';
import { executeUpdateWhenReady } from '../../platform/temporal-update';

const execFileAsync = promisify(execFile);
const log = pino({ level: process.env.STEWARD_E2E_LOG ?? 'error' });
let serial = 0;
let stack: Stack;
let h: PeerPodHarness;

/** The starter's settings as the cluster manifests give them (deploy/manifests/steward.yaml's ConfigMap). */
function manifestsStarterConfig() {
  const objects = k8s.loadAllYaml(
    readFileSync(join(__dirname, '../../deploy/manifests/steward.yaml'), 'utf8'),
  ) as k8s.V1ConfigMap[];
  return loadStarterConfig({}, { ...objects.find((o) => o.kind === 'ConfigMap')!.data });
}

beforeAll(async () => {
  stack = await startPrivateStack();
  h = await peerPods.startPeerPodHarness(stack.info, {
    identity: 'e2e-caa',
    log,
    peerPodRuntimeClasses: manifestsStarterConfig().peerPodRuntimeClasses,
  });
});
afterAll(async () => {
  await h?.stop();
  await stack?.stop();
});

const stateOf = (name: string) => peerPods.stateOf(h, name);
const plainPod = async (name: string) =>
  (
    await h.core.createNamespacedPod({
      namespace,
      body: { metadata: { name }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } },
    })
  ).metadata!.uid!;
const eventsOn = async (name: string, reason: string) =>
  (await h.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name},reason=${reason}` }))
    .items;
const podVmLost = (name: string) =>
  waitFor(
    `Event ${Reason.PodVmLost} on Pod ${name}`,
    async () => {
      const found = (await eventsOn(name, Reason.PodVmLost)).filter((e) => e.involvedObject.kind === 'Pod');
      return found.length ? found : undefined;
    },
    60_000,
  );
const alive = async (backend: Backend, instanceId: string) => {
  const seen = await backend.provider.get({ instanceId });
  return seen.exists && seen.state !== 'deleting';
};

const writeAsCloudApiAdaptor = (
  pod: { name: string; uid: string },
  provider: string,
  instanceId: string,
  extra?: peerPods.PeerPodExtras,
) => peerPods.writeAsCloudApiAdaptor(h, pod, provider, instanceId, extra);

const tracked = (name: string) =>
  waitFor(
    `${name} tracked`,
    async () => ((await stateOf(name).catch(() => undefined))?.state === 'tracked.tracking' ? true : undefined),
    60_000,
  );

/**
 * A VM named as cloud-api-adaptor names it (`podvm-<pod>-<8 characters>`), told apart by the Pod's UID: a domain a
 * stopped run left defined in the machine's libvirt never takes the name of this run's.
 */
const caaVmName = (pod: string, uid: string, tag = '') =>
  `podvm-${pod}-${tag}${uid.replace(/-/g, '').slice(0, 8 - tag.length)}`;

/**
 * docs/migration-peerpod-ctrl.md, run as written (test/support/guide.ts), first in this file, while Steward does not
 * run yet: the stack holds what cloud-api-adaptor's chart installs (test/migration/cloud-api-adaptor.yaml, its CRD in
 * place of Steward's), with PeerPods and pod VMs (volumes in a pool, cloud-init ISO) as cloud-api-adaptor makes them.
 * The stack has no kubelet: peerpod-ctrl never runs, the guide's `helm install` makes Deployments that never run, and
 * the worker and starter run in this process in their stead, from the ConfigMaps those Deployments take (envFrom).
 */
describe("docs/migration-peerpod-ctrl.md, on what cloud-api-adaptor's chart leaves", () => {
  const GUIDE = join(repoRoot, 'docs', 'migration-peerpod-ctrl.md');
  const CAA = 'confidential-containers-system';
  let env: NodeJS.ProcessEnv = {};
  const guide = guideRunner(GUIDE, () => env);
  let pool: PodVmPool;
  let crdBefore: k8s.V1CustomResourceDefinition;
  /** A peer pod as cloud-api-adaptor leaves it: its Pod, its VM, its PeerPod. */
  type PeerPodAsLeft = { pod: string; uid: string; vm: PodVm; peerPod: string };
  const made: PeerPodAsLeft[] = [];
  let running: PeerPodAsLeft;
  let inFlight: PeerPodAsLeft;
  const kubectl = (...args: string[]) => execFileAsync('kubectl', args, { env, cwd: repoRoot });
  const crds = () => h.kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
  const readCrd = () => crds().readCustomResourceDefinition({ name: 'peerpods.confidentialcontainers.org' });
  const replicas = async () =>
    (
      await h.kubeConfig
        .makeApiClient(k8s.AppsV1Api)
        .readNamespacedDeployment({ namespace: CAA, name: 'peerpodctrl-controller-manager' })
    ).spec?.replicas;
  const peerPodAsLeft = async (pod: string): Promise<PeerPodAsLeft> => {
    const uid = await peerPods.createPeerPodPod(h, pod);
    const vm = await caaPodVm(h.info.libvirt.uri, pool, caaVmName(pod, uid));
    const peerPod = await writeAsCloudApiAdaptor({ name: pod, uid }, 'libvirt', vm.uuid);
    made.push({ pod, uid, vm, peerPod });
    return made.at(-1)!;
  };
  /** Whether the VM's domain, or any of its volumes or its NVRAM, is left. */
  const anythingLeft = async ({ vm }: PeerPodAsLeft) => {
    const domain = await virsh(h.info.libvirt.uri, 'dominfo', vm.uuid).then(
      () => true,
      () => false,
    );
    const volumes = (await pool.volumes()).filter((v) => v.startsWith(vm.name));
    return { domain, volumes, nvram: vm.nvram ? existsSync(vm.nvram) : false };
  };
  /** A Deployment's envFrom in cloud-api-adaptor's namespace, merged in its order (a later key wins), and its sources. */
  const deploymentEnv = async (name: string) => {
    const deployment = await h.kubeConfig
      .makeApiClient(k8s.AppsV1Api)
      .readNamespacedDeployment({ namespace: CAA, name });
    const settings: Record<string, string> = {};
    const from: string[] = [];
    for (const source of deployment.spec?.template.spec?.containers[0]?.envFrom ?? []) {
      const { configMapRef, secretRef } = source;
      const read = configMapRef
        ? h.core.readNamespacedConfigMap({ namespace: CAA, name: configMapRef.name! }).then((c) => c.data ?? {})
        : h.core
            .readNamespacedSecret({ namespace: CAA, name: secretRef!.name! })
            .then((secret) =>
              Object.fromEntries(
                Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
              ),
            );
      from.push(configMapRef ? `ConfigMap/${configMapRef.name}` : `Secret/${secretRef!.name}`);
      Object.assign(settings, await read.catch(() => ({})));
    }
    return { settings, from };
  };
  const nothingLeft = { domain: false, volumes: [], nvram: false };
  const everything = ({ vm }: PeerPodAsLeft) => ({
    domain: true,
    volumes: [`${vm.name}-cloudinit.iso`, `${vm.name}-root.qcow2`],
    nvram: Boolean(vm.nvram),
  });
  /**
   * The VMs a PeerPod's workflow made or deleted: its activities (cloudCreateAndRecordPodVm) and local activities
   * (cloudDeletePodVms, by the activity type core writes in each one's marker), in order.
   */
  const vmCalls = async (peerPod: string) =>
    ((await peerPods.handleOf(h, peerPod).fetchHistory()).events ?? [])
      .map((e) => {
        const marker = e.markerRecordedEventAttributes;
        if (marker?.markerName !== 'core_local_activity')
          return e.activityTaskScheduledEventAttributes?.activityType?.name;
        const data = Buffer.from(marker.details?.data?.payloads?.[0]?.data ?? []).toString();
        return (JSON.parse(data) as { activity_type?: string }).activity_type;
      })
      .filter((name) => /^cloud(Create|Delete)/.test(name ?? ''));

  beforeAll(async () => {
    await h.stopStarter();
    env = {
      ...process.env,
      PATH: `${await userPath({ helm: await ensureHelm() })}:${process.env.PATH}`,
      KUBECONFIG: h.info.kubernetes.kubeconfig,
      TEMPORAL_ADDRESS: h.info.temporal.address,
      TEMPORAL_NAMESPACE: h.info.temporal.namespace,
      ...helmEnv,
    };
    // cloud-api-adaptor's CRD in place of Steward's, which the stack installs; then its chart's objects.
    await crds().deleteCustomResourceDefinition({ name: 'peerpods.confidentialcontainers.org' });
    await waitFor(
      'Steward-installed PeerPod CRD gone',
      () =>
        readCrd().then(
          () => false,
          () => true,
        ),
      60_000,
    );
    await kubectl('apply', '-f', join(repoRoot, 'test', 'migration', 'cloud-api-adaptor.yaml'));
    await kubectl('wait', '--for=condition=Established', 'crd/peerpods.confidentialcontainers.org');
    crdBefore = await readCrd();
    // The user's libvirt host and pool, where the chart's defaults name a host of their own.
    pool = await podVmPool(h.info.libvirt.uri, `steward-guide-${h.marker.slice(-8)}`);
    const cm = { LIBVIRT_URI: h.libvirtRelay.uri, LIBVIRT_POOL: pool.name };
    await kubectl('-n', CAA, 'patch', 'configmap', 'peer-pods-cm', '--type=merge', '-p', JSON.stringify({ data: cm }));
    running = await peerPodAsLeft(`guide-running-${serial++}`);
    // peerpod-ctrl stopped before it deleted this one's VM: its Pod gone, its PeerPod held by the finalizer.
    inFlight = await peerPodAsLeft(`guide-inflight-${serial++}`);
    await h.core.deleteNamespacedPod({ namespace, name: inFlight.pod });
    await waitFor(
      'the PeerPod of a deleted Pod being deleted',
      async () => Boolean((await peerPods.readPeerPod(h, inFlight.peerPod))?.metadata.deletionTimestamp),
      60_000,
    );
  }, 600_000);
  afterAll(async () => {
    await h.stopWorker();
    for (const { vm } of made) {
      await virsh(h.info.libvirt.uri, 'destroy', vm.uuid).catch(() => undefined);
      await virsh(h.info.libvirt.uri, 'undefine', '--nvram', vm.uuid).catch(() => undefined);
    }
    await pool?.remove();
    // The cases below run with Steward's starter as the cluster manifests configure it.
    await h.restartStarter(manifestsStarterConfig().peerPodRuntimeClasses);
  });

  it("looks at what cloud-api-adaptor's chart left, registers the search attributes, and stops peerpod-ctrl alone", async () => {
    expect(await guide.step('check')).toMatch(
      new RegExp(
        `^v1alpha1\\n[\\s\\S]*peerpodctrl-controller-manager[\\s\\S]*peer-pods-cm[\\s\\S]*${inFlight.peerPod}`,
      ),
    );
    expect(await guide.step('temporal')).toMatch(/search attributes|registered in namespace/);
    await guide.step('stop-peerpod-ctrl');
    expect(await replicas()).toBe(0);
    expect(await anythingLeft(inFlight)).toEqual(everything(inFlight));
    await kubectl('-n', CAA, 'get', 'configmap/peer-pods-cm', 'secret/peer-pods-secret', 'secret/ssh-key-secret');
    expect((await readCrd()).metadata?.resourceVersion).toBe(crdBefore.metadata?.resourceVersion);
  });

  it("installs Steward in cloud-api-adaptor's namespace, peer pods only, leaving the CRD as it was", async () => {
    await guide.step('install');
    const crd = await readCrd();
    expect([crd.metadata?.resourceVersion, crd.spec]).toEqual([crdBefore.metadata?.resourceVersion, crdBefore.spec]);
    // The worker's and the starter's settings as their Deployments take them, run here in-process.
    const worker = await deploymentEnv('steward-worker');
    expect(worker.from).toEqual([
      'ConfigMap/peer-pods-cm',
      'Secret/peer-pods-secret',
      'ConfigMap/steward',
      'Secret/steward',
    ]);
    expect(worker.settings).toMatchObject({
      STEWARD_BACKENDS: 'peerpods',
      CLOUD_PROVIDER: 'libvirt',
      LIBVIRT_URI: h.libvirtRelay.uri,
    });
    expect(worker.settings).not.toHaveProperty('MIDONET_API_URL');
    const starter = loadStarterConfig({}, (await deploymentEnv('steward-starter')).settings);
    expect(starter.peerPodClouds).toEqual(['libvirt']);
    await h.startWorker('libvirt', { settings: worker.settings });
    await h.restartStarter(starter.peerPodRuntimeClasses);
  });

  it('finishes the deletion peerpod-ctrl left in flight: its VM and volumes deleted once, no second VM, the PeerPod released', async () => {
    await peerPods.peerPodGone(h, inFlight.peerPod, 120_000);
    expect(await anythingLeft(inFlight)).toEqual(nothingLeft);
    // Its history once it is whole: local activities' markers are written when their workflow task completes.
    await peerPods.completed(h, inFlight.peerPod);
    expect(await vmCalls(inFlight.peerPod)).toEqual(['cloudDeletePodVms']);
  });

  it('tracks a running peer pod, and when its Pod is deleted deletes its VM and volumes and releases its PeerPod', async () => {
    await tracked(running.peerPod);
    // Listed from Temporal's visibility, which follows the workflow's start by a moment.
    const id = peerPods.handleOf(h, running.peerPod).workflowId;
    await waitFor(
      'the lifecycle visible',
      async () => {
        for await (const found of h.client.workflow.list({ query: `WorkflowId = '${id}'` })) return Boolean(found);
        return false;
      },
      60_000,
    );
    expect(await guide.step('check-steward')).toContain(running.peerPod);
    expect(await anythingLeft(running)).toEqual(everything(running));
    await h.core.deleteNamespacedPod({ namespace, name: running.pod });
    await peerPods.peerPodGone(h, running.peerPod);
    expect(await anythingLeft(running)).toEqual(nothingLeft);
    // Its history once it is whole: local activities' markers are written when their workflow task completes.
    await peerPods.completed(h, running.peerPod);
    expect(await vmCalls(running.peerPod)).toEqual(['cloudDeletePodVms']);
  });

  it(
    'rolls back: no deletion left in flight, Steward uninstalled, peerpod-ctrl started again on the PeerPods as they were',
    async () => {
      const kept = await peerPodAsLeft(`guide-kept-${serial++}`);
      await tracked(kept.peerPod);
      expect(await guide.step('drain')).toBe('');
      await guide.step('stop-steward');
      await h.stopStarter();
      await h.stopWorker();
      await untilUninstallAllowed(env);
      expect(await guide.step('uninstall')).toMatch(/left for cloud-api-adaptor and peerpod-ctrl: \d+ PeerPods/);
      expect(await replicas()).toBe(1);
      const left = await peerPods.readPeerPod(h, kept.peerPod);
      expect([left?.metadata.finalizers, left?.spec, left?.metadata.deletionTimestamp]).toEqual([
        [PEERPOD_FINALIZER],
        { cloudProvider: 'libvirt', instanceID: kept.vm.uuid },
        undefined,
      ]);
      expect((await anythingLeft(kept)).domain).toBe(true);
      expect((await readCrd()).metadata?.resourceVersion).toBe(crdBefore.metadata?.resourceVersion);
    },
    POLLER_WINDOW_MS + 180_000,
  );

  it('ran every `sh` block of the guide, in its order', () => {
    expect(guide.ran).toEqual(guideBlocks(GUIDE).map((b) => b.step));
  });
});

describe.each(['libvirt', 'aws'] as const)('beside cloud-api-adaptor on %s', (provider) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = h.backend(provider);
    await h.startWorker(provider);
  });
  afterAll(() => h.stopWorker());

  it("started with the cluster manifests' settings, Steward makes no VM for a peer-pod Pod: cloud-api-adaptor does", async () => {
    const name = `manifests-${provider}-${serial++}`;
    const uid = await peerPods.createPeerPodPod(h, name);
    // The same Pod a moment later, after it was certainly seen: a PeerPod's workflow of its own shows the watch is live.
    const marker = await writeAsCloudApiAdaptor(
      { name, uid },
      provider,
      await backend.createUnmarked(caaVmName(name, uid)),
    );
    await tracked(marker);
    await expect(stateOf(name)).rejects.toThrow(/not found/i);
    expect(await backend.countForPod(uid)).toBe(0);
    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPods.peerPodGone(h, marker);
  });

  it('made a VM maker (kata-remote), still no VM from Steward for a peer-pod Pod whose VM cloud-api-adaptor made: it is tracked, and says so in an Event', async () => {
    await h.restartStarter([KATA_REMOTE]);
    const name = `made-${provider}-${serial++}`;
    // The worker is down while the Pod and cloud-api-adaptor's PeerPod appear, so the PeerPod is there when Steward
    // would make the VM.
    await h.stopWorker();
    const uid = await peerPods.createPeerPodPod(h, name);
    const instanceId = await backend.createUnmarked(caaVmName(name, uid));
    const peerPod = await writeAsCloudApiAdaptor({ name, uid }, provider, instanceId);
    await h.startWorker(provider);

    await waitFor(
      `Event ${Reason.PodVmTracked} on Pod ${name}`,
      async () => (await eventsOn(name, Reason.PodVmTracked)).length > 0,
      60_000,
    );
    expect((await stateOf(name)).state).toBe('own.madeElsewhere');
    expect(await backend.countForPod(uid)).toBe(0);
    expect(await peerPods.readPeerPod(h, name)).toBeUndefined();
    expect(await alive(backend, instanceId)).toBe(true);

    // Its deletion is peerpod-ctrl's failure path, through cloud-api-adaptor's PeerPod.
    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPods.peerPodGone(h, peerPod);
    expect(await alive(backend, instanceId)).toBe(false);
    await peerPods.completed(h, name);
    await h.restartStarter(manifestsStarterConfig().peerPodRuntimeClasses);
  });

  it('two PeerPods for one Pod (cloud-api-adaptor restarted): the older one is deleted with its VM, the newer kept, and the Pod says which', async () => {
    const name = `twice-${provider}-${serial++}`;
    const uid = await plainPod(name);
    const olderVm = await backend.createUnmarked(caaVmName(name, uid, 'old'));
    const older = await writeAsCloudApiAdaptor({ name, uid }, provider, olderVm);
    await tracked(older);
    // creationTimestamp has whole seconds: the second PeerPod is written a second later, as a restart would be.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const newerVm = await backend.createUnmarked(caaVmName(name, uid, 'new'));
    const newer = await writeAsCloudApiAdaptor({ name, uid }, provider, newerVm);

    await peerPods.peerPodGone(h, older);
    expect(await alive(backend, olderVm)).toBe(false);
    await tracked(newer);
    expect(await alive(backend, newerVm)).toBe(true);
    const [event] = await eventsOn(name, Reason.OlderPeerPodsDeleted);
    expect(event?.message).toContain(older);
    expect(event?.message).toContain(olderVm);

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPods.peerPodGone(h, newer);
    expect(await alive(backend, newerVm)).toBe(false);
  });

  it('a PeerPod naming a VM the cloud does not have is tracked, its Pod is told it has no VM (Warning Event, last error), and no VM is made for it', async () => {
    const name = `phantom-${provider}-${serial++}`;
    const uid = await plainPod(name);
    const missing = provider === 'libvirt' ? randomUUID() : `i-0${randomBytes(8).toString('hex')}`;
    const peerPod = await writeAsCloudApiAdaptor({ name, uid }, provider, missing);
    await tracked(peerPod);
    const [event] = await podVmLost(name);
    const message = `this Pod lost its VM ${missing} (it is gone from the cloud); it was made by cloud-api-adaptor (PeerPod ${peerPod}), so Steward makes no other`;
    expect([event?.type, event?.involvedObject.uid, event?.message]).toEqual([
      'Warning',
      uid,
      expect.stringContaining(message),
    ]);
    expect((await stateOf(peerPod)).lastError).toMatchObject({ reason: Reason.PodVmLost });
    expect(await backend.countForPod(uid)).toBe(0);

    // An operator's refresh looks again: it says the same and promises nothing it does not do.
    await executeUpdateWhenReady(peerPods.handleOf(h, peerPod), refreshUpdate, {
      reason: 'where is the VM?',
      requestedBy: 'e2e',
    });
    await waitFor(
      'the refresh looked again',
      async () => {
        const view = await stateOf(peerPod);
        return view.state === 'tracked.tracking' && view.actions.some((a) => a.action === 'refresh') ? view : undefined;
      },
      30_000,
    );
    expect((await stateOf(peerPod)).lastError).toMatchObject({ reason: Reason.PodVmLost });
    const told = (await h.core.listNamespacedEvent({ namespace })).items.filter((e) =>
      [name, peerPod].includes(e.involvedObject.name ?? ''),
    );
    expect(told.map((e) => e.message).join('\n')).not.toMatch(/creating it again|made again/);
    expect(await backend.countForPod(uid)).toBe(0);

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPods.peerPodGone(h, peerPod);
  });

  it("cloud-api-adaptor's PeerPod deleted by hand while its Pod runs: the VM goes with it, the Pod is told (PodVmLost), and Steward makes none", async () => {
    const name = `handdeleted-${provider}-${serial++}`;
    const uid = await plainPod(name);
    const instanceId = await backend.createUnmarked(caaVmName(name, uid));
    const peerPod = await writeAsCloudApiAdaptor({ name, uid }, provider, instanceId);
    await tracked(peerPod);

    await h.custom.deleteNamespacedCustomObject({ ...PEERPOD_API, namespace, name: peerPod });
    const [event] = await podVmLost(name);
    expect([event?.type, event?.involvedObject.uid, event?.message]).toEqual([
      'Warning',
      uid,
      expect.stringContaining(
        `this Pod lost its VM ${instanceId} (its PeerPod was deleted while the Pod runs, and the VM goes with it)`,
      ),
    ]);
    await peerPods.peerPodGone(h, peerPod);
    expect(await alive(backend, instanceId)).toBe(false);
    expect(await backend.countForPod(uid)).toBe(0);
    await h.core.deleteNamespacedPod({ namespace, name });
  });

  it('a PeerPod whose VM was recorded in another cloud is not released when its Pod goes: stuck with CloudMismatch, the VM kept', async () => {
    const name = `elsewhere-${provider}-${serial++}`;
    const uid = await plainPod(name);
    const instanceId = await backend.createUnmarked(caaVmName(name, uid));
    const elsewhere = `${await backend.provider.identity()}-elsewhere`;
    const peerPod = await writeAsCloudApiAdaptor({ name, uid }, provider, instanceId, {
      labels: { 'app.kubernetes.io/managed-by': 'steward' },
      annotations: { [VM_CLOUD_ANNOTATION]: elsewhere },
    });
    await tracked(peerPod);

    await h.core.deleteNamespacedPod({ namespace, name });
    const stuck = await waitFor(
      `${peerPod} stuck`,
      async () => {
        const view = await stateOf(peerPod);
        return view.state === 'stuck' ? view : undefined;
      },
      60_000,
    );
    expect(stuck.lastError).toMatchObject({
      reason: 'CloudMismatch',
      message: expect.stringContaining(elsewhere) as unknown,
    });
    expect((await peerPods.readPeerPod(h, peerPod))?.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);
    expect(await alive(backend, instanceId)).toBe(true);

    // An operator who knows better gives the VM up; it is deleted here by hand.
    await executeUpdateWhenReady(peerPods.handleOf(h, peerPod), cleanupUpdate, {
      mode: 'orphan',
      requestedBy: 'e2e',
      reason: 'the VM is in this cloud after all',
    });
    await peerPods.peerPodGone(h, peerPod);
    await backend.deleteOutOfBand(instanceId);
  });
});

describe('beside cloud-api-adaptor before v0.20.0 (libvirt)', () => {
  beforeAll(() => h.startWorker('libvirt'));
  afterAll(() => h.stopWorker());

  it("a PeerPod holding a numeric domain ID: the domain, being the Pod's VM by name, is deleted when the PeerPod is", async () => {
    const backend = h.backend('libvirt');
    const name = `old-caa-${serial++}`;
    const uid = await plainPod(name);
    const domain = caaVmName(name, uid, 'old');
    const uuid = await backend.createUnmarked(domain);
    await virsh(h.info.libvirt.uri, 'start', domain);
    const domainId = (await virsh(h.info.libvirt.uri, 'domid', domain)).trim();
    expect(domainId).toMatch(/^\d+$/);
    const peerPod = await writeAsCloudApiAdaptor({ name, uid }, 'libvirt', domainId);
    await tracked(peerPod);

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPods.peerPodGone(h, peerPod);
    expect(await alive(backend, uuid)).toBe(false);
  });
});

describe('beside peerpod-ctrl serving a cloud Steward does not (azure)', () => {
  beforeAll(() => h.startWorker('libvirt'));
  afterAll(() => h.stopWorker());

  const noWorkflow = (name: string) => expect(peerPods.handleOf(h, name).describe()).rejects.toThrow(/not found/i);
  /**
   * A libvirt PeerPod of cloud-api-adaptor's, written after `after` was changed: once it is tracked, the starter has
   * seen `after`'s change too (one informer, events in order), so what Steward did not do for it, it never will.
   */
  const seenSince = async () => {
    const name = `control-${serial++}`;
    const uid = await plainPod(name);
    const peerPod = await writeAsCloudApiAdaptor(
      { name, uid },
      'libvirt',
      await h.backend('libvirt').createUnmarked(caaVmName(name, uid)),
    );
    await tracked(peerPod);
    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPods.peerPodGone(h, peerPod);
  };

  it('an azure PeerPod is deleted by its own controller: Steward never starts a workflow for it nor touches its finalizer', async () => {
    const name = `azure-${serial++}`;
    const uid = await plainPod(name);
    const azure = await writeAsCloudApiAdaptor(
      { name, uid },
      'azure',
      `/subscriptions/0/virtualMachines/podvm-${name}`,
    );
    await seenSince();
    await noWorkflow(azure);
    expect((await peerPods.readPeerPod(h, azure))?.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);

    // Deleted (its Pod's garbage collection would do the same): the finalizer holds it for its controller, not for us.
    await h.custom.deleteNamespacedCustomObject({ ...PEERPOD_API, namespace, name: azure });
    await seenSince();
    const held = await peerPods.readPeerPod(h, azure);
    expect([held?.metadata.deletionTimestamp, held?.metadata.finalizers]).toEqual([
      expect.any(String),
      [PEERPOD_FINALIZER],
    ]);
    await noWorkflow(azure);

    // peerpod-ctrl, having deleted its VM in azure, lets it go.
    await h.custom.patchNamespacedCustomObject(
      { ...PEERPOD_API, namespace, name: azure, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await peerPods.peerPodGone(h, azure);
    await noWorkflow(azure);
    await h.core.deleteNamespacedPod({ namespace, name });
  });
});
