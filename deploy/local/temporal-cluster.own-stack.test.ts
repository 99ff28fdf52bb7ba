import { Client, Connection, WorkflowExecutionAlreadyStartedError, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { K8sKind, searchAttributeKeys } from '../../model/search-attributes';
import { capture, sleep } from './process';
import { stderrReporter } from './progress';
import { ensureTemporalCli } from './temporal';
import { HISTORY_SHARDS, startTemporalCluster, type TemporalCluster } from './temporal-cluster';
import { testWorker } from './testing/temporal';
import { greetOnce } from './testing/workflows';

/**
 * The cluster profile on its own state dir (PostgreSQL, three Temporal server processes, the UI server): it answers,
 * spreads history over two hosts, and keeps answering when a history host is killed and when PostgreSQL restarts.
 * The first run builds the binaries (10-20 min on 2 cores); later runs start in well under a minute.
 */
const BUILD_AND_START_MS = 45 * 60_000;
const RECOVERY_MS = 120_000;

let cluster: TemporalCluster;
let stateDir: string;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'steward-cluster-'));
  const started = Date.now();
  cluster = await startTemporalCluster({ stateDir, report: stderrReporter });
  stderrReporter(`cluster profile up in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  connection = await Connection.connect({ address: cluster.address });
  client = new Client({ connection, namespace: cluster.namespace });
}, BUILD_AND_START_MS);

afterAll(async () => {
  await connection?.close();
  await cluster?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** Starts a workflow nobody runs (no worker needed: the start and the describe go through frontend and history). */
async function startIdle(id: string): Promise<WorkflowHandle> {
  return client.workflow.start('idle', {
    taskQueue: 'cluster-profile-test',
    workflowId: `cluster-test/${id}`,
    typedSearchAttributes: [{ key: K8sKind, value: 'Pod' }],
  });
}

/** Retries `check` until it passes, and returns how long that took: the time the cluster needed to recover. */
async function recovers(what: string, check: () => Promise<void>): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      await check();
      const ms = Date.now() - started;
      stderrReporter(`${what}: answering again after ${(ms / 1000).toFixed(1)}s`);
      return ms;
    } catch (error) {
      if (Date.now() - started > RECOVERY_MS) throw error;
      await sleep(1_000);
    }
  }
}

/** Several workflows with distinct ids land on several of the history shards, and so on both history hosts. */
const startAndDescribe = (round: string) => async () => {
  for (let i = 0; i < HISTORY_SHARDS; i++) {
    // A start whose reply was lost during a failover may have gone through: then the workflow is there already.
    const handle = await startIdle(`${round}-${i}`).catch((error: unknown) => {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      return client.workflow.getHandle(`cluster-test/${round}-${i}`);
    });
    expect((await handle.describe()).status.name).toBe('RUNNING');
  }
};

describe('Temporal cluster profile (PostgreSQL, three server hosts, UI server)', () => {
  it('answers on its frontend, with the configured history shards, through the SDK and the temporal CLI', async () => {
    const info = await connection.workflowService.getSystemInfo({});
    expect(info.serverVersion).toMatch(/^1\.32\./);
    const cli = await ensureTemporalCli(stderrReporter);
    const described = JSON.parse(
      await capture(cli, ['operator', 'cluster', 'describe', '--address', cluster.address, '-o', 'json']),
    ) as { historyShardCount?: number };
    expect(described.historyShardCount).toBe(HISTORY_SHARDS);
  });

  it('has the five search attributes of Steward registered as Keyword in its namespace', async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace: cluster.namespace,
    });
    for (const key of searchAttributeKeys) {
      expect(customAttributes?.[key.name]).toBe(temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
  });

  it('has one host with frontend, matching and worker, and two history hosts, all in the membership', async () => {
    const hosts = cluster.hosts();
    expect(hosts.map((h) => [h.name, h.services.join(',')])).toEqual([
      ['temporal-a', 'frontend,matching,worker'],
      ['temporal-b', 'history'],
      ['temporal-c', 'history'],
    ]);
    expect(new Set(hosts.map((h) => h.pid)).size).toBe(3);
    // What the hosts themselves wrote into PostgreSQL: role 2 is history.
    const rows = await cluster.postgres.sql(
      "SELECT rpc_port FROM cluster_membership WHERE role = 2 AND last_heartbeat > (now() AT TIME ZONE 'UTC') - interval '1 minute'",
      'temporal',
    );
    const live = new Set(rows.trim().split('\n').map(Number));
    for (const host of hosts.slice(1)) expect(live).toContain(host.ports['history.membership']);
  });

  it('starts and describes a workflow with a search attribute, and finds it by that attribute', async () => {
    const handle = await startIdle(`search-${Date.now()}`);
    const description = await handle.describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.typedSearchAttributes.get(K8sKind)).toBe('Pod');
    await recovers('visibility lists the workflow by K8sKind', async () => {
      const found: string[] = [];
      for await (const execution of client.workflow.list({
        query: `K8sKind = "Pod" AND WorkflowId = "${handle.workflowId}"`,
      }))
        found.push(execution.workflowId);
      expect(found).toEqual([handle.workflowId]);
    });
  });

  it('keeps answering when a history host is killed with SIGKILL, and takes it back after its restart', async () => {
    await startAndDescribe('before-kill')();
    const victim = 'temporal-b';
    await cluster.killHost(victim);
    expect(cluster.hosts().find((h) => h.name === victim)?.running).toBe(false);
    await recovers(`${victim} killed`, startAndDescribe('after-kill'));

    await cluster.restartHost(victim);
    expect(cluster.hosts().find((h) => h.name === victim)?.running).toBe(true);
    await recovers(`${victim} restarted`, startAndDescribe('after-restart'));
    // What was started before the kill is still there.
    await startAndDescribe('before-kill')();
  });

  it('survives a restart of PostgreSQL', async () => {
    const pid = cluster.postgres.process.pid;
    await cluster.restartPostgres();
    expect(cluster.postgres.process.pid).not.toBe(pid);
    await recovers('PostgreSQL restarted', startAndDescribe('after-postgres-restart'));
    await startAndDescribe('before-kill')();
  });

  it('runs a workflow with an activity to completion after both failovers', async () => {
    const taskQueue = `cluster-profile-${Date.now()}`;
    const { client: workerClient, worker, close } = await testWorker(cluster.address, taskQueue);
    try {
      const result = await worker.runUntil(
        workerClient.workflow.execute(greetOnce, { taskQueue, workflowId: `greet/${taskQueue}`, args: ['cluster'] }),
      );
      expect(result).toBe('hello, cluster');
    } finally {
      await close();
    }
  });

  it('serves the Temporal UI, whose API reaches the frontend', async () => {
    expect((await fetch(cluster.uiUrl)).status).toBe(200);
    const api = await fetch(`${cluster.uiUrl}/api/v1/namespaces/${cluster.namespace}`);
    expect(api.status).toBe(200);
    expect(((await api.json()) as { namespaceInfo?: { name?: string } }).namespaceInfo?.name).toBe(cluster.namespace);
  });
});
