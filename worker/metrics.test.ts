import type { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { activityMetricsInterceptor, createMetrics, snakeCaseLabels } from './metrics';

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
