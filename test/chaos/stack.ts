// The chaos run's own embedded stack and the Steward processes on it: the worker and the starter run as child
// processes (`steward worker`, `steward starter`) so that a kill -9 is real; Temporal (the dev server, or the cluster
// profile's server processes and PostgreSQL) and the MidoNet emulator are restarted on their ports with their
// persisted state; libvirt is reached through a relay that can be cut. Every process this module starts it also stops.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { EmulatorAdmin } from '../../deploy/local/midonet';
import { startMidonet } from '../../deploy/local/midonet-process';
import { sleep, type ManagedProcess } from '../../deploy/local/process';
import type { PostgresRestart } from '../../deploy/local/postgres';
import { startStack, type Stack, type StackInfo, type TemporalProfile } from '../../deploy/local/stack';
import { startTemporal } from '../../deploy/local/temporal';
import type { ClusterHostLayout, TemporalCluster, TemporalService } from '../../deploy/local/temporal-cluster';
import { libvirtSocket } from '../../deploy/local/libvirt';
import { libvirtBackend } from '../support/cloud-backends';
import { isReady, listTranslations, seedEmulator } from '../support/objects-harness';
import { LibvirtRelay } from '../support/peerpods-harness';
import { repoRoot, spawnWorker, workerEnv } from '../support/pusher-harness';
import { waitFor } from '../support';
import type { CloudProvider } from '../../activities/cloud/provider';
import { GLOBAL_LABEL, GLOBAL_NAMESPACE, DEFAULT_TENANT } from '../../model/translation';
import { HOSTS, PEER_POD_RUNTIME_CLASS } from './ops';

export interface ChaosStackOptions {
  peerPods: boolean;
  temporal: TemporalProfile;
  /** Period of the starter's full re-list. */
  resyncSeconds: number;
  /** An answering libvirt to use; default: LIBVIRT_URI, else the stack's own libvirtd. */
  libvirtUri?: string;
  log: (line: string) => void;
}

const LEASE = 'steward-chaos';

/**
 * The cluster profile as the chaos run lays it out: matching on hosts of its own (the default layout puts it beside
 * the frontend), so that a matching host dies alone; two history and two matching hosts, as two replicas each, so
 * that the survivor takes over the dead one's shards or task queue partitions.
 */
export const CHAOS_CLUSTER_LAYOUT: readonly ClusterHostLayout[] = [
  { name: 'temporal-a', services: ['frontend', 'worker'] },
  { name: 'temporal-b', services: ['history'] },
  { name: 'temporal-c', services: ['history'] },
  { name: 'temporal-d', services: ['matching'] },
  { name: 'temporal-e', services: ['matching'] },
];

export class ChaosStack {
  readonly tenant = DEFAULT_TENANT;
  readonly marker = `steward-chaos-${Date.now().toString(36)}`;
  readonly relay: LibvirtRelay;
  core!: k8s.CoreV1Api;
  custom!: k8s.CustomObjectsApi;
  admin!: EmulatorAdmin;
  client!: Client;
  /** The cloud as the checks read it, bypassing the relay. */
  cloud?: CloudProvider;
  private stack!: Stack;
  private connection?: Connection;
  private restarted: { temporal?: ManagedProcess; midonet?: ManagedProcess } = {};
  private worker?: ChildProcess;
  private starter?: ChildProcess;
  private starters = 0;
  private stopping = false;

  private constructor(
    readonly info: StackInfo,
    private readonly options: ChaosStackOptions,
  ) {
    this.relay = new LibvirtRelay(this.marker, libvirtSocket(info.libvirt.uri));
  }

  static async start(options: ChaosStackOptions): Promise<ChaosStack> {
    const stateDir = mkdtempSync(join(tmpdir(), 'steward-chaos-'));
    const stack = await startStack({
      stateDir,
      ports: 'free',
      report: () => {},
      temporal: options.temporal,
      ...(options.temporal === 'cluster' ? { temporalLayout: CHAOS_CLUSTER_LAYOUT } : {}),
      ...(options.libvirtUri ? { libvirtUri: options.libvirtUri } : {}),
    });
    const chaos = new ChaosStack(stack.info, options);
    chaos.stack = stack;
    // Restarted after a kill as the kubelet would restart a static Pod's container (the kube-apiserver-restart fault).
    stack.server('kube-apiserver')?.supervise({
      exited: (server, how, restartInMs) => options.log(`${server.name} ${how}; restarting in ${restartInMs} ms`),
      restarted: (server) => options.log(`${server.name} started again (pid ${server.pid})`),
    });
    try {
      await chaos.setUp();
    } catch (error) {
      await chaos.stop();
      throw error;
    }
    return chaos;
  }

