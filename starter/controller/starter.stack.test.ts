import * as k8s from '@kubernetes/client-node';
import { Client, Connection, isGrpcServiceError, WorkflowNotFoundError } from '@temporalio/client';
import pino from 'pino';
import { observationsIn } from '../../test/support';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { sleep } from '../../deploy/local/process';
import type { Observation } from '../../model/messages';
import { K8sKind, K8sName, K8sNamespace, K8sUID } from '../../model/search-attributes';
import { createLeaderElector } from './leader';
import { createStarter, type Starter, type StarterOptions } from './starter';

// Short leases so a takeover fits in a test; debounce short so each step settles fast.
const LEASE = { namespace: 'kube-system', leaseDurationSeconds: 3, renewSeconds: 1 };
const SETTLE_MS = 1_500;
const logger = pino({ level: process.env.STARTER_TEST_LOG ?? 'warn' });

const suffix = Date.now().toString(36);
const kubeConfig = new k8s.KubeConfig();
let core: k8s.CoreV1Api;
let client: Client;
let connection: Connection;
const starters: Starter[] = [];

beforeAll(async () => {
  const info = stackInfo();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  connection = await Connection.connect({ address: info.temporal.address });
  client = new Client({ connection, namespace: info.temporal.namespace });
});

afterAll(async () => {
  await Promise.all(starters.map((s) => s.stop()));
  // No worker runs here: every workflow these tests started is still running. End them.
  for await (const wf of client.workflow.list({ query: 'ExecutionStatus="Running"' })) {
    if (wf.workflowId.includes(suffix))
      await client.workflow.getHandle(wf.workflowId).terminate('starter stack test done');
  }
  await connection.close();
});

function starter(
  namespace: string,
  identity: string,
  leaseName: string,
  options: Pick<StarterOptions, 'kinds' | 'debounceMs' | 'endpointsFrom'> = {},
): Starter {
  const s = createStarter({
    debounceMs: 100,
    ...options,
    kubeConfig,
    temporalClient: client,
    namespace,
    identity,
    lease: { ...LEASE, name: leaseName },
    logger,
  });
  starters.push(s);
  s.start();
  return s;
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const GRPC_NOT_FOUND = 5;

/** The observations a workflow was given (started with, then signalled), decoded, oldest first. */
async function observed(workflowId: string): Promise<Observation[]> {
  try {
    return observationsIn(await client.workflow.getHandle(workflowId).fetchHistory());
  } catch (error) {
    // fetchHistory passes the server's NOT_FOUND through as a raw gRPC error.
    if (error instanceof WorkflowNotFoundError || (isGrpcServiceError(error) && Number(error.code) === GRPC_NOT_FOUND))
      return [];
    throw error;
  }
}

const signalCount = (workflowId: string, n: number) =>
  waitFor(`${n} observation(s) given to ${workflowId}`, async () =>
    (await observed(workflowId)).length >= n ? true : undefined,
  );

async function namespace(name: string) {
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

const podBody = (name: string) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }] },
});

