import type { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import pino from 'pino';
import { activityMetricsInterceptor, countObjectsByState, createMetrics, snakeCaseLabels } from './metrics';
import { lifecycleStates } from '../workflows/machines';

const log = pino({ level: 'silent' });

interface Sample {
  /** Histograms name each sample (`…_count`, `…_bucket`). */
  metricName?: string;
  labels: Record<string, string | number | undefined>;
  value: number;
}

async function valuesOf(metrics: ReturnType<typeof createMetrics>, name: string): Promise<Sample[]> {
  const metric = metrics.registry.getSingleMetric(name);
  return metric ? (await metric.get()).values : [];
}

describe('the activity metrics interceptor', () => {
  const run = (metrics: ReturnType<typeof createMetrics>, activityType: string, next: () => Promise<unknown>) => {
    const inbound = activityMetricsInterceptor(metrics, (name) => (name.startsWith('midonet') ? 'midonet' : 'unknown'))(
      { info: { activityType } } as Context,
    ).inbound;
    return inbound!.execute!({ args: [], headers: {} }, next);
  };

  it('times a call under its backend and activity name', async () => {
    const metrics = createMetrics();
    await run(metrics, 'midonetEnsure', () => Promise.resolve('ok'));
    const counts = (await valuesOf(metrics, 'steward_backend_call_duration_seconds')).filter(
      (v) => v.metricName === 'steward_backend_call_duration_seconds_count',
    );
    expect(counts).toEqual([
      expect.objectContaining({ labels: { backend: 'midonet', operation: 'midonetEnsure' }, value: 1 }),
    ]);
  });

  it('counts a failure by its ApplicationFailure type, times it too, and passes the error on', async () => {
    const metrics = createMetrics();
    const failure = ApplicationFailure.retryable('down', 'MidonetUnavailable');
    await expect(run(metrics, 'midonetRemove', () => Promise.reject(failure))).rejects.toBe(failure);
    expect(await valuesOf(metrics, 'steward_backend_call_errors_total')).toEqual([
      expect.objectContaining({
        labels: { backend: 'midonet', operation: 'midonetRemove', type: 'MidonetUnavailable' },
        value: 1,
      }),
    ]);
    const counts = (await valuesOf(metrics, 'steward_backend_call_duration_seconds')).filter((v) =>
      v.metricName?.endsWith('_count'),
    );
    expect(counts[0]?.value).toBe(1);
  });
});

describe('objects per lifecycle state', () => {
  it('counts the states of the lifecycle machines, taken from the machines themselves', () => {
    expect(lifecycleStates('Translation')).toEqual(
      expect.arrayContaining(['observing', 'pushing', 'synced', 'stuck', 'paused', 'done']),
    );
    expect(lifecycleStates('Pod')).toEqual(expect.arrayContaining(['translating', 'ready', 'finalizing', 'stuck']));
    expect(lifecycleStates('PeerPod')).toEqual(
      expect.arrayContaining(['own.creatingVm', 'own.tracking', 'tracked.tracking', 'deletingVm', 'stuck']),
    );
  });

  /** A partial fake: only `workflow.count`, answering from a table of query → count. */
  const fakeClient = (counts: Record<string, number>, calls: string[] = []) =>
    ({
      workflow: {
        count: (query: string) => {
          calls.push(query);
          return Promise.resolve({ count: counts[query] ?? 0, groups: [] });
        },
      },
    }) as unknown as Client;

  it('sets a value per kind and state, sums unlisted states as other, and skips the states of kinds without objects', async () => {
    const metrics = createMetrics();
    const calls: string[] = [];
    const running = 'ExecutionStatus="Running" AND ';
    const client = fakeClient(
      {
        [`${running}K8sKind="Pod"`]: 5,
        [`${running}K8sKind="Pod" AND LifecycleState="synced"`]: 3,
        [`${running}K8sKind="Pod" AND LifecycleState="stuck"`]: 1,
      },
      calls,
    );
    const counter = countObjectsByState({ client, metrics, log, states: () => ['synced', 'stuck'] });
    await counter.refresh();
    counter.stop();
    expect((await valuesOf(metrics, 'steward_objects')).map(({ labels, value }) => ({ ...labels, value }))).toEqual([
      { kind: 'Pod', state: 'synced', value: 3 },
      { kind: 'Pod', state: 'stuck', value: 1 },
      { kind: 'Pod', state: 'other', value: 1 },
    ]);
    // One query per kind (6) and one per state for the only kind with objects (2).
    expect(calls).toHaveLength(8);
  });

  it('keeps the last values and warns once while the server cannot count', async () => {
    const metrics = createMetrics();
    metrics.objects.set({ kind: 'Pod', state: 'synced' }, 7);
    const warn = jest.fn();
    const client = {
      workflow: { count: () => Promise.reject(new Error('operation is not supported')) },
    } as unknown as Client;
    const counter = countObjectsByState({
      client,
      metrics,
      log: { warn, info: jest.fn() } as unknown as pino.Logger,
      states: lifecycleStates,
    });
    await counter.refresh();
    await counter.refresh();
    counter.stop();
    expect(warn).toHaveBeenCalledTimes(1);
    expect((await valuesOf(metrics, 'steward_objects'))[0]?.value).toBe(7);
  });
});

describe("the SDK's page, appended to /metrics", () => {
  it("names every label in snake_case, as the sweep's metrics need (the SDK tags them taskQueue and workflowType)", () => {
    const page = [
      '# HELP steward_sweep_runs_total Sweeps by outcome',
      '# TYPE steward_sweep_runs_total counter',
      'steward_sweep_runs_total{backend="cloud",dry_run="false",namespace="default",outcome="swept",service_name="temporal-core-sdk",taskQueue="steward",workflowType="sweep"} 1',
      'temporal_request_total{namespace="default",task_queue="steward"} 3',
      'process_cpu_seconds_total 1.5',
    ].join('\n');
    expect(snakeCaseLabels(page).split('\n')).toEqual([
      '# HELP steward_sweep_runs_total Sweeps by outcome',
      '# TYPE steward_sweep_runs_total counter',
      'steward_sweep_runs_total{backend="cloud",dry_run="false",namespace="default",outcome="swept",service_name="temporal-core-sdk",task_queue="steward",workflow_type="sweep"} 1',
      'temporal_request_total{namespace="default",task_queue="steward"} 3',
      'process_cpu_seconds_total 1.5',
    ]);
  });

  it('leaves label values alone, even one that looks like a label', () => {
    const line = 'steward_sweep_resources{reason="a taskQueue=\\"x\\", workflowType=y",taskQueue="q"} 2';
    expect(snakeCaseLabels(line)).toBe(
      'steward_sweep_resources{reason="a taskQueue=\\"x\\", workflowType=y",task_queue="q"} 2',
    );
  });
});
