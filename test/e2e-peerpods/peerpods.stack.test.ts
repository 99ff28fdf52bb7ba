// Peer pods end to end (seed 002), on a stack of their own: Pods of the `kata-remote` runtime class created and
// deleted in the real API server, the real starter and worker, VMs in the real libvirt daemon and in the EC2 test
// server (moto), PeerPods deleted by the real garbage collector. Each case reads the cloud directly, bypassing Steward.
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { rmSync } from 'node:fs';
import { createServer as createHttpServer, request, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import pino from 'pino';
import { awsBackend, libvirtBackend, plainDomainFile, TEST_AMI, type Backend } from '../../activities/cloud/testing/backends';
import { virsh } from '../../deploy/local/libvirt';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { createStarter, type Starter } from '../../starter/controller';
import { loadWorkerConfig, runWorker, type RunningWorker } from '../../worker';
import { PEERPOD_FINALIZER } from '../../workflows/machines/peerpod';
import { stateQuery, type LifecycleStateView } from '../../workflows/messages';
import { PEERPOD_API, workflowId } from '../../workflows/naming';
import { spawnWorker, stewardProcess } from '../e2e/harness';
import { recordHistory } from '../replay/record';
import { waitFor } from '../support';

const namespace = 'default';
/** This run's marker: the sweeper of another test file never takes these VMs for its own. */
const marker = `steward-e2e-${Date.now().toString(36)}`;
const log = pino({ level: process.env.STEWARD_E2E_LOG ?? 'error' });
let serial = 0;

interface PeerPodObject {
  metadata: { name: string; uid: string; finalizers?: string[]; deletionTimestamp?: string; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  spec: { cloudProvider?: string; instanceID?: string };
}

let stack: Stack;
let connection: Connection;
let client: Client;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;
let starter: Starter;
let worker: RunningWorker | undefined;

/**
 * libvirtd as the worker reaches it: a Unix-socket relay to the daemon that the test can cut and restore, so "libvirt
 * is down" is seen by Steward alone (the daemon and its VMs stay up for everything else).
 */
class LibvirtRelay {
  readonly path = `/tmp/${marker}-libvirt.sock`;
  private server?: Server;
  private readonly open = new Set<Socket>();
  constructor(private readonly daemon = '/run/libvirt/libvirt-sock') {}
  get uri() {
    return `qemu+unix:///system?socket=${this.path}`;
  }
  async start(): Promise<void> {
    rmSync(this.path, { force: true });
    this.server = createServer((socket) => {
      const upstream = connect(this.daemon);
      for (const s of [socket, upstream]) {
        this.open.add(s);
        s.on('close', () => this.open.delete(s));
        s.on('error', () => undefined);
      }
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.path, resolve));
  }
  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
const relay = new LibvirtRelay();

/**
 * The EC2 endpoint as the worker reaches it: an HTTP relay to the test server that can swallow the reply of the next
 * RunInstances after the server made the instance: a lost reply, exactly.
 */
class Ec2Relay {
  private server?: HttpServer;
  private swallow?: () => void;
  url = '';
  async start(target: string): Promise<void> {
    const upstream = new URL(target);
    const body = (stream: IncomingMessage) =>
      new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks))).on('error', reject);
      });
    this.server = createHttpServer((req, res) => {
      void body(req).then((sent) => {
        const forward = request(new URL(req.url ?? '/', upstream), { method: req.method, headers: { ...req.headers, host: upstream.host } }, (reply) => {
          void body(reply).then((answer) => {
            const swallow = this.swallow;
            if (swallow && sent.toString().includes('Action=RunInstances')) {
              this.swallow = undefined;
              res.socket?.destroy();
              swallow();
              return;
            }
            res.writeHead(reply.statusCode ?? 502, reply.headers);
            res.end(answer);
          });
        });
        forward.on('error', () => res.socket?.destroy());
        forward.end(sent);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** Resolves once the next RunInstances was carried out by the server and its reply dropped. */
  swallowNextCreateReply(): Promise<void> {
    return new Promise((resolve) => (this.swallow = resolve));
  }
  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
const ec2Relay = new Ec2Relay();

const baseEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  TEMPORAL_ADDRESS: stack.info.temporal.address,
  TEMPORAL_NAMESPACE: stack.info.temporal.namespace,
  KUBECONFIG: stack.info.kubernetes.kubeconfig,
  STEWARD_HTTP_HOST: '127.0.0.1',
  STEWARD_HTTP_PORT: '0',
  STEWARD_LOG_LEVEL: 'error',
  STEWARD_CLOUD_MARKER: marker,
});
const providers = {
  libvirt: {
    env: (): NodeJS.ProcessEnv => ({ ...baseEnv(), STEWARD_CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: relay.uri }),
    backend: (): Backend => libvirtBackend(stack.info, marker),
    /** virsh define + start are separate calls: kill the worker as soon as the domain exists. */
    vmMade: (backend: Backend, uid: () => string) => waitFor('the VM to appear in the cloud', async () => uid() !== '' && (await backend.countForPod(uid())) > 0, 60_000, 10),
  },
  aws: {
    env: (): NodeJS.ProcessEnv => ({
      ...baseEnv(),
      STEWARD_CLOUD_PROVIDER: 'aws',
      AWS_REGION: stack.info.ec2.region,
      AWS_ENDPOINT_URL: ec2Relay.url,
      STEWARD_PODVM_IMAGE: TEST_AMI,
      STEWARD_PODVM_INSTANCE_TYPE: 't3.micro',
    }),
    backend: (): Backend => awsBackend(stack.info, marker),
    /** One call makes the instance: its reply is swallowed by the relay. */
    vmMade: () => ec2Relay.swallowNextCreateReply(),
  },
} as const;
type ProviderName = keyof typeof providers;

const startWorker = (provider: ProviderName) => runWorker(loadWorkerConfig({}, providers[provider].env()), { log });

beforeAll(async () => {
  // Its own stack: the lost-reply case kills the worker, and the starter here watches every Pod in the cluster.
  stack = await startPrivateStack();
  await relay.start();
  await ec2Relay.start(stack.info.ec2.endpoint);
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(stack.info.kubernetes.kubeconfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  // As cloud-api-adaptor's installation creates it.
  await kubeConfig
    .makeApiClient(k8s.NodeV1Api)
    .createRuntimeClass({ body: { metadata: { name: 'kata-remote' }, handler: 'kata-remote' } })
    .catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  connection = await Connection.connect({ address: stack.info.temporal.address });
  client = new Client({ connection, namespace: stack.info.temporal.namespace });
  starter = createStarter({
    kubeConfig,
    temporalClient: client,
    identity: 'e2e-peerpods',
    debounceMs: 50,
    kinds: ['Pod', 'PeerPod'],
    lease: { name: 'steward-e2e-peerpods', namespace: 'kube-system', leaseDurationSeconds: 4, renewSeconds: 1 },
    logger: log,
  });
  starter.start();
});
afterAll(async () => {
  await starter?.stop();
  for await (const wf of client.workflow.list({ query: 'ExecutionStatus="Running"' })) {
    await client.workflow.getHandle(wf.workflowId, wf.runId).terminate('end-to-end run done').catch(() => undefined);
  }
  await worker?.shutdown();
  await connection?.close();
  await relay.stop();
  await ec2Relay.stop();
  await stack?.stop();
});

async function createPeerPodPod(name: string): Promise<string> {
  const pod = await core.createNamespacedPod({
    namespace,
    body: { metadata: { name }, spec: { runtimeClassName: 'kata-remote', containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } },
  });
  return pod.metadata!.uid!;
}

async function readPeerPod(name: string): Promise<PeerPodObject | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...PEERPOD_API, namespace, name })) as PeerPodObject;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

