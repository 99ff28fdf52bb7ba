// Peer pods end to end (seed 002), on a stack of their own: Pods of the `kata-remote` runtime class created and
// deleted in the real API server, the real starter and worker, VMs in the real libvirt daemon and in the EC2 test
// server (moto), PeerPods deleted by the real garbage collector. Each case reads the cloud directly, bypassing Steward.
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { median, timeAgainstVirsh, type Backend } from '../support/cloud-backends';
import { virsh } from '../../deploy/local/libvirt';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { PEERPOD_FINALIZER, Reason } from '../../model/vocabulary';
import { vmName } from '../../model/vm-naming';
import { PEERPOD_API, TASK_QUEUE, workflowId } from '../../model/naming';
import { spawnWorker, stewardProcess } from '../support/pusher-harness';
import { recordHistory } from '../replay/record';
import { waitFor } from '../support';
import { observedSignal } from '../../model/messages';
import { randomUUID } from 'node:crypto';
import * as peerPods from '../support/peerpods-harness';
import { AWS_TEST_CREDENTIALS, namespace, type PeerPodHarness, type ProviderName } from '../support/peerpods-harness';

const log = pino({ level: process.env.STEWARD_E2E_LOG ?? 'error' });
let serial = 0;
let stack: Stack;
let h: PeerPodHarness;

beforeAll(async () => {
  // Its own stack: the lost-reply case kills the worker, and the starter here watches every Pod in the cluster.
  stack = await startPrivateStack();
  h = await peerPods.startPeerPodHarness(stack.info, { identity: 'e2e-peerpods', log });
});
afterAll(async () => {
  await h?.stop();
  await stack?.stop();
});

const createPeerPodPod = (name: string) => peerPods.createPeerPodPod(h, name);
const readPeerPod = (name: string) => peerPods.readPeerPod(h, name);
const recordedPeerPod = (name: string, timeoutMs?: number) => peerPods.recordedPeerPod(h, name, timeoutMs);
const peerPodGone = (name: string) => peerPods.peerPodGone(h, name);
const handleOf = (name: string) => peerPods.handleOf(h, name);
const stateOf = (name: string) => peerPods.stateOf(h, name);
const completed = (name: string) => peerPods.completed(h, name);

/** Every string and payload (decoded) of a history, joined: what anyone reading the history could see. */
function historyText(history: unknown): string {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (value instanceof Uint8Array) texts.push(Buffer.from(value).toString('utf8'));
    else if (typeof value === 'string') texts.push(value);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(history);
  return texts.join('\n');
}

/** How each cloud's create is caught between the VM being made and its reply reaching Temporal. */
/** How each cloud's reply is lost once the VM is made, and how the cloud comes back for the next worker. */
const lostReply: Record<
  ProviderName,
  { vmMade: (pod: () => { name: string; uid: string }) => Promise<unknown>; restore: () => Promise<void> }
> = {
  // virsh define + start are separate calls: as soon as the domain is defined (looked up by its name, one quick call)
  // libvirt is cut off for the worker, so its create cannot report success however fast it is, then it is killed.
  // (Counting the VMs by pod UID reads every domain's metadata: with a few domains around, too slow to win the race.)
  libvirt: {
    vmMade: async (pod) => {
      const defined = async () =>
        pod().uid !== '' &&
        (await virsh(stack.info.libvirt.uri, 'domstate', vmName(pod().name, pod().uid)).then(
          () => true,
          () => false,
        ));
      await waitFor('the VM to be defined', defined, 60_000, 5);
      await h.libvirtRelay.stop();
    },
    restore: () => h.libvirtRelay.start(),
  },
  // One call makes the instance: its reply is swallowed by the relay.
  aws: { vmMade: () => h.ec2Relay.swallowNextCreateReply(), restore: () => Promise.resolve() },
};

