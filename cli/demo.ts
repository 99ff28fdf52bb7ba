import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import type { EmulatorAdmin, StackInfo } from '../deploy/local';
import {
  GLOBAL_MIDONET_WORKFLOW_ID,
  PEERPOD_API,
  TASK_QUEUE,
  TRANSLATION_API,
  temporalUiLink,
  workflowId,
  type ObjectRef,
} from '../model/naming';
import { translate, type NodeProjection, type ServiceProjection } from '../model/translation';
import { sampleCluster, type SampleCluster } from '../model/translation/sample-cluster';
import { KATA_REMOTE, project } from '../starter/controller';
import { duration } from '../platform/settings';
import { loadDevStack } from './dev-stack';
import { UsageError } from './errors';
import { confirmMassDeletion, guardStatus } from './mass-deletion';

const execFileAsync = promisify(execFile);

/**
 * `steward demo`: the sample cluster of the translation tests (2 Nodes, 3 Pods, a Service with two ports and its
 * Endpoints) created as real objects on the running `npm start` stack, plus a peer pod (runtime class `kata-remote`)
 * that gets a cloud VM, then followed until every Translation they own is Ready and the peer pod's PeerPod names its
 * VM, and printed with the Temporal UI links of their workflows. `--cleanup` undoes it.
 */

/** Marks what the demo created, so `--cleanup` never deletes a same-named object of someone else's. */
const DEMO_LABELS = { 'app.kubernetes.io/managed-by': 'steward-demo' };
const PEER_POD = 'web-peer';
const PEER_POD_REF: ObjectRef = { kind: 'PeerPod', namespace: 'default', name: PEER_POD };
const PEER_RUNTIME_CLASS = KATA_REMOTE;
const POLL_MS = 1_000;

export interface DemoOptions {
  stackFile: string;
  timeoutMs: number;
  cleanup: boolean;
  /** Also a peer pod, which needs a worker with cloud activities (`steward up` has libvirt). */
  peerPod: boolean;
}

const stackSchema = z.looseObject({
  temporal: z.looseObject({ address: z.string(), namespace: z.string(), uiUrl: z.string().optional() }),
  kubernetes: z.looseObject({ kubeconfig: z.string() }),
  // Absent from a stack without MidoNet (`steward up --backends peerpods`).
  midonet: z.looseObject({ url: z.string(), adminUrl: z.string().optional() }).optional(),
});

/** Where `steward up` wrote its stack.json when given no --state-dir. */
function defaultStackFile(): string {
  const { stackFile, defaultStateDir } = loadDevStack();
  return stackFile(defaultStateDir);
}

/** Checks the flags and reads the stack before anything is created. */
export function parseDemoOptions(flags: {
  stack?: string;
  timeout?: string;
  cleanup?: boolean;
  peerPod?: boolean;
}): DemoOptions & { stack: StackInfo } {
  const file = flags.stack ?? defaultStackFile();
  const timeout = flags.timeout ?? '3m';
  // A duration as adopt takes it; a bare number is seconds, as this flag took before.
  const timeoutMs = duration.safeParse(/^\d+$/.test(timeout) ? `${timeout}s` : timeout);
  if (!timeoutMs.success || timeoutMs.data < 1000)
    throw new UsageError(`--timeout: must be a duration of at least 1s, such as 90s or 5m (got "${timeout}")`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const why =
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'no such file'
        : error instanceof Error
          ? error.message
          : String(error);
    throw new Error(
      `--stack ${file}: ${why}; start the stack with \`npm start\` first, or give its stack.json with --stack <file>`,
    );
  }
  const stack = stackSchema.safeParse(json);
  if (!stack.success)
    throw new Error(`--stack ${file}: not a stack.json written by \`steward up\`: ${z.prettifyError(stack.error)}`);
  if (!stack.data.midonet && flags.peerPod === false)
    throw new Error(
      `--no-peer-pod: the stack of ${file} has no MidoNet (steward up --backends peerpods): its peer pod is all there is to show`,
    );
  return {
    stackFile: file,
    timeoutMs: timeoutMs.data,
    cleanup: flags.cleanup ?? false,
    peerPod: flags.peerPod ?? true,
    stack: stack.data as unknown as StackInfo,
  };
}

