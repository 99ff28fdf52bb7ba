// The alerts and the dashboard query only what Steward exports: every metric name in the PrometheusRule and in the
// Grafana dashboard is read from the live /metrics of a real worker and a real starter (as `steward worker` and
// `steward starter` run them). A stack of its own: a starter sends every object of its cluster to its task queue, which
// on the shared stack would reach other files' workflows. The SDK's metrics appear only once recorded, so the worker
// first runs what the alerts watch: the starter's global setup workflow, a sweep that fails on a backend, and a sweep
// that lists cloud-api-adaptor's VMs on libvirt.
import { WorkflowFailedError } from '@temporalio/client';
import pino from 'pino';
import type { Stack } from '../local';
import { startPrivateStack } from '../local/jest/stack-info';
import { runStackWorker, stackEnv, waitFor } from '../../test/support';
import { libvirtSettings } from '../../test/support/cloud-backends';
import { createCloudActivities } from '../../activities/cloud/activities';
import { createLibvirtProvider } from '../../activities/cloud/libvirt';
import type { SweepInput } from '../../workflows/sweep';
import type { SweepReport } from '../../model/sweep-report';
import { loadWorkerConfig, runWorker } from '../../cli/worker';
import type { RunningWorker } from '../../worker';
import { loadStarterConfig } from '../../starter/config';
import { runStarter, type RunningStarter } from '../../starter/run';
import { SWEEP_SCHEDULE_ID } from '../../model/naming';
import { dashboardMetricUses, exportedNames, missingMetrics, ruleMetricUses } from './rules';
import { lifecycleStates } from '../../workflows/machines';

const taskQueue = `steward-monitoring-${Date.now().toString(36)}`;
const log = pino({ level: 'error' });
let stack: Stack;
let worker: RunningWorker | undefined;
let starter: RunningStarter | undefined;

beforeAll(async () => {
  stack = await startPrivateStack();
  const env: NodeJS.ProcessEnv = {
    ...stackEnv(stack.info),
    STEWARD_TASK_QUEUE: taskQueue,
    // No cloud provider on the worker: the sweep's cloud backend fails, so the failure metrics are recorded.
    STEWARD_SWEEP_BACKENDS: 'cloud,midonet',
    STEWARD_SWEEP_GRACE: '0',
    STEWARD_HTTP_HOST: '127.0.0.1',
    STEWARD_HTTP_PORT: '0',
    STEWARD_STARTER_HTTP_HOST: '127.0.0.1',
    STEWARD_STARTER_HTTP_PORT: '0',
    STEWARD_LOG_LEVEL: 'error',
  };
  worker = await runWorker(loadWorkerConfig({}, env), { log });
  starter = await runStarter(loadStarterConfig({}, env), log, { lifecycleStates });
});

afterAll(async () => {
  await starter?.stop();
  await worker?.shutdown();
  await stack?.stop();
});

const page = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

it('every metric the alerts and the dashboard query is on the live /metrics of the worker or the starter', async () => {
  const { client } = worker!;
  const schedule = client.schedule.getHandle(SWEEP_SCHEDULE_ID);
  await waitFor('the starter to lead and create the sweep Schedule', () => schedule.describe(), 60_000);
  await schedule.trigger();
  const run = await waitFor(
    'the triggered sweep',
    async () => (await schedule.describe()).info.recentActions.at(-1)?.action.workflow,
    60_000,
  );
  await expect(client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).result()).rejects.toBeInstanceOf(
    WorkflowFailedError,
  );
  await sweepCaaLeaks();
  const uses = [...ruleMetricUses(), ...dashboardMetricUses()];
  // Rust core's page is read as it is: a few reads give a metric recorded just now the time to show.
  let missing: string[] = [];
  await waitFor(
    'every metric named',
    async () => {
      const pages = `${await page(worker!.httpPort)}\n${await page(starter!.httpPort)}`;
      missing = missingMetrics(uses, exportedNames(pages));
      return missing.length === 0;
    },
    10_000,
  ).catch(() => undefined);
  expect(missing).toEqual([]);
});

/**
 * A sweep of cloud-api-adaptor's VMs that succeeds, on a second worker with a libvirt provider: only such a sweep sets
 * `steward_cloud_unrecorded_vms`. In this process, so its SDK metrics are on the first worker's page too (the
 * Runtime, with core's exporter, is one per process).
 */
async function sweepCaaLeaks() {
  const queue = `${taskQueue}-caa`;
  const provider = createLibvirtProvider(libvirtSettings(stack.info.libvirt.uri, `${taskQueue}-caa`));
  const caaWorker = await runStackWorker(stack.info, queue, createCloudActivities({ provider }));
  try {
    const report = await caaWorker.client.workflow.execute<(input: SweepInput) => Promise<SweepReport>>('sweep', {
      taskQueue: queue,
      workflowId: `${queue}-sweep`,
      args: [{ dryRun: true, graceMs: 0, backends: ['cloud'], caaLeaks: 'report' }],
    });
    expect(report.backends.map((b) => [b.backend, b.outcome])).toEqual([
      ['cloud', 'dryRun'],
      ['cloud-api-adaptor', 'dryRun'],
    ]);
  } finally {
    await caaWorker.shutdown();
  }
}