describe.each(['libvirt', 'aws'] as const)('peer pods on %s', (provider) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = h.backend(provider);
    await h.startWorker(provider);
  });
  afterAll(async () => {
    await h.stopWorker();
  });

  /**
   * The live Pod `name` lost VM `lost` (`why`): another VM is made for it, its PeerPod and annotation name it, exactly
   * one VM carries its UID, and a PodVmRecreated Event says which VM it replaces and why.
   */
  async function expectVmMadeAgain(name: string, uid: string, lost: string, why: string): Promise<void> {
    const made = await waitFor(
      'a PeerPod naming another VM',
      async () => {
        const p = await peerPods.readPeerPod(h, name);
        const id = p?.spec.instanceID;
        return p && !p.metadata.deletionTimestamp && id && id !== lost ? id : undefined;
      },
      60_000,
    );
    await waitFor('exactly one VM for the Pod', async () => (await backend.countForPod(uid)) === 1, 60_000);
    expect(await backend.recordedPodUid(made)).toBe(uid);
    const pod = await h.core.readNamespacedPod({ namespace, name });
    expect(pod.metadata?.annotations?.['steward.dev/podvm-instance']).toBe(`${provider}/${made}`);
    const events = await h.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${name},reason=${Reason.PodVmRecreated}`,
    });
    expect(events.items.map((e) => e.message)).toEqual([
      expect.stringContaining(`it replaces VM ${lost}, lost: ${why}`),
    ]);
  }

  it('a peer pod gets one running VM with its UID and a PeerPod naming it; deleting the Pod deletes both', async () => {
    const name = `pp-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const peerPod = await recordedPeerPod(name);
    const instanceId = peerPod.spec.instanceID!;
    expect(peerPod.spec.cloudProvider).toBe(provider);
    expect(peerPod.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);
    expect(peerPod.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Pod', name, uid, controller: true }),
    ]);
    expect(await backend.countForPod(uid)).toBe(1);
    expect(await backend.recordedPodUid(instanceId)).toBe(uid);
    const seen = await backend.provider.get({ instanceId });
    // moto reports a new instance as pending for a while.
    expect(provider === 'libvirt' ? ['running'] : ['pending', 'running']).toContain(
      seen.exists ? seen.state : 'absent',
    );
    const pod = await h.core.readNamespacedPod({ namespace, name });
    expect(pod.metadata?.annotations?.['steward.dev/podvm-instance']).toBe(`${provider}/${instanceId}`);
    expect((await stateOf(name)).state).toBe('own.tracking');

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    expect(await backend.countForPod(uid)).toBe(0);
    await completed(name);
    await recordHistory(h.client, workflowId({ kind: 'PeerPod', namespace, name }), `peerpod-${provider}-pod-deleted`);
    // Credentials stay in the worker: no input, result or failure in the history carries them.
    const history = historyText(await handleOf(name).fetchHistory());
    for (const secret of Object.values(AWS_TEST_CREDENTIALS)) expect(history).not.toContain(secret);
    expect(history).toContain(peerPod.spec.instanceID);
  });

  it('a PeerPod deleted by hand while its Pod lives: its VM goes with it, then another VM and PeerPod are made for the Pod, which says so', async () => {
    const name = `lost-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const lost = (await recordedPeerPod(name)).spec.instanceID!;
    await h.custom.deleteNamespacedCustomObject({ ...PEERPOD_API, namespace, name });

    await expectVmMadeAgain(name, uid, lost, `its PeerPod ${name} was deleted, and the VM with it`);
    expect((await stateOf(name)).state).toBe('own.tracking');

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    await waitFor('no VM left for the Pod', async () => (await backend.countForPod(uid)) === 0, 60_000);
  });

  it('a VM gone from the cloud while its Pod lives is seen within seconds by the worker (no refresh, its drift check 30 min away): another VM is made for the Pod, which says so', async () => {
    const name = `vanished-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const lost = (await recordedPeerPod(name)).spec.instanceID!;
    // The watch compares one look with the last (every 5 s by default): it must have seen the VM before it goes.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await backend.deleteOutOfBand(lost);
    // Nothing else is done: the worker's watch of its VMs sees it gone and tells the peer pod.
    await expectVmMadeAgain(name, uid, lost, 'it was gone from the cloud');

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    await waitFor('no VM left for the Pod', async () => (await backend.countForPod(uid)) === 0, 60_000);
  });

  it('a VM shut off while its Pod lives (its host restarted) is seen within seconds by the worker (no refresh, its drift check 30 min away): the same VM is started again, and the Pod says so', async () => {
    const name = `shutoff-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const instanceId = (await recordedPeerPod(name)).spec.instanceID!;
    await backend.stopOutOfBand(instanceId);
    // Nothing else is done: the worker's watch of its VMs sees it shut off and tells the peer pod (VmStarted below).
    await waitFor(
      'the VM running again',
      async () =>
        /^(pending|running)$/.test(((await backend.provider.get({ instanceId })) as { state?: string }).state ?? ''),
      60_000,
    );
    await waitFor(
      'tracking, no error',
      async () => {
        const view = await stateOf(name);
        return view.state === 'own.tracking' && !view.lastError;
      },
      30_000,
    );
    // The same VM: none made, the PeerPod unchanged.
    expect(await backend.countForPod(uid)).toBe(1);
    expect((await recordedPeerPod(name)).spec.instanceID).toBe(instanceId);
    const events = await h.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${name},reason=${Reason.VmStarted}`,
    });
    expect(events.items.map((e) => e.message)).toEqual([`this peer pod's VM ${instanceId} was stopped: started again`]);

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    await waitFor('no VM left for the Pod', async () => (await backend.countForPod(uid)) === 0, 60_000);
  });

  it('a PeerPod observation under a UID the API server does not hold (here a made-up one) is checked against it and dropped: the VM stays', async () => {
    const name = `forged-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const vm = (await recordedPeerPod(name)).spec.instanceID!;
    await waitFor('tracking', async () => (await stateOf(name)).state === 'own.tracking' || undefined, 30_000);
    const handle = h.client.workflow.getHandle(workflowId({ kind: 'PeerPod', namespace, name }));
    // Local activities run, by their markers' payloads.
    const reads = async () =>
      ((await handle.fetchHistory()).events ?? [])
        .flatMap((e) => Object.values(e.markerRecordedEventAttributes?.details ?? {}))
        .flatMap((d) => d.payloads ?? [])
        .filter((p) =>
          Buffer.from(p.data ?? [])
            .toString()
            .includes('"readIncarnation"'),
        ).length;
    const readsBefore = await reads();
    const recorded = (await peerPods.readPeerPod(h, name))!;
    // Its PeerPod being deleted, under a UID nobody wrote: believed, it would delete the VM and make another.
    await handle.signal(observedSignal, {
      ref: { kind: 'PeerPod', namespace, name },
      uid: randomUUID(),
      generation: 1,
      deleting: true,
      gone: false,
      finalizers: [PEERPOD_FINALIZER],
      projection: {
        source: 'PeerPod',
        cloudProvider: recorded.spec.cloudProvider,
        instanceID: vm,
        ownerUid: uid,
        ownerName: name,
      },
    });
    await waitFor('the claim checked', async () => ((await reads()) > readsBefore ? true : undefined), 30_000);
    await waitFor('tracking again', async () => (await stateOf(name)).state === 'own.tracking' || undefined, 30_000);
    expect((await peerPods.readPeerPod(h, name))?.spec.instanceID).toBe(vm);
    expect(await backend.countForPod(uid)).toBe(1);
    expect((await backend.provider.get({ instanceId: vm })).exists).toBe(true);

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
  });

  it('a VM deleted out of band: deleting the Pod still completes (not found is done)', async () => {
    const name = `pp-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const { instanceID } = (await recordedPeerPod(name)).spec;
    await backend.deleteOutOfBand(instanceID!);
    await waitFor('the VM gone from the cloud', async () => (await backend.countForPod(uid)) === 0, 30_000);
    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    await completed(name);
  });

  it("the failure path: a PeerPod of cloud-api-adaptor deleted by the garbage collector with its finalizer: its VM is deleted from the PeerPod's fields, then it is released", async () => {
    const podName = `caa-${provider}-${serial++}`;
    // A Pod Steward makes no VM for (no peer-pod runtime class), a VM without Steward's marker, a PeerPod as
    // cloud-api-adaptor names and writes it: only the PeerPod ties them together.
    const pod = await h.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: podName },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    const instanceId = await backend.createUnmarked(`podvm-${podName}-${h.marker.slice(-8)}`);
    const peerPodName = await peerPods.writeAsCloudApiAdaptor(
      h,
      { name: podName, uid: pod.metadata!.uid! },
      provider,
      instanceId,
      { suffix: 'q7z9r' },
    );
    await waitFor(
      'the PeerPod tracked',
      async () =>
        (await stateOf(peerPodName).catch(() => undefined))?.state === 'tracked.tracking' ? true : undefined,
      30_000,
    );
    expect((await backend.provider.get({ instanceId })).exists).toBe(true);

    await h.core.deleteNamespacedPod({ namespace, name: podName });
    await peerPodGone(peerPodName);
    const seen = await backend.provider.get({ instanceId });
    expect(seen.exists && seen.state !== 'deleting').toBe(false);
    await completed(peerPodName);
    await recordHistory(
      h.client,
      workflowId({ kind: 'PeerPod', namespace, name: peerPodName }),
      `peerpod-${provider}-failure-path`,
    );
  });

  it('lost reply: the worker killed right after the VM is made; after a restart there is exactly one VM for the Pod', async () => {
    await h.stopWorker();
    const child = await spawnWorker(h, h.env(provider));
    const name = `pp-${provider}-${serial++}`;
    let uid = '';
    try {
      const made = lostReply[provider].vmMade(() => ({ name, uid }));
      uid = await createPeerPodPod(name);
      await made;
    } finally {
      child.kill('SIGKILL');
      await lostReply[provider].restore();
    }
    await h.startWorker(provider);
    // The first attempt's reply never reached Temporal: the create activity runs again (attempt 2 or later).
    const peerPod = await recordedPeerPod(name, 120_000);
    expect(await backend.countForPod(uid)).toBe(1);
    expect(await backend.recordedPodUid(peerPod.spec.instanceID!)).toBe(uid);
    const history = await handleOf(name).fetchHistory();
    const createAttempts = (history.events ?? [])
      .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
      .map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 1);
    expect(Math.max(...createAttempts)).toBeGreaterThanOrEqual(2);

    await h.core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    expect(await backend.countForPod(uid)).toBe(0);
  });
});