/** The sample projections as real objects. */
interface DemoObjects {
  nodes: k8s.V1Node[];
  pods: k8s.V1Pod[];
  /** The runtime class cloud-api-adaptor installs, and a Pod of it beside the sample's (a peer pod has a MidoNet port too). */
  runtimeClass: k8s.V1RuntimeClass;
  peerPod: k8s.V1Pod;
  service: k8s.V1Service;
  endpoints: k8s.V1Endpoints;
}

export function demoObjects(cluster: SampleCluster = sampleCluster()): DemoObjects {
  const endpointPorts = cluster.endpoints.subsets?.[0]?.ports ?? [];
  const addresses = cluster.endpoints.subsets?.[0]?.addresses ?? [];
  const podOf = (ip: string) => cluster.pods.find((pod) => pod.status.podIP === ip);
  const pod = ({ metadata, spec, status }: SampleCluster['pods'][number]): k8s.V1Pod => ({
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      labels: DEMO_LABELS,
      annotations: metadata.annotations,
    },
    // Never runs: there is no kubelet. The status below is what one would report.
    spec: { nodeName: spec.nodeName, containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
    status: { phase: status.phase, podIP: status.podIP, podIPs: status.podIP ? [{ ip: status.podIP }] : undefined },
  });
  const peer = pod({
    kind: 'Pod',
    metadata: { name: PEER_POD, namespace: 'default', uid: '', annotations: {} },
    spec: { nodeName: 'node2' },
    status: { phase: 'Running', podIP: '10.1.2.6' },
  });
  return {
    runtimeClass: { metadata: { name: PEER_RUNTIME_CLASS, labels: DEMO_LABELS }, handler: PEER_RUNTIME_CLASS },
    peerPod: { ...peer, spec: { ...peer.spec!, runtimeClassName: PEER_RUNTIME_CLASS } },
    nodes: cluster.nodes.map(({ metadata, spec, status }) => ({
      metadata: { name: metadata.name, labels: DEMO_LABELS, annotations: metadata.annotations },
      spec: { podCIDR: spec.podCIDR, podCIDRs: spec.podCIDR ? [spec.podCIDR] : undefined },
      status: { addresses: status.addresses },
    })),
    pods: cluster.pods.map(pod),
    service: {
      metadata: {
        name: cluster.service.metadata.name,
        namespace: cluster.service.metadata.namespace,
        labels: DEMO_LABELS,
      },
      // No clusterIP: the fixture's may lie outside this cluster's service range, so the API server picks one.
      spec: {
        type: cluster.service.spec.type,
        ports: (cluster.service.spec.ports ?? []).map((port) => ({
          ...port,
          targetPort: endpointPorts.find((target) => target.name === port.name)?.port ?? port.port,
        })),
      },
    },
    endpoints: {
      metadata: {
        name: cluster.endpoints.metadata.name,
        namespace: cluster.endpoints.metadata.namespace,
        labels: DEMO_LABELS,
      },
      subsets: [
        {
          addresses: addresses.map(({ ip }) => {
            const pod = podOf(ip);
            return {
              ip,
              nodeName: pod?.spec.nodeName,
              targetRef: pod && { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name },
            };
          }),
          ports: endpointPorts,
        },
      ],
    },
  };
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface PeerPodObject extends k8s.KubernetesObject {
  spec?: { cloudProvider?: string; instanceID?: string };
}

interface TranslationObject extends k8s.KubernetesObject {
  resources?: unknown[];
  status?: { conditions?: Condition[] };
}

const statusOf = (error: unknown) => (error instanceof k8s.ApiException ? error.code : undefined);

/** Undefined when the object does not exist. */
async function readOrAbsent<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/** Creates, or keeps what an earlier demo run created. */
async function createOrKeep<T>(create: () => Promise<T>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (statusOf(error) !== 409) throw error;
  }
}

