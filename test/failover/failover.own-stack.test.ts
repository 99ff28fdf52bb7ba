// Failover on the cluster profile (PostgreSQL, three Temporal server hosts) with Steward as a user deploys it: 3
// worker and 2 starter processes (deploy/local/steward-processes.ts), each with its own ServiceAccount token, on a
// stack of this file's own (its starters watch every object, and the checks compare all that MidoNet holds). Each
// case creates a burst of Pods, injects one fault halfway through (kill -9 of a worker, of the leading starter, of a
// history host; a PostgreSQL restart), measures the recovery, deletes the Pods, and ends on the chaos run's
// invariants (test/chaos/invariants.ts) plus every Translation Ready. The measurements go, one JSON line per case, to
// stdout and to failover.jsonl in the test state dir (.steward/test/).
import * as k8s from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from '../../deploy/local';
import { startPrivateStack, testStateDir } from '../../deploy/local/jest/stack-info';
import { sleep } from '../../deploy/local/process';
import { inParallel } from '../../bench/support';
import { startStewardProcesses, type StewardProcesses } from '../../deploy/local/steward-processes';
import type { TemporalCluster } from '../../deploy/local/temporal-cluster';
import { DEFAULT_TENANT } from '../../model/translation/ids';
import { checkAll, type Snapshot, type Violation } from '../chaos/invariants';
import { HOSTS, nodeProjection, podProjection } from '../chaos/ops';
import { takeSnapshot, type SnapshotSource } from '../chaos/snapshot';
import { workflowStates } from '../chaos/workflow-states';
import { createNode, createPod, emulatorOf, seedEmulator } from '../support/objects-harness';

const BURST = 100;
const NAMESPACE = 'default';
/**
 * Bound on each convergence (the burst, then its deletion). Not a speed check (that is the bench's): it tells a hang
 * from slowness. Beside the other CI lane, deleting 100 Pods on the cluster profile took 138–148 s, and one Pod of a
 * case still went past 240 s, so the bound leaves room for that.
 */
const CONVERGE_MS = 360_000;
/** A case: its burst, two convergences, and the fault itself. */
const CASE_MS = 2 * CONVERGE_MS + 120_000;
/** How long the history host stays down before it is started again. */
const HISTORY_HOST_DOWN_MS = 10_000;
const MEASUREMENTS = join(testStateDir, 'failover.jsonl');

let stack: Stack;
let cluster: TemporalCluster;
let steward: StewardProcesses;
let connection: Connection;
let source: SnapshotSource;

beforeAll(async () => {
  stack = await startPrivateStack({ temporal: 'cluster' });
  cluster = stack.temporalCluster!;
  // The agents' hosts and the deployer's cluster router.
  await seedEmulator(stack.info, HOSTS);
  const started = Date.now();
  steward = await startStewardProcesses({
    info: stack.info,
    workers: 3,
    starters: 2,
    secrets: { MIDONET_PASSWORD: 'admin' },
    // Each case deletes every Pod at once, the wave the guard against mass deletion holds for an operator's go-ahead;
    // failover is measured with its wave trigger off (a share of 1 is never exceeded).
    overrides: { STEWARD_MASS_DELETION_SHARE: '1' },
    report: () => {},
  });
  record('start', {
    workers: steward.workers.length,
    starters: steward.starters.length,
    processesUpMs: Date.now() - started,
  });
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(stack.info.kubernetes.kubeconfig);
  connection = await Connection.connect({ address: stack.info.temporal.address });
  source = {
    tenant: DEFAULT_TENANT,
    core: kubeConfig.makeApiClient(k8s.CoreV1Api),
    custom: kubeConfig.makeApiClient(k8s.CustomObjectsApi),
    admin: emulatorOf(stack.info).admin,
    client: new Client({ connection, namespace: stack.info.temporal.namespace }),
  };
  for (const [host] of HOSTS.entries())
    await createNode(source, nodeProjection({ kind: 'Node', name: `node-${host}`, host }));
  await converged('the Nodes and the globals');
}, 8 * 60_000);

afterAll(async () => {
  await steward?.stop();
  await connection?.close();
  await stack?.stop();
});