describe('starter controller on the embedded stack', () => {
  it('sends one signal per created object, nothing for a change outside the projection, and gone on delete', async () => {
    const ns = await namespace(`starter-${suffix}-a`);
    const s = starter(ns, `solo-${suffix}`, `steward-starter-${suffix}-a`);
    await waitFor('leadership', () => s.stats().isLeader);

    const nodeName = `node-${suffix}`;
    const node = await core.createNode({ body: { metadata: { name: nodeName }, spec: { podCIDR: '10.1.0.0/24' } } });
    const pod = await core.createNamespacedPod({ namespace: ns, body: podBody('web') });
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } },
    });
    await core.createNamespacedEndpoints({
      namespace: ns,
      body: { metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '10.1.0.5' }], ports: [{ port: 8080 }] }] },
    });

    const ids = {
      pod: `pod/${ns}/web`,
      node: `node/${nodeName}`,
      service: `service/${ns}/web`,
      endpoints: `endpoints/${ns}/web`,
    };
    for (const id of Object.values(ids)) await signalCount(id, 1);
    await sleep(SETTLE_MS);
    for (const id of Object.values(ids))
      expect({ id, signals: (await observed(id)).length }).toEqual({ id, signals: 1 });

    const description = await client.workflow.getHandle(ids.pod).describe();
    expect(description.type).toBe('podLifecycle');
    expect(description.status.name).toBe('RUNNING');
    expect(await description.staticSummary()).toBe(`Pod ${ns}/web`);
    const sa = description.typedSearchAttributes;
    expect([sa.get(K8sKind), sa.get(K8sNamespace), sa.get(K8sName), sa.get(K8sUID)]).toEqual([
      'Pod',
      ns,
      'web',
      pod.metadata!.uid,
    ]);
    const [first] = await observed(ids.node);
    expect(first).toMatchObject({
      ref: { kind: 'Node', name: nodeName },
      uid: node.metadata!.uid,
      gone: false,
      projection: { kind: 'Node', spec: { podCIDR: '10.1.0.0/24' } },
    });

    // A label is not in the projection: the API server sees an update, the workflow hears nothing.
    const suppressedBefore = s.stats().suppressed;
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    await core.patchNamespacedPod(
      { name: 'web', namespace: ns, body: { metadata: { labels: { tier: 'front' } } } },
      merge,
    );
    await waitFor('the label update to reach the predicate', () => s.stats().suppressed > suppressedBefore);
    await sleep(SETTLE_MS);
    expect((await observed(ids.pod)).length).toBe(1);

    // The MAC annotation is in the projection: one more signal, carrying it.
    await core.patchNamespacedPod(
      {
        name: 'web',
        namespace: ns,
        body: { metadata: { annotations: { 'midonet.org/mac-address': '02:00:00:00:00:01' } } },
      },
      merge,
    );
    await signalCount(ids.pod, 2);
    expect((await observed(ids.pod))[1]?.projection).toMatchObject({
      metadata: { annotations: { 'midonet.org/mac-address': '02:00:00:00:00:01' } },
    });

    await core.deleteNamespacedPod({ name: 'web', namespace: ns, gracePeriodSeconds: 0 });
    await signalCount(ids.pod, 3);
    await sleep(SETTLE_MS);
    const signals = await observed(ids.pod);
    expect(signals.map((o) => o.gone)).toEqual([false, false, true]);
    expect(signals[2]?.uid).toBe(pod.metadata!.uid);

    // A gone object whose workflow is not running is not started again just to be told.
    await client.workflow.getHandle(ids.node).terminate('testing a gone without a workflow');
    const sentBefore = s.stats().signalsSent;
    await core.deleteNode({ name: nodeName });
    await waitFor('the Node deletion to be handled', () => s.stats().signalsSent > sentBefore);
    expect((await client.workflow.getHandle(ids.node).describe()).status.name).toBe('TERMINATED');
    expect(s.stats().errors).toBe(0);
  });

  it("reads a Service's Endpoints from its EndpointSlices when told to: one Observation per Service, with the Service's UID, gone with its last slice", async () => {
    const ns = await namespace(`starter-${suffix}-slices`);
    const s = starter(ns, `slices-${suffix}`, `steward-starter-${suffix}-slices`, { endpointsFrom: 'EndpointSlices' });
    await waitFor('leadership', () => s.stats().isLeader);
    const discovery = kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
    const service = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80 }] } },
    });
    const owner = { apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata!.uid!, controller: true };
    // As the endpointslice controller writes them (the embedded stack runs none): two slices of one Service.
    const sliceBody = (name: string, ip: string): k8s.V1EndpointSlice => ({
      metadata: { name, labels: { 'kubernetes.io/service-name': 'web' }, ownerReferences: [owner] },
      addressType: 'IPv4',
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
    });
    await discovery.createNamespacedEndpointSlice({ namespace: ns, body: sliceBody('web-a', '10.1.0.6') });
    await discovery.createNamespacedEndpointSlice({ namespace: ns, body: sliceBody('web-b', '10.1.0.5') });
    const id = `endpoints/${ns}/web`;
    const last = await waitFor('both slices in the Endpoints', async () => {
      const given = (await observed(id)).at(-1);
      const subsets = (given?.projection as { subsets?: { addresses: { ip: string }[] }[] } | undefined)?.subsets;
      return subsets?.[0]?.addresses.length === 2 ? given : undefined;
    });
    expect(last).toMatchObject({
      uid: service.metadata!.uid,
      gone: false,
      projection: {
        kind: 'Endpoints',
        ownerKind: 'Service',
        metadata: { namespace: ns, name: 'web', uid: service.metadata!.uid },
        subsets: [
          {
            addresses: [{ ip: '10.1.0.5' }, { ip: '10.1.0.6' }],
            ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
          },
        ],
      },
    });
    await discovery.deleteNamespacedEndpointSlice({ namespace: ns, name: 'web-a' });
    await discovery.deleteNamespacedEndpointSlice({ namespace: ns, name: 'web-b' });
    await waitFor('the Endpoints gone with the last slice', async () => (await observed(id)).at(-1)?.gone || undefined);
    expect(s.stats().errors).toBe(0);
  });

  it('a burst of changes to one object goes out as one or few observations, the last of them the newest', async () => {
    const ns = await namespace(`starter-${suffix}-burst`);
    // Pods alone: the count of sends below is the Pod's, not that of Nodes other files make on the shared stack.
    const s = starter(ns, `burst-${suffix}`, `steward-starter-${suffix}-burst`, { debounceMs: 1_000, kinds: ['Pod'] });
    await waitFor('leadership', () => s.stats().isLeader);
    await core.createNamespacedPod({ namespace: ns, body: podBody('web') });
    const id = `pod/${ns}/web`;
    await signalCount(id, 1);

    // 20 changes of what the workflow reads (the MAC annotation), all at once: the queue holds the Pod's key once,
    // and what it sends is read from the informer's cache when its window closes.
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    const mac = (i: number) => `02:00:00:00:00:${i.toString(16).padStart(2, '0')}`;
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        core.patchNamespacedPod(
          { name: 'web', namespace: ns, body: { metadata: { annotations: { 'midonet.org/mac-address': mac(i) } } } },
          merge,
        ),
      ),
    );
    const newest = (await core.readNamespacedPod({ name: 'web', namespace: ns })).metadata!.annotations!;
    const annotations = (o: Observation | undefined) =>
      (o?.projection as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata?.annotations;
    await waitFor('the newest to be delivered', async () =>
      annotations((await observed(id)).at(-1))?.['midonet.org/mac-address'] === newest['midonet.org/mac-address']
        ? true
        : undefined,
    );
    await sleep(SETTLE_MS);
    const burst = (await observed(id)).slice(1);
    expect(burst.length).toBeLessThanOrEqual(3);
    expect(annotations(burst.at(-1))?.['midonet.org/mac-address']).toBe(newest['midonet.org/mac-address']);
    expect(s.stats().signalsSent).toBe(1 + burst.length);
  });

  it('two starters on one Lease: only the leader sends; when it stops, the other takes over and sends', async () => {
    const ns = await namespace(`starter-${suffix}-b`);
    const lease = `steward-starter-${suffix}-b`;
    const both = [starter(ns, `one-${suffix}`, lease), starter(ns, `two-${suffix}`, lease)];
    const leader = await waitFor('one leader', () => both.find((s) => s.stats().isLeader));
    const follower = both.find((s) => s !== leader)!;
    await sleep(LEASE.renewSeconds * 1_000 * 2);
    expect(both.map((s) => s.stats().isLeader).filter(Boolean)).toHaveLength(1);

    await core.createNamespacedPod({ namespace: ns, body: podBody('first') });
    await signalCount(`pod/${ns}/first`, 1);
    await sleep(SETTLE_MS);
    expect((await observed(`pod/${ns}/first`)).length).toBe(1);
    expect(follower.stats()).toMatchObject({ signalsSent: 0, isLeader: false });
    expect(follower.stats().known.Pod).toBe(1);

    const stoppedAt = Date.now();
    await leader.stop();
    await waitFor('the follower to take over', () => follower.stats().isLeader, LEASE.leaseDurationSeconds * 1_000);
    expect(Date.now() - stoppedAt).toBeLessThan(LEASE.leaseDurationSeconds * 1_000);

    await core.createNamespacedPod({ namespace: ns, body: podBody('second') });
    await signalCount(`pod/${ns}/second`, 1);
    // A new leader cannot know what its predecessor got out, so it sends every object it knows once.
    await signalCount(`pod/${ns}/first`, 2);
    await sleep(SETTLE_MS);
    expect((await observed(`pod/${ns}/second`)).length).toBe(1);
    expect((await observed(`pod/${ns}/first`)).length).toBe(2);
  });

  it('a Pod deleted while the starter did not lead is told gone as soon as it leads again, not at the next re-list', async () => {
    // Found by the 5,000-Pod benchmark: renewals lapsed on a saturated machine, the deletions seen meanwhile were
    // dropped, and regaining the Lease only re-sent the objects that still existed. The Pods' workflows waited for
    // a re-list (10 minutes here) whose list of the running workflows then timed out.
    const ns = await namespace(`starter-${suffix}-d`);
    const leaseName = `steward-starter-${suffix}-d`;
    // Pods only: Nodes are cluster-wide, and another test file's Node on the shared stack would count as a repair.
    const s = starter(ns, `lapsed-${suffix}`, leaseName, { kinds: ['Pod'] });
    await waitFor('leadership', () => s.stats().isLeader);
    const names = ['kept', 'deleted', 'told'];
    for (const name of names) await core.createNamespacedPod({ namespace: ns, body: podBody(name) });
    for (const name of names) await signalCount(`pod/${ns}/${name}`, 1);
    await core.deleteNamespacedPod({ name: 'told', namespace: ns, gracePeriodSeconds: 0 });
    await signalCount(`pod/${ns}/told`, 2);

    // Another candidate takes the Lease, as a starter elsewhere would, and then stops renewing it.
    const coordination = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const held = await coordination.readNamespacedLease({ name: leaseName, namespace: LEASE.namespace });
    const taken = {
      ...held.spec,
      holderIdentity: `elsewhere-${suffix}`,
      leaseDurationSeconds: 8,
      renewTime: new k8s.V1MicroTime(Date.now()),
    };
    await coordination.replaceNamespacedLease({
      name: leaseName,
      namespace: LEASE.namespace,
      body: { ...held, spec: taken },
    });
    await waitFor('the starter to stop leading', () => !s.stats().isLeader);
    await core.deleteNamespacedPod({ name: 'deleted', namespace: ns, gracePeriodSeconds: 0 });
    await waitFor('the starter to see the deletion', () => s.stats().known.Pod === 1);
    expect(s.stats().isLeader).toBe(false);

    await waitFor('the starter to lead again', () => s.stats().isLeader, 20_000);
    await signalCount(`pod/${ns}/deleted`, 2);
    expect((await observed(`pod/${ns}/deleted`)).map((o) => o.gone)).toEqual([false, true]);
    // The Pod whose deletion it delivered while it led is not told again: its workflow heard it.
    await signalCount(`pod/${ns}/kept`, 2);
    await sleep(SETTLE_MS);
    expect((await observed(`pod/${ns}/told`)).map((o) => o.gone)).toEqual([false, true]);
    expect(s.stats().repaired).toBe(1);
  });

  it('a Lease left by a crashed holder is taken over once it has not changed for the lease duration, not before', async () => {
    const coordination = kubeConfig.makeApiClient(k8s.CoordinationV1Api);
    const name = `steward-starter-${suffix}-c`;
    const now = new k8s.V1MicroTime(Date.now());
    await coordination.createNamespacedLease({
      namespace: LEASE.namespace,
      body: {
        metadata: { name },
        spec: {
          holderIdentity: 'crashed',
          leaseDurationSeconds: LEASE.leaseDurationSeconds,
          renewTime: now,
          acquireTime: now,
        },
      },
    });
    const elector = createLeaderElector({
      api: coordination,
      identity: `heir-${suffix}`,
      lease: { ...LEASE, name },
      logger,
    });
    const startedAt = Date.now();
    elector.start();
    try {
      await waitFor('the takeover', () => elector.isLeader(), LEASE.leaseDurationSeconds * 3_000);
      const waited = Date.now() - startedAt;
      expect(waited).toBeGreaterThanOrEqual(LEASE.leaseDurationSeconds * 1_000);
      expect(waited).toBeLessThan((LEASE.leaseDurationSeconds + 2 * LEASE.renewSeconds) * 1_000);
      const lease = await coordination.readNamespacedLease({ name, namespace: LEASE.namespace });
      expect(lease.spec).toMatchObject({ holderIdentity: `heir-${suffix}`, leaseTransitions: 1 });
    } finally {
      await elector.stop();
    }
    expect(
      (await coordination.readNamespacedLease({ name, namespace: LEASE.namespace })).spec?.holderIdentity,
    ).toBeUndefined();
  });
});