interface DemoEntry {
  ref: ObjectRef;
  read: () => Promise<k8s.KubernetesObject>;
  remove: () => Promise<unknown>;
}

/** A demo object as the API server has it. */
interface LiveObject {
  ref: ObjectRef;
  object: k8s.KubernetesObject;
}

const refKey = (ref: { namespace?: string; name: string }) =>
  ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
const translationKey = (t: TranslationObject) => refKey(t.metadata as { namespace: string; name: string });

class Demo {
  private readonly core: k8s.CoreV1Api;
  private readonly custom: k8s.CustomObjectsApi;
  private readonly node: k8s.NodeV1Api;
  private readonly admin?: EmulatorAdmin;
  private readonly objects = demoObjects();
  private readonly kubeConfig = new k8s.KubeConfig();
  /** A stack without MidoNet (`steward up --backends peerpods`) shows the peer pod alone: nothing else gets a lifecycle. */
  private readonly withMidonet: boolean;

  constructor(
    private readonly stack: StackInfo,
    /** ` --stack <file>` when not the default one, for the hints printed. */
    private readonly stackArg: string,
    private readonly out: (text: string) => void,
    private readonly withPeerPod: boolean,
  ) {
    const kubeConfig = this.kubeConfig;
    kubeConfig.loadFromFile(stack.kubernetes.kubeconfig);
    this.core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    this.custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
    this.node = kubeConfig.makeApiClient(k8s.NodeV1Api);
    this.withMidonet = stack.midonet !== undefined;
    const adminUrl = stack.midonet?.adminUrl;
    this.admin = adminUrl ? new (loadDevStack().EmulatorAdmin)(adminUrl) : undefined;
  }

  /** The sample's Pods, and the peer pod when asked for. */
  private pods(): k8s.V1Pod[] {
    return [...(this.withMidonet ? this.objects.pods : []), ...(this.withPeerPod ? [this.objects.peerPod] : [])];
  }

  /** Each demo object: its ref, how to read it now, and how to delete it. */
  private entries(): DemoEntry[] {
    const { core } = this;
    const { nodes, service, endpoints } = this.objects;
    const pods = this.pods();
    const name = (o: { metadata?: k8s.V1ObjectMeta }) => o.metadata!.name!;
    const namespace = (o: { metadata?: k8s.V1ObjectMeta }) => o.metadata!.namespace!;
    const nodeEntries = nodes.map((n) => ({
      ref: { kind: 'Node' as const, name: name(n) },
      read: () => core.readNode({ name: name(n) }),
      remove: () => core.deleteNode({ name: name(n) }),
    }));
    const podEntries = pods.map((p) => ({
      ref: { kind: 'Pod' as const, namespace: namespace(p), name: name(p) },
      read: () => core.readNamespacedPod({ name: name(p), namespace: namespace(p) }),
      // No kubelet confirms a graceful deletion: without grace 0 the Pod would stay Terminating.
      remove: () => core.deleteNamespacedPod({ name: name(p), namespace: namespace(p), gracePeriodSeconds: 0 }),
    }));
    const serviceEntry = {
      ref: { kind: 'Service' as const, namespace: namespace(service), name: name(service) },
      read: () => core.readNamespacedService({ name: name(service), namespace: namespace(service) }),
      remove: () => core.deleteNamespacedService({ name: name(service), namespace: namespace(service) }),
    };
    const endpointsEntry = {
      ref: { kind: 'Endpoints' as const, namespace: namespace(endpoints), name: name(endpoints) },
      read: () => core.readNamespacedEndpoints({ name: name(endpoints), namespace: namespace(endpoints) }),
      remove: () => core.deleteNamespacedEndpoints({ name: name(endpoints), namespace: namespace(endpoints) }),
    };
    return this.withMidonet ? [...nodeEntries, ...podEntries, serviceEntry, endpointsEntry] : podEntries;
  }