describe('VM create and delete through Steward, compared with virsh (same run, printed)', () => {
  beforeAll(async () => {
    await h.startWorker('libvirt');
  });
  afterAll(async () => {
    await h.stopWorker();
  });

  it('times Pod created → PeerPod names a running domain, and Pod deleted → domain gone, against virsh define+start and destroy+undefine', async () => {
    const backend = h.backend('libvirt');
    const { uri } = h.info.libvirt;
    const rounds = 3;
    const times = await timeAgainstVirsh(uri, rounds, (i) => {
      const name = `pp-timing-${serial++}`;
      let uid = '';
      return {
        domain: `${h.marker}-virsh-${i}`,
        async create() {
          uid = await createPeerPodPod(name);
          await waitFor(
            `PeerPod ${name} naming its VM`,
            async () => (await readPeerPod(name))?.spec.instanceID,
            60_000,
            20,
          );
        },
        async remove() {
          await h.core.deleteNamespacedPod({ namespace, name });
          await waitFor('the domain gone', async () => (await backend.countForPod(uid)) === 0, 60_000, 20);
        },
      };
    });
    const row = (what: string, steward: number[], direct: number[]) =>
      `| ${what} | ${median(steward).toFixed(0)} ms | ${median(direct).toFixed(0)} ms | ${(median(steward) - median(direct)).toFixed(0)} ms |`;
    console.log(
      [
        `VM lifecycle through Steward vs virsh (libvirt qemu, 64 MiB diskless domain; median of ${rounds}; Steward's time includes the watch, the workflow, the PeerPod write):`,
        '| step | Steward | virsh | difference |',
        '|---|---|---|---|',
        row(
          'create: Pod created → PeerPod names a running domain (virsh: define+start)',
          times.create,
          times.virshCreate,
        ),
        row('delete: Pod deleted → domain gone (virsh: destroy+undefine)', times.delete, times.virshDelete),
      ].join('\n'),
    );
    expect(times.create).toHaveLength(rounds);
  });
});

