import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { startInProcessWorker, type InProcessWorker } from '../test/support';
import { observedSignal, stateQuery, type Observation } from '../model/messages';
import type { ObjectRef } from '../model/naming';
import { KNOWN_PATCHES } from '../model/patches';
import type { PeerPodProjection } from '../model/peerpod-projection';

/**
 * A peer pod's lifecycle on the stack's real Temporal server, with fakes for the cloud and Kubernetes calls: an
 * observation that would have it serve the Pod's next incarnation is taken once the API server can be asked, however
 * long that takes. The starter delivers an observation once: dropped for want of a read, the old incarnation's VM and
 * PeerPod would be kept for ever (a chaos run left such a PeerPod's finalizer held).
 */
const taskQueue = `peerpod-lifecycle-${Date.now()}`;

describe('a peer pod whose Pod is replaced while the API server does not answer', () => {
  const ref: ObjectRef = { kind: 'PeerPod', namespace: 'default', name: `pp-${Date.now()}` };
  let client: Client;
  let worker: InProcessWorker;
  const created: string[] = [];
  const deleted: string[] = [];
  // The API server holds the next incarnation, but the first reads of it fail (more than a bounded retry allows).
  let unreachableReads = 5;
  // Then a read refused for good.
  let forbidden = false;

  beforeAll(async () => {
    worker = await startInProcessWorker({
      taskQueue,
      workflowsPath: require.resolve('./index'),
      activities: {
        cloudCreateAndRecordPodVm: ({ podUid }: { podUid: string }) => {
          created.push(podUid);
          return Promise.resolve({
            outcome: 'created',
            vm: { provider: 'libvirt', instanceId: `vm-of-${podUid}`, cloud: 'test' },
            peerPod: { name: ref.name, uid: `peerpod-of-${podUid}` },
          });
        },
        cloudDeletePodVms: ({ vm }: { vm?: { instanceId: string } }) => {
          deleted.push(vm?.instanceId ?? '');
          return Promise.resolve({ deleted: [vm?.instanceId], absent: [] });
        },
        readIncarnation: () => {
          if (forbidden)
            throw ApplicationFailure.nonRetryable('pods "x" is forbidden (the worker\'s RBAC)', 'KubernetesForbidden');
          if (unreachableReads-- > 0)
            throw ApplicationFailure.retryable('connect ECONNREFUSED (kube-apiserver restarting)', 'Unavailable');
          return Promise.resolve({ uid: 'pod-b' });
        },
        releaseFinalizer: () => Promise.resolve({ released: true }),
        retireOlderPeerPods: () => Promise.resolve({ deleted: [] }),
        recordObjectEvent: () => Promise.resolve({ found: true }),
      },
    });
    client = worker.client;
  });

  afterAll(() => worker?.stop());

  const pod = (uid: string): Observation<PeerPodProjection> => ({
    ref,
    uid,
    generation: 0,
    deleting: false,
    gone: false,
    finalizers: [],
    projection: { source: 'Pod', runtimeClassName: 'kata-remote' },
  });
  const until = async (what: string, check: () => Promise<boolean> | boolean, ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 250)))
      if (await check()) return;
    throw new Error(`not within ${ms / 1000} s: ${what}`);
  };

  it("serves the next incarnation once a read answers: the old one's VM deleted, the new one's made", async () => {
    const handle = await client.workflow.start('peerPodLifecycle', {
      taskQueue,
      workflowId: `peerpod/${ref.namespace}/${ref.name}-a`,
      args: [{ ref, observation: pod('pod-a'), patches: KNOWN_PATCHES }],
    });
    await until('tracking pod-a', async () => (await handle.query(stateQuery)).state === 'own.tracking', 20_000);

    await handle.signal(observedSignal, pod('pod-b'));
    // Five failed reads back off 1 + 2 + 4 + 8 + 16 s before the sixth answers; a loaded CI adds its workflow tasks'
    // own time (a CI run on 2026-12-06 was still waiting after 60 s). The bound is for a wedge, not a speed.
    await until('pod-a VM deleted', () => deleted.includes('vm-of-pod-a'), 120_000);
    // Served from the moment it is the incarnation's uid; its VM is made by the activity after (CI: asserted between).
    await until(
      'pod-b served and its VM made',
      async () => (await handle.query(stateQuery)).uid === 'pod-b' && created.includes('pod-b'),
      20_000,
    );
    expect(created).toEqual(['pod-a', 'pod-b']);
    expect(unreachableReads).toBeLessThan(0);
    await handle.terminate('checked');
  }, 180_000);

  it('a read refused for good (no retry mends it) drops the observation, said in the log; the workflow goes on', async () => {
    forbidden = true;
    const handle = await client.workflow.start('peerPodLifecycle', {
      taskQueue,
      workflowId: `peerpod/${ref.namespace}/${ref.name}-b`,
      args: [{ ref, observation: pod('pod-c'), patches: KNOWN_PATCHES }],
    });
    await until('tracking pod-c', async () => (await handle.query(stateQuery)).state === 'own.tracking', 20_000);
    await handle.signal(observedSignal, pod('pod-d'));
    await until(
      'the read asked',
      async () => JSON.stringify(await handle.fetchHistory()).includes('forbidden'),
      20_000,
    );
    const { status } = await handle.describe();
    expect(status.name).toBe('RUNNING');
    expect(await handle.query(stateQuery)).toMatchObject({ state: 'own.tracking', uid: 'pod-c' });
    expect(deleted).not.toContain('vm-of-pod-c');
    await handle.terminate('checked');
  }, 60_000);
});