const recordedPeerPod = (name: string, timeoutMs = 60_000) =>
  waitFor(`PeerPod ${name} naming its VM`, async () => ((await readPeerPod(name))?.spec.instanceID ? readPeerPod(name) : undefined), timeoutMs);
const peerPodGone = (name: string, timeoutMs = 60_000) => waitFor(`PeerPod ${name} to be gone`, async () => (await readPeerPod(name)) === undefined, timeoutMs);
const handleOf = (name: string) => client.workflow.getHandle(workflowId({ kind: 'PeerPod', namespace, name }));
const stateOf = (name: string): Promise<LifecycleStateView> => handleOf(name).query(stateQuery);
const completed = (name: string) =>
  waitFor(`workflow of ${name} to complete`, async () => (await handleOf(name).describe()).status.name === 'COMPLETED', 30_000);

describe.each(['libvirt', 'aws'] as const)('peer pods on %s', (provider) => {
  let backend: Backend;
  beforeAll(async () => {
    backend = providers[provider].backend();
    worker = await startWorker(provider);
  });
  afterAll(async () => {
    await worker?.shutdown();
    worker = undefined;
  });

  it('a peer pod gets one running VM with its UID and a PeerPod naming it; deleting the Pod deletes both', async () => {
    const name = `pp-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const peerPod = await recordedPeerPod(name);
    const instanceId = peerPod.spec.instanceID!;
    expect(peerPod.spec.cloudProvider).toBe(provider);
    expect(peerPod.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);
    expect(peerPod.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Pod', name, uid, controller: true })]);
    expect(await backend.countForPod(uid)).toBe(1);
    expect(await backend.recordedPodUid(instanceId)).toBe(uid);
    const seen = await backend.provider.get({ instanceId });
    // moto reports a new instance as pending for a while.
    expect(provider === 'libvirt' ? ['running'] : ['pending', 'running']).toContain(seen.exists ? seen.state : 'absent');
    const pod = await core.readNamespacedPod({ namespace, name });
    expect(pod.metadata?.annotations?.['steward.dev/podvm-instance']).toBe(`${provider}/${instanceId}`);
    expect((await stateOf(name)).state).toBe('tracking');

    await core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    expect(await backend.countForPod(uid)).toBe(0);
    await completed(name);
    await recordHistory(client, workflowId({ kind: 'PeerPod', namespace, name }), `peerpod-${provider}-pod-deleted`);
  });

  it('a VM deleted out of band: deleting the Pod still completes (not found is done)', async () => {
    const name = `pp-${provider}-${serial++}`;
    const uid = await createPeerPodPod(name);
    const { instanceID } = (await recordedPeerPod(name)).spec;
    await backend.deleteOutOfBand(instanceID!);
    await waitFor('the VM gone from the cloud', async () => (await backend.countForPod(uid)) === 0, 30_000);
    await core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    await completed(name);
  });

  it("the failure path: a PeerPod of cloud-api-adaptor deleted by the garbage collector with its finalizer: its VM is deleted from the PeerPod's fields, then it is released", async () => {
    const podName = `caa-${provider}-${serial++}`;
    // A Pod Steward makes no VM for (no peer-pod runtime class), a VM without Steward's marker, a PeerPod as
    // cloud-api-adaptor names and writes it: only the PeerPod ties them together.
    const pod = await core.createNamespacedPod({ namespace, body: { metadata: { name: podName }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } } });
    const instanceId = await backend.createUnmarked(`podvm-${podName}-${marker.slice(-8)}`);
    const peerPodName = `${podName}-resource-q7z9r`;
    await custom.createNamespacedCustomObject({
      ...PEERPOD_API,
      namespace,
      body: {
        apiVersion: 'confidentialcontainers.org/v1alpha1',
        kind: 'PeerPod',
        metadata: {
          name: peerPodName,
          finalizers: [PEERPOD_FINALIZER],
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: podName, uid: pod.metadata!.uid!, controller: true, blockOwnerDeletion: true }],
        },
        spec: { cloudProvider: provider, instanceID: instanceId },
      },
    });
    await waitFor('the PeerPod tracked', async () => ((await stateOf(peerPodName).catch(() => undefined))?.state === 'tracking' ? true : undefined), 30_000);
    expect((await backend.provider.get({ instanceId })).exists).toBe(true);

    await core.deleteNamespacedPod({ namespace, name: podName });
    await peerPodGone(peerPodName);
    const seen = await backend.provider.get({ instanceId });
    expect(seen.exists && seen.state !== 'deleting').toBe(false);
    await completed(peerPodName);
    await recordHistory(client, workflowId({ kind: 'PeerPod', namespace, name: peerPodName }), `peerpod-${provider}-failure-path`);
  });

  it('lost reply: the worker killed right after the VM is made; after a restart there is exactly one VM for the Pod', async () => {
    await worker?.shutdown();
    worker = undefined;
    const child = await spawnWorker({ info: stack.info, client }, providers[provider].env());
    const name = `pp-${provider}-${serial++}`;
    let uid = '';
    try {
      const made = providers[provider].vmMade(backend, () => uid);
      uid = await createPeerPodPod(name);
      await made;
    } finally {
      child.kill('SIGKILL');
    }
    worker = await startWorker(provider);
    // The first attempt's reply never reached Temporal: the create activity runs again (attempt 2 or later).
    const peerPod = await recordedPeerPod(name, 120_000);
    expect(await backend.countForPod(uid)).toBe(1);
    expect(await backend.recordedPodUid(peerPod.spec.instanceID!)).toBe(uid);
    const history = await handleOf(name).fetchHistory();
    const createAttempts = (history.events ?? [])
      .filter((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
      .map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 1);
    expect(Math.max(...createAttempts)).toBeGreaterThanOrEqual(2);

    await core.deleteNamespacedPod({ namespace, name });
    await peerPodGone(name);
    expect(await backend.countForPod(uid)).toBe(0);
  });
});

describe('VM create and delete through Steward, compared with virsh (same run, printed)', () => {
  beforeAll(async () => {
    worker = await startWorker('libvirt');
  });
  afterAll(async () => {
    await worker?.shutdown();
    worker = undefined;
  });

  it('times Pod created → PeerPod names a running domain, and Pod deleted → domain gone, against virsh define+start and destroy+undefine', async () => {
    const backend = providers.libvirt.backend();
    const { uri } = stack.info.libvirt;
    const rounds = 3;
    const times = { stewardCreate: [] as number[], stewardDelete: [] as number[], virshCreate: [] as number[], virshDelete: [] as number[] };
    const timed = async (call: () => Promise<unknown>) => {
      const start = performance.now();
      await call();
      return performance.now() - start;
    };
    for (let i = 0; i < rounds; i++) {
      const name = `pp-timing-${serial++}`;
      let uid = '';
      times.stewardCreate.push(
        await timed(async () => {
          uid = await createPeerPodPod(name);
          await waitFor(`PeerPod ${name} naming its VM`, async () => (await readPeerPod(name))?.spec.instanceID, 60_000, 20);
        }),
      );
      times.stewardDelete.push(
        await timed(async () => {
          await core.deleteNamespacedPod({ namespace, name });
          await waitFor('the domain gone', async () => (await backend.countForPod(uid)) === 0, 60_000, 20);
        }),
      );
      const domain = `${marker}-virsh-${i}`;
      const file = plainDomainFile(domain);
      times.virshCreate.push(await timed(async () => (await virsh(uri, 'define', file), await virsh(uri, 'start', domain))));
      times.virshDelete.push(await timed(async () => (await virsh(uri, 'destroy', domain), await virsh(uri, 'undefine', domain))));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const row = (what: string, steward: number[], direct: number[]) =>
      `| ${what} | ${median(steward).toFixed(0)} ms | ${median(direct).toFixed(0)} ms | ${(median(steward) - median(direct)).toFixed(0)} ms |`;
    console.log(
      [
        `VM lifecycle through Steward vs virsh (libvirt qemu, 64 MiB diskless domain; median of ${rounds}; Steward's time includes the watch, the workflow, the PeerPod write):`,
        '| step | Steward | virsh | difference |',
        '|---|---|---|---|',
        row('create: Pod created → PeerPod names a running domain (virsh: define+start)', times.stewardCreate, times.virshCreate),
        row('delete: Pod deleted → domain gone (virsh: destroy+undefine)', times.stewardDelete, times.virshDelete),
      ].join('\n'),
    );
    expect(times.stewardCreate).toHaveLength(rounds);
  });
});

