import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { freePort } from './ports';
import { writeWorkflowBundle } from './bundle';
import { loadWorkerConfig } from '../cli/worker';
import { checkTemporal } from '../platform/temporal-connection';
import { stewardVersion } from '../platform/version';
import { type RunningWorker } from '.';
import { runWorker } from '../cli/worker';
import { testActivities } from '../test/support/probe-activities';
import { echoOnce, failOnce } from '../test/support/probe-workflows';
import { runProbeWorker } from '../test/support';

const log = pino({ level: 'error' });

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('the worker on the embedded stack', () => {
  const { address } = stackInfo().temporal;
  const taskQueue = `worker-test-${Date.now()}`;
  let running: RunningWorker;
  const url = (path: string) => `http://127.0.0.1:${running.httpPort}${path}`;

  beforeAll(async () => {
    running = await runProbeWorker(taskQueue, { log });
  });

  afterAll(async () => {
    await running?.shutdown();
  });

  it('answers /healthz and /readyz once it polls', async () => {
    const health = await fetch(url('/healthz'));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true, problems: [] });
    expect((await fetch(url('/readyz'))).status).toBe(200);
    expect((await fetch(url('/nope'))).status).toBe(404);
  });

  it('times each activity under its backend and counts failures by type, next to the SDK metrics', async () => {
    const { client } = running;
    expect(await client.workflow.execute(echoOnce, { taskQueue, workflowId: `${taskQueue}/echo`, args: ['hi'] })).toBe(
      'hi',
    );
    await expect(
      client.workflow.execute(failOnce, { taskQueue, workflowId: `${taskQueue}/fail` }),
    ).rejects.toBeInstanceOf(WorkflowFailedError);

    const metrics = await (await fetch(url('/metrics'))).text();
    expect(metrics).toContain('steward_backend_call_duration_seconds_count{backend="test",operation="testEcho"} 1');
    expect(metrics).toMatch(
      /steward_backend_call_duration_seconds_bucket\{le="0.005",backend="test",operation="testEcho"\} [01]/,
    );
    expect(metrics).toContain(
      'steward_backend_call_errors_total{backend="test",operation="testFail",type="TestFailure"} 1',
    );
    // The SDK's own metrics, from Rust core, on the same page.
    expect(metrics).toMatch(
      new RegExp(`^temporal_activity_execution_failed_total\\{.*task_queue="${taskQueue}".*\\} 1$`, 'm'),
    );
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it('fails the health check with the address and namespace when Temporal does not serve the namespace', async () => {
    await expect(
      checkTemporal(running.client.connection, { address, namespace: 'no-such-namespace' }, 2_000),
    ).rejects.toThrow(`Temporal at ${address} (namespace no-such-namespace) is not reachable`);
  });
});

describe('a workflow bundle written ahead', () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bundle-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is what a worker given STEWARD_WORKFLOW_BUNDLE runs, without bundling at start, and its hash the build ID the worker reports', async () => {
    const bundle = join(dir, 'probe-bundle.js');
    await writeWorkflowBundle(bundle, require.resolve('../test/support/probe-workflows'));
    const taskQueue = `worker-bundle-${Date.now()}`;
    const config = loadWorkerConfig(
      { address: stackInfo().temporal.address, taskQueue, httpHost: '127.0.0.1', httpPort: '0' },
      { STEWARD_WORKFLOW_BUNDLE: bundle },
    );
    expect(config.workflowBundle).toBe(bundle);
    const worker = await runWorker(config, { activities: { test: testActivities }, log });
    try {
      // `echoOnce` is only in the bundle: bundled at start, the worker would have Steward's workflows, not it.
      expect(
        await worker.client.workflow.execute(echoOnce, {
          taskQueue,
          workflowId: `${taskQueue}/echo`,
          args: ['from the bundle'],
        }),
      ).toBe('from the bundle');
      // Its build: the version and the hash of the code it runs, on every task it completed and on its pollers.
      const buildId = `steward@${stewardVersion()}+${createHash('sha256').update(readFileSync(bundle)).digest('hex').slice(0, 12)}`;
      const history = await worker.client.workflow.getHandle(`${taskQueue}/echo`).fetchHistory();
      const completed = (history.events ?? []).flatMap((e) => e.workflowTaskCompletedEventAttributes ?? []);
      expect(completed.length).toBeGreaterThan(0);
      for (const task of completed)
        expect([task.workerVersion?.buildId, task.workerDeploymentName]).toEqual([buildId, 'steward']);
      const { pollers } = await worker.client.workflowService.describeTaskQueue({
        namespace: config.temporal.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      expect(pollers?.map((p) => p.deploymentOptions?.buildId)).toContain(buildId);
      const metrics = await (await fetch(`http://127.0.0.1:${worker.httpPort}/metrics`)).text();
      expect(metrics).toContain(`steward_worker_build_info{build_id="${buildId}",version="${stewardVersion()}"} 1`);
    } finally {
      await worker.shutdown();
    }
  });

  it('is written by `steward bundle --out`, and a bundle that is not there is refused by name', async () => {
    const out = join(dir, 'nested', 'workflows.js');
    const child = spawn(process.execPath, [join(__dirname, '..', 'bin', 'steward.cjs'), 'bundle', '--out', out], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect(await new Promise<number | null>((resolve) => child.once('exit', resolve))).toBe(0);
    expect(output).toContain(`wrote ${out}`);
    expect(readFileSync(out, 'utf8')).toContain('podLifecycle');
    expect(() => loadWorkerConfig({}, { STEWARD_WORKFLOW_BUNDLE: join(dir, 'missing.js') })).toThrow(
      /--workflow-bundle \/ STEWARD_WORKFLOW_BUNDLE: cannot read file/,
    );
  });
});