  async create(timeoutMs: number): Promise<void> {
    if (this.withMidonet) await this.seedHosts();
    await this.createObjects();
    const live = await Promise.all(
      this.entries().map(async (entry) => ({ ref: entry.ref, object: await entry.read() })),
    );
    this.out(`\nKubernetes objects (label ${Object.entries(DEMO_LABELS)[0]!.join('=')}):\n`);
    this.out(table(live.map(({ ref, object }) => [ref.kind, refKey(ref), `uid ${object.metadata?.uid ?? ''}`])));
    if (this.withMidonet) {
      await this.untilTranslationsReady(live, timeoutMs);
      await this.printEmulatorResources();
    }
    if (this.withPeerPod) await this.untilPeerPodHasVm(timeoutMs);
    this.printLinks('Lifecycle workflows', [
      ...(this.withMidonet ? [GLOBAL_MIDONET_WORKFLOW_ID, ...live.map(({ ref }) => workflowId(ref))] : []),
      ...(this.withPeerPod ? [workflowId(PEER_POD_REF)] : []),
    ]);
    this.out(`\nUndo with: steward demo --cleanup${this.stackArg}\n`);
  }

  /** Real hosts are registered by MidoNet agents; the emulator has none until told. */
  private async seedHosts(): Promise<void> {
    if (!this.admin) {
      this.out('MidoNet is not the emulator: its agents must have registered the hosts the sample Nodes name.\n');
      return;
    }
    const { hosts } = sampleCluster();
    for (const host of hosts) await this.admin.seedHost(host);
    this.out(`Seeded ${hosts.length} MidoNet hosts in the emulator: ${hosts.map((h) => h.name).join(', ')}\n`);
  }

  /** Status goes through the status subresource, as a kubelet (absent here) would write it. */
  private async createObjects(): Promise<void> {
    const { core, objects } = this;
    for (const node of this.withMidonet ? objects.nodes : []) {
      await createOrKeep(() => core.createNode({ body: node }));
      const current = await core.readNode({ name: node.metadata!.name! });
      await core.replaceNodeStatus({
        name: node.metadata!.name!,
        body: { ...current, status: { ...current.status, ...node.status } },
      });
    }
    if (this.withPeerPod) await createOrKeep(() => this.node.createRuntimeClass({ body: objects.runtimeClass }));
    for (const pod of this.pods()) {
      const { name, namespace } = pod.metadata as { name: string; namespace: string };
      await createOrKeep(() => core.createNamespacedPod({ namespace, body: pod }));
      const current = await core.readNamespacedPod({ name, namespace });
      await core.replaceNamespacedPodStatus({
        name,
        namespace,
        body: { ...current, status: { ...current.status, ...pod.status } },
      });
    }
    if (!this.withMidonet) return;
    const { service, endpoints } = objects;
    await createOrKeep(() => core.createNamespacedService({ namespace: service.metadata!.namespace!, body: service }));
    await createOrKeep(() =>
      core.createNamespacedEndpoints({ namespace: endpoints.metadata!.namespace!, body: endpoints }),
    );
  }