function record(name: string, measurement: Record<string, number | string>): void {
  const line = JSON.stringify({ case: name, ...measurement });
  process.stdout.write(`failover ${line}\n`);
  appendFileSync(MEASUREMENTS, `${line}\n`);
}

const notReady = (s: Snapshot): Violation[] =>
  s.translations
    .filter((t) => !t.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((t) => ({
      invariant: 'status',
      object: `Translation ${t.metadata.namespace}/${t.metadata.name}`,
      detail: 'not Ready',
    }));

/**
 * Waits until every invariant holds and every Translation is Ready, and returns that snapshot and when it was taken.
 * A snapshot that fails (Temporal or PostgreSQL still coming back) counts as not yet.
 */
async function converged(what: string, timeoutMs = CONVERGE_MS): Promise<{ at: number; snapshot: Snapshot }> {
  const deadline = Date.now() + timeoutMs;
  let violations: Violation[] = [];
  let last: Snapshot | undefined;
  for (;;) {
    const snapshot = await takeSnapshot(source).catch(() => undefined);
    if (snapshot) {
      last = snapshot;
      violations = [...checkAll(snapshot), ...notReady(snapshot)];
      if (violations.length === 0) return { at: Date.now(), snapshot };
    }
    if (Date.now() > deadline) break;
    await sleep(1_000);
  }
  // Shows what is wrong, and what the workflows concerned say of it (the test's log keeps only its error).
  const shown = violations.slice(0, 20);
  const workflows = last ? await workflowStates(source.client, last, shown) : [];
  throw new Error(
    [`${what}: not converged`, ...shown.map((v) => `${v.invariant} ${v.object}: ${v.detail}`), ...workflows].join('\n'),
  );
}

/** The latest time a Translation turned Ready (metav1.Time: seconds). */
const lastReadyAt = (s: Snapshot) =>
  Math.max(
    ...s.translations.flatMap(
      (t) =>
        t.status?.conditions
          ?.filter((c) => c.type === 'Ready' && c.status === 'True')
          .map((c) => Date.parse((c as { lastTransitionTime?: string }).lastTransitionTime ?? '')) ?? [],
    ),
  );

/**
 * Creates `count` Pods `<prefix>-<i>` round-robin on the Nodes, one after the other; halfway it calls `fault`, lets it
 * run while the rest are created, and returns what it gave.
 */
async function burst<T>(prefix: string, count: number, fault: () => Promise<T>): Promise<T> {
  let injected: Promise<T> | undefined;
  for (let i = 0; i < count; i++) {
    if (i === Math.floor(count / 2)) {
      injected = fault();
      // Its failure is reported when awaited below, not as an unhandled rejection meanwhile.
      injected.catch(() => undefined);
    }
    const host = i % HOSTS.length;
    await createPod(
      source,
      podProjection({
        kind: 'Pod',
        name: `${prefix}-${i}`,
        node: `node-${host}`,
        peer: false,
        phase: 'Running',
        ip: `10.1.${host}.${10 + Math.floor(i / HOSTS.length)}`,
      }),
    );
  }
  return injected!;
}

/** Deletes every Pod at once and waits until everything is clean again. */
async function deleteAll(name: string): Promise<number> {
  const started = Date.now();
  await source.core.deleteCollectionNamespacedPod({ namespace: NAMESPACE, gracePeriodSeconds: 0 });
  return (await converged(`${name}: the Pods gone`)).at - started;
}

/** Waits until the burst converged, then deletes every Pod and waits until all is clean: when and how long. */
async function convergedThenCleaned(what: string): Promise<{ at: number; snapshot: Snapshot; deleteMs: number }> {
  const { at, snapshot } = await converged(`${what}: the burst`);
  return { at, snapshot, deleteMs: await deleteAll(what) };
}

/**
 * Workflow tasks of these Pods' workflows that timed out: held by a worker that died (start-to-close), or queued for
 * it as the worker that cached the workflow (schedule-to-start on its sticky queue), then done by another.
 */
async function workflowTasksLost(prefix: string, count: number): Promise<number> {
  let lost = 0;
  const ids = Array.from({ length: count }, (_, i) => `pod/${NAMESPACE}/${prefix}-${i}`);
  await inParallel(ids, 10, async (id) => {
    const history = await source.client.workflow
      .getHandle(id)
      .fetchHistory()
      .catch(() => undefined);
    lost += (history?.events ?? []).filter((e) => e.workflowTaskTimedOutEventAttributes).length;
  });
  return lost;
}

describe('failover on the cluster profile, 3 workers and 2 starters as deployed', () => {
  it(
    "a worker killed in the middle of a 100-Pod burst: the workflow tasks it held (each Pod's push a local activity in one) time out and finish on the others",
    async () => {
      const victim = steward.workers[0]!;
      // MidoNet answering writes slowly until the kill, so that every worker has pushes under way when it comes.
      const slow = await source.admin.injectFault({ method: 'POST', path: '/**', action: 'latency', latencyMs: 1_000 });
      const killedAt = await burst('w', BURST, async () => {
        const at = Date.now();
        process.kill(victim.process.pid, 'SIGKILL');
        await victim.process.exited;
        await source.admin.removeFault(slow.id);
        return at;
      });
      const { at, snapshot, deleteMs } = await convergedThenCleaned('worker killed');
      const lost = await workflowTasksLost('w', BURST);
      record('worker-killed', {
        pods: BURST,
        workflowTasksLostWithKilledWorker: lost,
        killToLastTranslationReadyMs: lastReadyAt(snapshot) - killedAt,
        killToConvergedMs: at - killedAt,
        deleteToConvergedMs: deleteMs,
      });
      expect(lost).toBeGreaterThan(0);
    },
    CASE_MS,
  );

  it(
    'the leading starter killed mid-burst: the other takes the Lease and sends what the first never did',
    async () => {
      const holder = await steward.leaseHolder();
      const leader = steward.starters.find((s) => s.process.name === holder);
      const other = steward.starters.find((s) => s !== leader);
      if (!leader || !other)
        throw new Error(
          `the Lease names ${holder ?? 'nobody'}, not one of ${steward.starters.map((s) => s.process.name).join(', ')}`,
        );
      const { killedAt, handoverMs } = await burst('s', BURST, async () => {
        const killedAt = Date.now();
        process.kill(leader.process.pid, 'SIGKILL');
        await leader.process.exited;
        while ((await steward.leaseHolder()) !== other.process.name) {
          if (Date.now() - killedAt > 90_000)
            throw new Error(`${other.process.name} did not take the Lease within 90 s`);
          await sleep(250);
        }
        return { killedAt, handoverMs: Date.now() - killedAt };
      });
      const { at, deleteMs } = await convergedThenCleaned('leading starter killed');
      record('leading-starter-killed', {
        pods: BURST,
        killToLeaseTakenMs: handoverMs,
        killToConvergedMs: at - killedAt,
        deleteToConvergedMs: deleteMs,
      });
    },
    CASE_MS,
  );

  it(
    'a history host killed mid-burst and started again: its shards move to the other and back, nothing is lost',
    async () => {
      const { killedAt, restartMs } = await burst('h', BURST, async () => {
        const killedAt = Date.now();
        await cluster.killHost('temporal-b');
        await sleep(HISTORY_HOST_DOWN_MS);
        const restarting = Date.now();
        await cluster.restartHost('temporal-b');
        return { killedAt, restartMs: Date.now() - restarting };
      });
      const { at, deleteMs } = await convergedThenCleaned('history host killed');
      record('history-host-killed', {
        pods: BURST,
        downMs: HISTORY_HOST_DOWN_MS,
        hostRestartMs: restartMs,
        killToConvergedMs: at - killedAt,
        deleteToConvergedMs: deleteMs,
      });
    },
    CASE_MS,
  );

  it(
    'PostgreSQL restarted mid-burst: every Temporal host reconnects, nothing is lost',
    async () => {
      const { restartedAt, restartMs } = await burst('p', BURST, async () => {
        const restartedAt = Date.now();
        await cluster.restartPostgres();
        return { restartedAt, restartMs: Date.now() - restartedAt };
      });
      const { at, deleteMs } = await convergedThenCleaned('PostgreSQL restarted');
      record('postgres-restarted', {
        pods: BURST,
        postgresRestartMs: restartMs,
        restartToConvergedMs: at - restartedAt,
        deleteToConvergedMs: deleteMs,
      });
    },
    CASE_MS,
  );
});