describe('VM deletion fails: libvirt unreachable', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = h.backend('libvirt');
    await h.startWorker('libvirt');
  });
  afterAll(async () => {
    await h.libvirtRelay.start().catch(() => undefined);
    await h.stopWorker();
  });

  it("the PeerPod keeps its finalizer and the workflow shows stuck everywhere; the operator's retry fails while libvirt is gone and says so; a worker started after libvirt's return finishes it at once", async () => {
    const name = `pp-down-${serial++}`;
    const ref = { kind: 'PeerPod' as const, namespace, name };
    // Started ahead of the starter with an hour-long stuck retry: only the operator or a wake moves it on here.
    await h.client.workflow.start('peerPodLifecycle', {
      workflowId: workflowId(ref),
      taskQueue: TASK_QUEUE,
      args: [{ ref, timings: { stuckRetryMs: 60 * 60_000 } }],
    });
    const uid = await createPeerPodPod(name);
    await recordedPeerPod(name);
    await h.libvirtRelay.stop();
    await h.core.deleteNamespacedPod({ namespace, name });

    // The delete activity's bounded retries (1 + 2 + 4 + 8 s between five attempts), then stuck.
    const view = await waitFor(
      'the workflow to be stuck',
      async () => ((await stateOf(name)).state === 'stuck' ? stateOf(name) : undefined),
      90_000,
    );
    expect(view.lastError?.reason).toBe('CloudUnavailable');
    const peerPod = (await readPeerPod(name))!;
    expect(peerPod.metadata.deletionTimestamp).toBeDefined();
    expect(peerPod.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);
    expect(await backend.countForPod(uid)).toBe(1);
    await waitFor(
      'visibility to list the workflow as stuck',
      async () => {
        const ids: string[] = [];
        for await (const wf of h.client.workflow.list({
          query: `WorkflowId="${workflowId(ref)}" AND LifecycleState="stuck"`,
        }))
          ids.push(wf.workflowId);
        return ids.length === 1 || undefined;
      },
      30_000,
    );
    const events = await h.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${name},involvedObject.kind=PeerPod`,
    });
    const warning = events.items.find((e) => e.type === 'Warning' && e.reason === 'CloudUnavailable');
    expect(warning?.message).toContain('stuck while deleting the VM');

    // The operator's retry is taken at once and recorded; libvirt still gone, it fails as the others did.
    const retry = await stewardProcess(
      h,
      'cleanup',
      'peerpod',
      `${namespace}/${name}`,
      '--via',
      'temporal',
      '--mode',
      'retry',
      '--reason',
      'try again now',
      '--by',
      'oncall',
    );
    expect(retry).toMatchObject({ code: 0 });
    const failed = await waitFor(
      'the retry to fail and the workflow to be stuck again',
      async () => {
        const now = await stateOf(name);
        return now.state === 'stuck' && (now.lastError?.failures ?? 0) > (view.lastError?.failures ?? 0)
          ? now
          : undefined;
      },
      90_000,
    );
    expect(failed.lastError?.reason).toBe('CloudUnavailable');
    expect(failed.actions).toContainEqual(
      expect.objectContaining({ action: 'cleanup', mode: 'retry', requestedBy: 'oncall', reason: 'try again now' }),
    );
    expect(await backend.countForPod(uid)).toBe(1);

    // A worker started after libvirt's return cannot know it was gone: its first answer from libvirt wakes the stuck
    // lifecycles, so the VM goes now, not at the hour-long retry.
    await h.stopWorker();
    await h.libvirtRelay.start();
    const started = Date.now();
    await h.startWorker('libvirt');
    await peerPodGone(name);
    console.log(`worker started after libvirt's return → stuck peer pod's VM deleted: ${Date.now() - started} ms`);
    expect(await backend.countForPod(uid)).toBe(0);
    await completed(name);
    await recordHistory(h.client, workflowId(ref), 'peerpod-stuck-cleanup-retry');
  });

  it('after recovery the stuck retry timer finishes it without an operator: VM deleted, PeerPod released', async () => {
    const name = `pp-recover-${serial++}`;
    const ref = { kind: 'PeerPod' as const, namespace, name };
    // Started ahead of the starter with a short stuck retry (the starter's signal then finds it running).
    await h.client.workflow.start('peerPodLifecycle', {
      workflowId: workflowId(ref),
      taskQueue: TASK_QUEUE,
      args: [{ ref, timings: { stuckRetryMs: 3_000 } }],
    });
    const uid = await createPeerPodPod(name);
    await recordedPeerPod(name);
    await h.libvirtRelay.stop();
    await h.core.deleteNamespacedPod({ namespace, name });
    await waitFor('the workflow to be stuck', async () => (await stateOf(name)).state === 'stuck' || undefined, 90_000);
    expect((await readPeerPod(name))?.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);

    await h.libvirtRelay.start();
    await peerPodGone(name);
    expect(await backend.countForPod(uid)).toBe(0);
    await completed(name);
  });

  it("libvirt's return wakes a stuck peer pod at once, without its retry timer: the worker asks the cloud again while it does not answer", async () => {
    const name = `pp-woken-${serial++}`;
    const ref = { kind: 'PeerPod' as const, namespace, name };
    await h.client.workflow.start('peerPodLifecycle', {
      workflowId: workflowId(ref),
      taskQueue: TASK_QUEUE,
      args: [{ ref, timings: { stuckRetryMs: 60 * 60_000 } }],
    });
    const uid = await createPeerPodPod(name);
    await recordedPeerPod(name);
    await h.libvirtRelay.stop();
    await h.core.deleteNamespacedPod({ namespace, name });
    await waitFor('the workflow to be stuck', async () => (await stateOf(name)).state === 'stuck' || undefined, 90_000);
    await waitFor(
      'visibility to list it as stuck',
      async () => {
        const ids: string[] = [];
        for await (const wf of h.client.workflow.list({
          // What the worker's wake asks for (started here, it has no K8sKind/K8sName of the starter's).
          query: `WorkflowId="${workflowId(ref)}" AND LifecycleState="stuck"`,
        }))
          ids.push(wf.workflowId);
        return ids.length === 1 || undefined;
      },
      30_000,
    );

    const back = Date.now();
    await h.libvirtRelay.start();
    await peerPodGone(name);
    // The worker's probe runs every 5 s; the stuck timer would have waited an hour.
    console.log(`libvirt back → stuck peer pod's VM deleted and PeerPod released: ${Date.now() - back} ms`);
    expect(Date.now() - back).toBeLessThan(20_000);
    expect(await backend.countForPod(uid)).toBe(0);
    await completed(name);
  });
});