  /** Waits until every Translation the live objects should own exists and is Ready, and prints them with their owner. */
  private async untilTranslationsReady(live: LiveObject[], timeoutMs: number): Promise<void> {
    const expected = expectedTranslations(live);
    const owners = new Map(live.map(({ ref, object }) => [object.metadata!.uid!, ref]));
    this.out(`\nWaiting up to ${timeoutMs / 1000} s until their ${expected.size} Translations are Ready…\n`);
    const ready = await this.poll(timeoutMs, async () => {
      const owned = (await this.translations()).filter((t) =>
        t.metadata?.ownerReferences?.some((o) => owners.has(o.uid)),
      );
      const problems = notReady(expected, owned);
      return problems.length ? { done: false as const, problems } : { done: true as const, value: owned };
    });
    if (!ready.done)
      throw new Error(
        `timed out after ${timeoutMs / 1000} s; Translations not Ready:\n  ${ready.problems.join('\n  ')}`,
      );

    this.out(`\nTranslations: ${ready.value.length}, all Ready\n`);
    this.out(
      table(
        ready.value.map((t) => {
          const owner = owners.get(t.metadata!.ownerReferences!.find((o) => owners.has(o.uid))!.uid)!;
          return [
            `${owner.kind} ${refKey(owner)}`,
            'Ready=True',
            `${t.resources?.length ?? 0} resources`,
            translationKey(t),
          ];
        }),
      ),
    );
  }

  private async printEmulatorResources(): Promise<void> {
    if (!this.admin) return;
    const dump = await this.admin.dump();
    const counts = Object.entries(dump).filter(([, items]) => items.length > 0);
    this.out(
      `\nMidoNet resources in the emulator (all, the cluster's globals included):\n${table(counts.map(([kind, items]) => [kind, String(items.length)]))}`,
    );
  }

  private async untilPeerPodHasVm(timeoutMs: number): Promise<void> {
    const key = refKey(PEER_POD_REF);
    this.out(`\nWaiting until peer pod ${key} has its VM (runtime class ${PEER_RUNTIME_CLASS})…\n`);
    const recorded = await this.poll(timeoutMs, async () => {
      const peerPod = await this.peerPod();
      return peerPod?.spec?.instanceID
        ? { done: true as const, value: peerPod }
        : {
            done: false as const,
            problems: [
              `PeerPod ${key}: ${peerPod ? 'no instance yet' : 'not created yet'} (\`steward status peerpod ${key}\` tells why)`,
            ],
          };
    });
    if (!recorded.done) throw new Error(`timed out after ${timeoutMs / 1000} s; ${recorded.problems.join('; ')}`);
    const { cloudProvider = '?', instanceID = '?' } = recorded.value.spec ?? {};
    this.out(`\nPeer pod VM:\n${table([[`Pod ${key}`, `PeerPod ${key}`, `${cloudProvider} VM ${instanceID}`]])}`);
    if (cloudProvider !== 'libvirt') return;
    this.out(`  see it: virsh -c ${this.stack.libvirt.uri} dominfo ${instanceID}\n`);
    // Its root disk (backed by the pod-VM image) and its cloud-init ISO, as libvirt lists them.
    const disks = await execFileAsync('virsh', ['-c', this.stack.libvirt.uri, 'domblklist', instanceID, '--details']);
    this.out(`\nIts volumes (virsh domblklist):\n${disks.stdout.trimEnd()}\n`);
  }