describe('steward worker as a process', () => {
  it('starts with the project workflows and the MidoNet and Kubernetes activities, reports the build ID it is given, becomes ready, and exits 0 on SIGTERM after a graceful stop', async () => {
    const { temporal, kubernetes, midonet } = stackInfo();
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        join(__dirname, '..', 'bin', 'steward.cjs'),
        'worker',
        '--task-queue',
        `worker-process-${Date.now()}`,
        '--http-host',
        '127.0.0.1',
      ],
      {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: temporal.address,
          STEWARD_HTTP_PORT: String(port),
          STEWARD_LOG_LEVEL: 'info',
          KUBECONFIG: kubernetes.kubeconfig,
          MIDONET_API_URL: midonet.url,
          MIDONET_USERNAME: 'admin',
          MIDONET_PASSWORD: 'the-midonet-password',
          TEMPORAL_API_KEY: '',
          STEWARD_BUILD_ID: 'registry.example/steward:0.1.0-rc1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(
        'the worker process to be ready',
        async () => ((await fetch(`http://127.0.0.1:${port}/readyz`)).ok ? true : undefined),
        60_000,
      );
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain(
        'steward_worker_build_info{build_id="registry.example/steward:0.1.0-rc1"',
      );
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      // The object group (an object's sync with its push) is built from the other two.
      expect(output).toContain('"backends":["midonet","kubernetes","object"]');
      expect(output).toContain('"msg":"worker stopped"');
      expect(output).not.toContain('the-midonet-password');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('waits when Temporal is not there: alive, not ready naming Temporal, each attempt logged once with why, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [join(__dirname, '..', 'bin', 'steward.cjs'), 'worker', '--address', '127.0.0.1:1', '--http-host', '127.0.0.1'],
      { env: { ...process.env, STEWARD_HTTP_PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = (path: string) => `http://127.0.0.1:${port}${path}`;
      // Two attempts failed (5 s each): it is still there, serving.
      await waitFor(
        'two failed attempts logged',
        () => Promise.resolve((output.match(/waiting for it/g)?.length ?? 0) >= 2 || undefined),
        30_000,
      );
      const health = await fetch(url('/healthz'));
      expect([health.status, await health.json()]).toEqual([200, { ok: true, problems: [] }]);
      const ready = await fetch(url('/readyz'));
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { problems: string[] }).problems).toContain(
        'Temporal at 127.0.0.1:1 (namespace default) is not reachable: Failed to connect before the deadline',
      );
      const attempts = output
        .split('\n')
        .filter((line) => line.includes('waiting for it'))
        .map((line) => JSON.parse(line) as { attempt: number; reason: string });
      expect(attempts.slice(0, 2).map((a) => a.attempt)).toEqual([1, 2]);
      for (const { reason } of attempts)
        expect(reason).toContain('Temporal at 127.0.0.1:1 (namespace default) is not reachable');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