describe('VM deletion fails: libvirt unreachable', () => {
  let backend: Backend;
  beforeAll(async () => {
    backend = providers.libvirt.backend();
    worker = await startWorker('libvirt');
  });
  afterAll(async () => {
    await relay.start().catch(() => undefined);
    await worker?.shutdown();
    worker = undefined;
  });

  it('the PeerPod keeps its finalizer and the workflow shows stuck everywhere; after recovery `steward cleanup --mode retry` deletes the VM and releases it', async () => {
    const name = `pp-down-${serial++}`;
    const uid = await createPeerPodPod(name);
    await recordedPeerPod(name);
    await relay.stop();
    await core.deleteNamespacedPod({ namespace, name });

    // The delete activity's bounded retries (1 + 2 + 4 + 8 s between five attempts), then stuck.
    const view = await waitFor('the workflow to be stuck', async () => ((await stateOf(name)).state === 'stuck' ? stateOf(name) : undefined), 90_000);
    expect(view.lastError?.reason).toBe('CloudUnavailable');
    const peerPod = (await readPeerPod(name))!;
    expect(peerPod.metadata.deletionTimestamp).toBeDefined();
    expect(peerPod.metadata.finalizers).toEqual([PEERPOD_FINALIZER]);
    expect(await backend.countForPod(uid)).toBe(1);
    await waitFor(
      'visibility to list the workflow as stuck',
      async () => {
        const ids: string[] = [];
        for await (const wf of client.workflow.list({ query: `K8sKind="PeerPod" AND K8sName="${name}" AND LifecycleState="stuck"` })) ids.push(wf.workflowId);
        return ids.length === 1 || undefined;
      },
      30_000,
    );
    const events = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name},involvedObject.kind=PeerPod` });
    const warning = events.items.find((e) => e.type === 'Warning' && e.reason === 'CloudUnavailable');
    expect(warning?.message).toContain('stuck while deleting the VM');

    await relay.start();
    const run = await stewardProcess({ info: stack.info }, 'cleanup', 'peerpod', `${namespace}/${name}`, '--mode', 'retry', '--reason', 'libvirt is back', '--by', 'oncall');
    expect(run).toMatchObject({ code: 0 });
    await peerPodGone(name);
    expect(await backend.countForPod(uid)).toBe(0);
    await completed(name);
    await recordHistory(client, workflowId({ kind: 'PeerPod', namespace, name }), 'peerpod-stuck-cleanup-retry');
  });
});