  async cleanup(timeoutMs: number): Promise<void> {
    const uids = new Set<string>();
    // Endpoints first, Nodes last: dependents go before what they depend on.
    for (const entry of this.entries().reverse()) {
      const object = await readOrAbsent(entry.read);
      if (!object) continue;
      if (object.metadata?.labels?.[Object.keys(DEMO_LABELS)[0]!] !== Object.values(DEMO_LABELS)[0]) {
        this.out(`${entry.ref.kind} ${refKey(entry.ref)} was not created by steward demo: left alone\n`);
        continue;
      }
      uids.add(object.metadata!.uid!);
      await readOrAbsent(entry.remove);
      this.out(`deleted ${entry.ref.kind} ${refKey(entry.ref)}\n`);
    }
    this.out(
      `\nWaiting up to ${timeoutMs / 1000} s until their Translations${this.withPeerPod ? " and the peer pod's VM and PeerPod" : ''} are gone…\n`,
    );
    const gone = await this.poll(timeoutMs, async () => {
      await this.confirmOwnCleanup();
      const left = (await this.translations()).filter((t) => t.metadata?.ownerReferences?.some((o) => uids.has(o.uid)));
      const problems = left.map((t) => {
        const ready = t.status?.conditions?.find((c) => c.type === 'Ready');
        const finalizers = t.metadata?.finalizers?.join(', ') || 'none';
        return `${translationKey(t)}: finalizers ${finalizers}${ready ? `; Ready=${ready.status} ${ready.reason}: ${ready.message}` : ''}`;
      });
      const peerPod = this.withPeerPod ? await this.peerPod() : undefined;
      if (peerPod)
        problems.push(
          `PeerPod ${refKey(PEER_POD_REF)}: finalizers ${peerPod.metadata?.finalizers?.join(', ') || 'none'} (its VM is being deleted)`,
        );
      return problems.length ? { done: false as const, problems } : { done: true as const, value: undefined };
    });
    if (!gone.done)
      throw new Error(`timed out after ${timeoutMs / 1000} s; still there:\n  ${gone.problems.join('\n  ')}`);
    if (this.withPeerPod) {
      const runtimeClass = await readOrAbsent(() => this.node.readRuntimeClass({ name: PEER_RUNTIME_CLASS }));
      if (runtimeClass?.metadata?.labels?.[Object.keys(DEMO_LABELS)[0]!] === Object.values(DEMO_LABELS)[0]) {
        await readOrAbsent(() => this.node.deleteRuntimeClass({ name: PEER_RUNTIME_CLASS }));
        this.out(`deleted RuntimeClass ${PEER_RUNTIME_CLASS}\n`);
      }
    }
    if (this.admin) {
      for (const host of sampleCluster().hosts) await this.admin.removeHost(host.id).catch(() => undefined);
      this.out('Removed the seeded MidoNet hosts from the emulator.\n');
    }
    this.out(this.withMidonet ? 'Translations gone: the demo is cleaned up.\n' : 'The demo is cleaned up.\n');
  }

  /**
   * The demo's cleanup deletes most of the sample cluster at once, which Steward's guard against mass deletion holds
   * (docs/operations.md): the go-ahead is given here, recorded, since deleting these objects is what was asked.
   */
  private async confirmOwnCleanup(): Promise<void> {
    if (!this.withMidonet || !(await guardStatus(this.kubeConfig)).held) return;
    const connection = await Connection.connect({ address: this.stack.temporal.address });
    try {
      const { goAhead, woken } = await confirmMassDeletion({
        kubeConfig: this.kubeConfig,
        temporal: new Client({ connection, namespace: this.stack.temporal.namespace }),
        taskQueue: TASK_QUEUE,
        reason: "steward demo --cleanup: the demo's own objects",
        by: 'steward demo',
      });
      this.out(
        `Steward's guard against mass deletion held these deletions (most of the cluster at once); the demo confirms them as ${goAhead.by} (${woken} lifecycles woken). Elsewhere it waits for: steward cleanup --confirm-mass-deletion --reason "…"\n`,
      );
    } finally {
      await connection.close();
    }
  }

  private peerPod(): Promise<PeerPodObject | undefined> {
    return readOrAbsent(
      async () =>
        (await this.custom.getNamespacedCustomObject({
          ...PEERPOD_API,
          namespace: 'default',
          name: PEER_POD,
        })) as PeerPodObject,
    );
  }

  private async translations(): Promise<TranslationObject[]> {
    const list = (await this.custom.listClusterCustomObject({ ...TRANSLATION_API })) as { items: TranslationObject[] };
    return list.items;
  }

  /** Polls `probe` until done or the deadline; on timeout returns the last problems. */
  private async poll<T>(
    timeoutMs: number,
    probe: () => Promise<{ done: true; value: T } | { done: false; problems: string[] }>,
  ) {
    const deadline = Date.now() + timeoutMs;
    let reported = -1;
    for (;;) {
      const result = await probe();
      if (result.done || Date.now() > deadline) return result;
      if (result.problems.length !== reported) this.out(`  ${result.problems.length} to go\n`);
      reported = result.problems.length;
      await sleep(POLL_MS);
    }
  }

