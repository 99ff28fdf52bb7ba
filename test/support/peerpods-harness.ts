// Peer pods on an embedded stack, for test/e2e-peerpods/ and for bench/: the real starter (Pods and
// PeerPods), a worker with the cloud activities of one provider, the API server's Pods and PeerPods, and relays that
// put the clouds within the test's reach (cut libvirt off, swallow an EC2 reply).
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { createServer as createHttpServer, request, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { loadKubeConfig } from '../../platform/kubernetes/kubeconfig';
import type { Backend as InstalledBackend } from '../../platform/backends';
import { awsBackend, libvirtBackend, TEST_AMI, type Backend } from './cloud-backends';
import { libvirtSocket } from '../../deploy/local/libvirt';
import type { StackInfo } from '../../deploy/local/stack';
import { KATA_REMOTE } from '../../starter/controller';
import { type RunningWorker } from '../../worker';
import { loadWorkerConfig, runWorker } from '../../cli/worker';
import { stateQuery, type LifecycleStateView } from '../../model/messages';
import { PEERPOD_API, workflowId } from '../../model/naming';
import { PEERPOD_FINALIZER } from '../../model/vocabulary';
import { baseWorkerEnv, startTestStarter, terminateRunning, waitFor } from './index';
import { Relay } from './relay';

export const namespace = 'default';

export interface PeerPodObject {
  metadata: {
    name: string;
    uid: string;
    finalizers?: string[];
    deletionTimestamp?: string;
    ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[];
  };
  spec: { cloudProvider?: string; instanceID?: string };
}

/**
 * libvirtd as the worker reaches it: a Unix-socket relay to the daemon that the test can cut and restore, so "libvirt
 * is down" is seen by Steward alone (the daemon and its VMs stay up for everything else).
 */
export class LibvirtRelay extends Relay {
  readonly path: string;
  constructor(
    marker: string,
    /** The daemon's socket (the stack's own libvirtd's: see libvirtSocket). */
    daemon: string,
  ) {
    const path = `/tmp/${marker}-libvirt.sock`;
    super(path, { path: daemon });
    this.path = path;
  }
  get uri() {
    return `qemu+unix:///system?socket=${this.path}`;
  }
}

/**
 * The EC2 endpoint as the worker reaches it: an HTTP relay to the test server that can swallow the reply of the next
 * RunInstances after the server made the instance: a lost reply, exactly.
 */
export class Ec2Relay {
  private server?: HttpServer;
  private swallow?: () => void;
  url = '';
  async start(target: string): Promise<void> {
    const upstream = new URL(target);
    const body = (stream: IncomingMessage) =>
      new Promise<Buffer>((resolve, reject) => {
        const chunks: Buffer[] = [];
        stream
          .on('data', (chunk: Buffer) => chunks.push(chunk))
          .on('end', () => resolve(Buffer.concat(chunks)))
          .on('error', reject);
      });
    this.server = createHttpServer((req, res) => {
      void body(req).then((sent) => {
        const forward = request(
          new URL(req.url ?? '/', upstream),
          { method: req.method, headers: { ...req.headers, host: upstream.host } },
          (reply) => {
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
          },
        );
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

export type ProviderName = 'libvirt' | 'aws';

/** The worker's EC2 credentials (moto takes any): distinctive, so a test can look for them where they must not be. */
export const AWS_TEST_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'AKIASTEWARDE2ETEST01',
  AWS_SECRET_ACCESS_KEY: 'steward-e2e-secret-0f1e2d3c',
} as const;

export interface PeerPodHarness {
  info: StackInfo;
  /** This run's cloud marker: the sweeper of another run never takes these VMs for its own. */
  marker: string;
  client: Client;
  kubeConfig: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
  libvirtRelay: LibvirtRelay;
  ec2Relay: Ec2Relay;
  /** The worker environment for a provider: its cloud reached through the relays unless `direct`. */
  env(provider: ProviderName, options?: { direct?: boolean }): NodeJS.ProcessEnv;
  /** The cloud as the test reads it, bypassing Steward. */
  backend(provider: ProviderName): Backend;
  /**
   * Runs the in-process worker for a provider (stopping the one running); `settings` over the provider's environment
   * (e.g. the ConfigMaps a Deployment takes by envFrom).
   */
  startWorker(
    provider: ProviderName,
    options?: { direct?: boolean; settings?: Record<string, string> },
  ): Promise<RunningWorker>;
  stopWorker(): Promise<void>;
  /** Replaces the starter with one that makes VMs for Pods of these runtime classes (none: beside cloud-api-adaptor). */
  restartStarter(peerPodRuntimeClasses: string[]): Promise<void>;
  /** Stops the starter (a test playing a cluster where Steward does not run yet, or no longer); restartStarter again. */
  stopStarter(): Promise<void>;
  stop(): Promise<void>;
}

export async function startPeerPodHarness(
  info: StackInfo,
  {
    identity,
    log,
    peerPodRuntimeClasses = [KATA_REMOTE],
    backends,
  }: {
    identity: string;
    log: Logger;
    peerPodRuntimeClasses?: string[];
    /** What the installation drives (STEWARD_BACKENDS), for the starter and the workers' environment; default both. */
    backends?: readonly InstalledBackend[];
  },
): Promise<PeerPodHarness> {
  const marker = `steward-${identity}-${Date.now().toString(36)}`;
  const libvirtRelay = new LibvirtRelay(marker, libvirtSocket(info.libvirt.uri));
  const ec2Relay = new Ec2Relay();
  await libvirtRelay.start();
  await ec2Relay.start(info.ec2.endpoint);
  // Pooled, as the deployed starter's (starter/run.ts) and the objects harness's: the starter's and the test's calls reuse
  // their connections instead of opening a TLS connection each, which took the worker's event loop from it.
  const kubeConfig = loadKubeConfig(info.kubernetes.kubeconfig)!;
  // As cloud-api-adaptor's installation creates it.
  await kubeConfig
    .makeApiClient(k8s.NodeV1Api)
    .createRuntimeClass({ body: { metadata: { name: 'kata-remote' }, handler: 'kata-remote' } })
    .catch((error: { code?: number }) => {
      if (error.code !== 409) throw error;
    });
  const connection = await Connection.connect({ address: info.temporal.address });
  const client = new Client({ connection, namespace: info.temporal.namespace });
  const startStarter = (runtimeClasses: string[]) =>
    startTestStarter({
      kubeConfig,
      temporalClient: client,
      identity,
      debounceMs: 50,
      ...(backends ? { backends } : {}),
      kinds: ['Pod', 'PeerPod'],
      peerPodRuntimeClasses: runtimeClasses,
      // As an installation whose workers serve both clouds the tests use: a PeerPod of any other is left alone.
      peerPodClouds: ['libvirt', 'aws'],
      logger: log,
    });
  let starter: ReturnType<typeof startStarter> | undefined = startStarter(peerPodRuntimeClasses);
  let worker: RunningWorker | undefined;

  const env = (provider: ProviderName, { direct = false } = {}): NodeJS.ProcessEnv => {
    const base = {
      ...baseWorkerEnv(info),
      STEWARD_CLOUD_MARKER: marker,
      ...(backends ? { STEWARD_BACKENDS: backends.join(',') } : {}),
    };
    if (provider === 'libvirt')
      return { ...base, STEWARD_CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: direct ? info.libvirt.uri : libvirtRelay.uri };
    return {
      ...base,
      STEWARD_CLOUD_PROVIDER: 'aws',
      ...AWS_TEST_CREDENTIALS,
      AWS_REGION: info.ec2.region,
      AWS_ENDPOINT_URL: direct ? info.ec2.endpoint : ec2Relay.url,
      STEWARD_PODVM_IMAGE: TEST_AMI,
      STEWARD_PODVM_INSTANCE_TYPE: 't3.micro',
    };
  };
  const stopWorker = async () => {
    await worker?.shutdown();
    worker = undefined;
  };
  return {
    info,
    marker,
    client,
    kubeConfig,
    core: kubeConfig.makeApiClient(k8s.CoreV1Api),
    custom: kubeConfig.makeApiClient(k8s.CustomObjectsApi),
    libvirtRelay,
    ec2Relay,
    env,
    backend: (provider) => (provider === 'libvirt' ? libvirtBackend(info, marker) : awsBackend(info, marker)),
    async startWorker(provider, options) {
      await stopWorker();
      worker = await runWorker(loadWorkerConfig({}, { ...env(provider, options), ...options?.settings }), { log });
      return worker;
    },
    stopWorker,
    async restartStarter(runtimeClasses) {
      await starter?.stop();
      starter = startStarter(runtimeClasses);
    },
    async stopStarter() {
      await starter?.stop();
      starter = undefined;
    },
    async stop() {
      await starter?.stop();
      await terminateRunning(client, 'end-to-end run done');
      await stopWorker();
      await connection.close();
      await libvirtRelay.stop();
      await ec2Relay.stop();
    },
  };
}

/** A Pod of the peer-pod runtime class; never runs (no kubelet), which the VM lifecycle does not need. */
export async function createPeerPodPod(h: Pick<PeerPodHarness, 'core'>, name: string): Promise<string> {
  const pod = await h.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: { runtimeClassName: 'kata-remote', containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    },
  });
  return pod.metadata!.uid!;
}

export async function readPeerPod(h: Pick<PeerPodHarness, 'custom'>, name: string): Promise<PeerPodObject | undefined> {
  try {
    return (await h.custom.getNamespacedCustomObject({ ...PEERPOD_API, namespace, name })) as PeerPodObject;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

export const recordedPeerPod = (
  h: Pick<PeerPodHarness, 'custom'>,
  name: string,
  timeoutMs = 60_000,
  intervalMs = 250,
) =>
  waitFor(
    `PeerPod ${name} naming its VM`,
    async () => {
      const peerPod = await readPeerPod(h, name);
      return peerPod?.spec.instanceID ? peerPod : undefined;
    },
    timeoutMs,
    intervalMs,
  );
export const peerPodGone = (h: Pick<PeerPodHarness, 'custom'>, name: string, timeoutMs = 60_000) =>
  waitFor(`PeerPod ${name} to be gone`, async () => (await readPeerPod(h, name)) === undefined, timeoutMs);
export const handleOf = (h: Pick<PeerPodHarness, 'client'>, name: string) =>
  h.client.workflow.getHandle(workflowId({ kind: 'PeerPod', namespace, name }));
export const stateOf = (h: Pick<PeerPodHarness, 'client'>, name: string): Promise<LifecycleStateView> =>
  handleOf(h, name).query(stateQuery);
export const completed = (h: Pick<PeerPodHarness, 'client'>, name: string) =>
  waitFor(
    `workflow of ${name} to complete`,
    async () => (await handleOf(h, name).describe()).status.name === 'COMPLETED',
    30_000,
  );

export interface PeerPodExtras {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** The 5 characters after `-resource-`; random when absent. */
  suffix?: string;
}

/** A PeerPod exactly as cloud-api-adaptor's PeerPodService writes it (k8sops/peerpod.go `newPeerPod`); returns its name. */
export async function writeAsCloudApiAdaptor(
  h: Pick<PeerPodHarness, 'custom'>,
  pod: { name: string; uid: string },
  provider: string,
  instanceId: string,
  { suffix = Math.random().toString(36).slice(2, 7).padEnd(5, 'x'), ...metadata }: PeerPodExtras = {},
): Promise<string> {
  const name = `${pod.name}-resource-${suffix}`;
  await h.custom.createNamespacedCustomObject({
    ...PEERPOD_API,
    namespace,
    body: {
      apiVersion: 'confidentialcontainers.org/v1alpha1',
      kind: 'PeerPod',
      metadata: {
        name,
        finalizers: [PEERPOD_FINALIZER],
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Pod', name: pod.name, uid: pod.uid, controller: true, blockOwnerDeletion: true },
        ],
        ...metadata,
      },
      spec: { cloudProvider: provider, instanceID: instanceId },
    },
  });
  return name;
}