  private async setUp(): Promise<void> {
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromFile(this.info.kubernetes.kubeconfig);
    this.core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    ({ admin: this.admin } = await seedEmulator(this.info, HOSTS, this.tenant));
    await this.connect();
    if (this.options.peerPods) {
      await this.relay.start();
      this.cloud = libvirtBackend(this.info, this.marker).provider;
      // As cloud-api-adaptor's installation creates it.
      await kubeConfig
        .makeApiClient(k8s.NodeV1Api)
        .createRuntimeClass({ body: { metadata: { name: PEER_POD_RUNTIME_CLASS }, handler: PEER_POD_RUNTIME_CLASS } })
        .catch((error: { code?: number }) => {
          if (error.code !== 409) throw error;
        });
    }
    await this.startWorker();
    await this.startStarter();
    // The starter starts the global setup; Nodes find their parents once the global Translations are Ready.
    await waitFor(
      'the global Translations Ready',
      async () => {
        const globals = await listTranslations(this, GLOBAL_NAMESPACE, GLOBAL_LABEL);
        return (
          globals.length > 0 &&
          (await Promise.all(globals.map((t) => isReady(this, GLOBAL_NAMESPACE, t.metadata.name)))).every(Boolean)
        );
      },
      120_000,
    );
  }

  private async connect(): Promise<void> {
    await this.connection?.close().catch(() => undefined);
    this.connection = await Connection.connect({ address: this.info.temporal.address });
    this.client = new Client({ connection: this.connection, namespace: this.info.temporal.namespace });
  }

  private workerEnv(): NodeJS.ProcessEnv {
    const env = { ...workerEnv(this.info), STEWARD_CLOUD_MARKER: this.marker };
    return this.options.peerPods ? { ...env, STEWARD_CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: this.relay.uri } : env;
  }

  /** Keeps `child` as the running worker or starter until it exits; an exit nobody asked for is logged. */
  private follow(role: 'worker' | 'starter', child: ChildProcess): void {
    this[role] = child;
    child.once('exit', (code, signal) => {
      if (this[role] !== child) return;
      this[role] = undefined;
      if (!this.stopping && signal !== 'SIGKILL')
        this.options.log(`${role} ${child.pid} exited on its own (${signal ?? code})`);
    });
  }

  get workerPid(): number | undefined {
    return this.worker?.pid;
  }

  /** `steward worker` as a child process; resolves once it polls the task queue. */
  async startWorker(): Promise<void> {
    this.follow('worker', await spawnWorker(this, this.workerEnv()));
  }

  /** SIGKILL: no graceful shutdown, in-flight activities are lost and time out. */
  async killWorker(): Promise<void> {
    await killChild(this.worker);
    this.worker = undefined;
  }

  get workerRunning(): boolean {
    return this.worker !== undefined;
  }