  /** The UI links alone: the workflow id is in each, and a long Translation name would widen a table past reading. */
  private printLinks(title: string, ids: string[]): void {
    const { uiUrl, namespace } = this.stack.temporal;
    if (!uiUrl) {
      this.out(`\n${title} (external Temporal: open them in its own UI):\n${ids.map((id) => `  ${id}\n`).join('')}`);
      return;
    }
    this.out(
      `\n${title} in the Temporal UI:\n${ids.map((id) => `  ${temporalUiLink(uiUrl, namespace, id)}\n`).join('')}`,
    );
  }
}

/** What keeps the expected Translations from being Ready, one line each, by `namespace/name`; none when all are. */
function notReady(expected: Set<string>, owned: TranslationObject[]): string[] {
  const byKey = new Map(owned.map((t) => [translationKey(t), t]));
  return [...new Set([...expected, ...byKey.keys()])].sort().flatMap((key) => {
    const t = byKey.get(key);
    if (!t) return [`${key}: not created yet`];
    const condition = t.status?.conditions?.find((c) => c.type === 'Ready');
    return condition?.status === 'True'
      ? []
      : [
          `${key}: Ready=${condition?.status ?? 'unknown'}${condition ? ` ${condition.reason}: ${condition.message}` : ' (no status yet)'}`,
        ];
  });
}

/** `namespace/name` of every Translation the objects should own, computed by the translation the workflows run. */
function expectedTranslations(live: LiveObject[]): Set<string> {
  const projections = live.map(({ ref, object }) =>
    project(ref.kind as 'Node' | 'Pod' | 'Service' | 'Endpoints', object),
  );
  const nodes = projections.filter((p): p is NodeProjection => 'kind' in p && p.kind === 'Node');
  const service = projections.find((p): p is ServiceProjection => 'kind' in p && p.kind === 'Service') ?? null;
  const keys = new Set<string>();
  for (const projection of projections) {
    if (!('kind' in projection)) throw new Error(`a demo object does not project: ${JSON.stringify(projection)}`);
    const node =
      projection.kind === 'Pod' ? (nodes.find((n) => n.metadata.name === projection.spec.nodeName) ?? null) : null;
    const result = translate(projection, { node, service });
    if (!result.ok) throw new Error(`a demo object does not translate: ${JSON.stringify(result.error)}`);
    for (const t of result.translations) keys.add(refKey(t));
  }
  return keys;
}

function table(rows: string[][]): string {
  const widths = rows.reduce<number[]>((w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)), []);
  return rows
    .map(
      (row) =>
        `  ${row
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'on the running stack (npm start): create sample Nodes, Pods, a Service with two ports and its Endpoints, and a peer pod with a cloud VM, wait until their Translations are Ready and the VM is recorded, and print them with the Temporal UI links of their workflows',
    )
    .option(
      '--stack <file>',
      'stack.json of the running stack (default .steward/stack.json, where steward up writes it)',
    )
    .option(
      '--timeout <duration>',
      'how long to wait for the Translations, e.g. 90s, 5m (default 3m; a bare number is seconds)',
    )
    .option('--cleanup', 'delete what demo created and wait until their Translations are gone')
    .option('--no-peer-pod', 'leave out the peer pod (for a worker without cloud activities)')
    .action(
      async (flags: { stack?: string; timeout?: string; cleanup?: boolean; peerPod?: boolean }, self: Command) => {
        const options = parseDemoOptions(flags);
        const stackArg = flags.stack ? ` --stack ${flags.stack}` : '';
        const demo = new Demo(
          options.stack,
          stackArg,
          (text) => self.configureOutput().writeOut?.(text),
          options.peerPod,
        );
        if (options.cleanup) await demo.cleanup(options.timeoutMs);
        else await demo.create(options.timeoutMs);
      },
    );
}