  /** `steward starter` as a child process with a Lease of its own; resolves once it holds the Lease. */
  async startStarter(): Promise<void> {
    const identity = `chaos-starter-${++this.starters}`;
    const env: NodeJS.ProcessEnv = {
      ...workerEnv(this.info),
      STEWARD_LEASE_NAME: LEASE,
      STEWARD_IDENTITY: identity,
      STEWARD_DEBOUNCE_WINDOW: '50ms',
      STEWARD_RESYNC_INTERVAL: `${this.options.resyncSeconds}s`,
      STEWARD_PEERPOD_RUNTIME_CLASSES: PEER_POD_RUNTIME_CLASS,
      // No cloud named, unlike the worker: the PeerPods Steward writes are its own to serve whatever the starter was
      // told (served-clouds.ts), and a run checks it.
      // A run deletes much of its small cluster at once now and then, and has no operator to give the guard against
      // mass deletion its go-ahead: its wave trigger is off (a share of 1 is never exceeded), the CRD's stays.
      STEWARD_MASS_DELETION_SHARE: '1',
      // Any free port: another run on this machine may hold the default one.
      STEWARD_STARTER_HTTP_HOST: '127.0.0.1',
      STEWARD_STARTER_HTTP_PORT: '0',
      // Every event and delivery, to trace an observation a workflow never got (logs/starter.log).
      STEWARD_LOG_LEVEL: 'trace',
    };
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'steward.cjs'), 'starter'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(this.info.stateDir, 'logs', 'starter.log'), { flags: 'a' });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once('close', () => log.end());
    this.follow('starter', child);
    const coordination = (() => {
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(this.info.kubernetes.kubeconfig);
      return kc.makeApiClient(k8s.CoordinationV1Api);
    })();
    // A killed holder's Lease expires after its duration (15 s): until then the new starter waits, as in a cluster.
    await waitFor(
      `starter ${identity} to lead`,
      async () => {
        if (this.starter !== child) throw new Error(`starter ${identity} exited`);
        const lease = await coordination.readNamespacedLease({ name: LEASE, namespace: 'kube-system' });
        return lease.spec?.holderIdentity === identity;
      },
      60_000,
    );
  }

  async killStarter(): Promise<void> {
    await killChild(this.starter);
    this.starter = undefined;
  }

  get starterRunning(): boolean {
    return this.starter !== undefined;
  }

  private get cluster(): TemporalCluster | undefined {
    return this.stack.temporalCluster;
  }

  private get theCluster(): TemporalCluster {
    if (!this.cluster) throw new Error('the chaos stack runs the Temporal dev server, not the cluster profile');
    return this.cluster;
  }

  /** What the temporal-restart fault restarts. */
  get temporalName(): string {
    return this.cluster ? 'every Temporal server host' : 'the Temporal dev server';
  }

  /**
   * Stops the Temporal dev server (SIGTERM) and starts it again on its port with its database. On the cluster profile
   * the same outage: every server host stopped (SIGTERM) and started again on its ports, PostgreSQL left running
   * (its own fault restarts it).
   */
  async restartTemporal(): Promise<void> {
    if (this.cluster) return this.cluster.restartAll();
    const port = Number(this.info.temporal.address.split(':').pop());
    await stopServer(this.restarted.temporal, this.info.pids.temporal);
    const server = await startTemporal({
      stateDir: join(this.info.stateDir, 'temporal'),
      port,
      uiPort: 0,
      report: () => {},
    });
    this.restarted.temporal = server.process;
    this.info.pids.temporal = server.process.pid;
    if (server.address !== this.info.temporal.address) {
      // Its port was taken meanwhile: everything must follow it.
      this.options.log(`Temporal came back on ${server.address} (was ${this.info.temporal.address})`);
      this.info.temporal.address = server.address;
      await this.connect();
      await this.killWorker();
      await this.killStarter();
      await this.startWorker();
      await this.startStarter();
    }
  }

  /** The cluster profile's hosts that run `service` and are up (none on the dev server). */
  temporalHosts(service: TemporalService): string[] {
    return (this.cluster?.hosts() ?? []).filter((h) => h.running && h.services.includes(service)).map((h) => h.name);
  }

  /** The cluster profile's hosts that are down (none on the dev server). */
  temporalHostsDown(): string[] {
    return (this.cluster?.hosts() ?? []).filter((h) => !h.running).map((h) => h.name);
  }

  temporalHostPid(name: string): number | undefined {
    return this.cluster?.hosts().find((h) => h.name === name)?.pid;
  }

  /** SIGKILLs a cluster host, as a machine that dies; returns the PID it had. */
  async killTemporalHost(name: string): Promise<number | undefined> {
    const pid = this.temporalHostPid(name);
    await this.theCluster.killHost(name);
    return pid;
  }

  /** Starts a cluster host again on its ports; resolves once its services joined the cluster. */
  restartTemporalHost(name: string): Promise<void> {
    return this.theCluster.restartHost(name);
  }

  /** Stops PostgreSQL (`fast` or `immediate` shutdown) and starts it again on its data directory and port. */
  restartPostgres(how: PostgresRestart): Promise<void> {
    return this.theCluster.restartPostgres(how);
  }

  get postgresPid(): number | undefined {
    return this.cluster?.postgres.process.pid;
  }

  /** Every process of the stack by name, with its PID now (what to kill by hand if the run itself is killed). */
  pids(): Record<string, number> {
    const hosts = this.cluster?.processes().map((p) => [p.name, p.pid] as const) ?? [];
    const steward = [
      ['worker', this.worker?.pid],
      ['starter', this.starter?.pid],
    ].filter((e): e is [string, number] => e[1] !== undefined);
    return { ...this.info.pids, ...Object.fromEntries(hosts), ...Object.fromEntries(steward) };
  }

  /** Stops the MidoNet emulator (SIGTERM: it flushes its state file) and starts it again on its port. */
  async restartMidonet(): Promise<void> {
    const url = new URL(this.info.midonet.url);
    await stopServer(this.restarted.midonet, this.info.pids['midonet-emulator']);
    const server = await startMidonet({ stateDir: this.info.stateDir, port: Number(url.port) });
    this.restarted.midonet = server.process;
    this.info.pids['midonet-emulator'] = server.process.pid;
    if (server.url !== this.info.midonet.url) {
      this.options.log(`MidoNet emulator came back on ${server.url} (was ${this.info.midonet.url})`);
      this.info.midonet = { ...this.info.midonet, url: server.url, adminUrl: server.adminUrl };
      this.admin = new EmulatorAdmin(server.adminUrl);
      await this.killWorker();
      await this.startWorker();
    }
  }

  /** SIGKILLs the kube-apiserver (supervised: it starts again) and waits until it answers; returns how long it took. */
  async killApiServer(): Promise<number> {
    const server = this.stack.server('kube-apiserver');
    if (!server) throw new Error('the chaos stack did not start the kube-apiserver');
    const killedAt = Date.now();
    process.kill(server.pid, 'SIGKILL');
    await waitFor('the kube-apiserver to stop answering', () => !server.running || undefined, 10_000, 50);
    await waitFor('the kube-apiserver back', () => this.core.listNamespace().then(() => true), 120_000, 500);
    return Date.now() - killedAt;
  }

  /**
   * Does what a node's kubelet does once a terminating Pod's containers are gone: deletes it with no grace period.
   * The harness deletes Pods that way already; this catches the one a kube-apiserver killed mid-way leaves behind
   * (removing an object's last finalizer is two writes, the update and then the delete it calls for: killed between
   * them, the Pod stays stored, deleting, with no finalizer, and only a kubelet would delete it again). Returns the
   * Pods it deleted.
   */
  async finishTerminatingPods(namespace: string): Promise<string[]> {
    const { items } = await this.core.listNamespacedPod({ namespace });
    const stale = items.filter((pod) => pod.metadata?.deletionTimestamp && !pod.metadata.finalizers?.length);
    for (const pod of stale)
      await this.core
        .deleteNamespacedPod({ namespace, name: pod.metadata!.name!, gracePeriodSeconds: 0 })
        .catch(() => undefined);
    return stale.map((pod) => pod.metadata!.name!);
  }

  /**
   * Compacts etcd's history up to its current revision: every resourceVersion a watcher holds is then too old, and
   * once its watch is broken it is answered 410 Gone and must list again. Returns the revision.
   */
  async compactEtcd(): Promise<number> {
    const etcd = this.info.kubernetes.etcdUrl;
    if (!etcd) throw new Error('the chaos stack did not start etcd');
    const post = async (path: string, body: object) => {
      const response = await fetch(`${etcd}${path}`, { method: 'POST', body: JSON.stringify(body) });
      if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { header?: { revision?: string } };
    };
    const { header } = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64') });
    const revision = Number(header?.revision);
    await post('/v3/kv/compaction', { revision, physical: true });
    return revision;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await killChild(this.starter);
    await killChild(this.worker);
    await this.connection?.close().catch(() => undefined);
    await this.relay.stop().catch(() => undefined);
    if (this.cloud)
      for (const vm of await this.cloud.list().catch(() => []))
        await this.cloud.delete({ instanceId: vm.instanceId }).catch(() => undefined);
    await this.restarted.temporal?.stop();
    await this.restarted.midonet?.stop();
    await this.stack?.stop();
  }
}

async function killChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Stops a server of the stack (by its handle when this module restarted it, else by the stack's PID). */
async function stopServer(restarted: ManagedProcess | undefined, pid: number | undefined): Promise<void> {
  if (restarted) return restarted.stop();
  if (!pid) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let waited = 0; waited < 15_000; waited += 100) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(100);
  }
  process.kill(pid, 'SIGKILL');
  await sleep(500);
}
