import { Registry } from 'prom-client';
import { createStarterMetrics } from './metrics';

/** The page's samples of one metric, as `labels value` lines. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values.map(
    (v) => `${(v as { metricName?: string }).metricName ?? name}${JSON.stringify(v.labels)} ${v.value}`,
  );
}

describe("the starter's metrics", () => {
  let leading = false;
  let depth = 0;
  let clock = 1_700_000_000_000;
  const setup = () => {
    const registry = new Registry();
    const metrics = createStarterMetrics(registry, {
      kinds: ['Node', 'Pod'],
      isLeader: () => leading,
      queueDepth: () => depth,
      now: () => clock,
    });
    return { registry, metrics };
  };

  it('reads leadership and queue depth when scraped, never a stale value', async () => {
    const { registry } = setup();
    leading = false;
    depth = 0;
    expect(await samples(registry, 'steward_starter_leader')).toEqual(['steward_starter_leader{} 0']);
    leading = true;
    depth = 42;
    expect(await samples(registry, 'steward_starter_leader')).toEqual(['steward_starter_leader{} 1']);
    expect(await samples(registry, 'steward_starter_queue_depth')).toEqual(['steward_starter_queue_depth{} 42']);
  });

  it("counts sends by the workflow's kind and result, zero from the start, and times each", async () => {
    const { registry, metrics } = setup();
    const counts = (node: number[], pod: number[]) =>
      ['Node', 'Pod'].flatMap((kind, k) =>
        ['sent', 'transient_error', 'permanent_error'].map(
          (result, r) => `steward_starter_sends_total{"kind":"${kind}","result":"${result}"} ${[node, pod][k]![r]}`,
        ),
      );
    expect(await samples(registry, 'steward_starter_sends_total')).toEqual(counts([0, 0, 0], [0, 0, 0]));
    metrics.sendDone('Pod', 'sent', 0.02);
    metrics.sendDone('Pod', 'sent', 0.3);
    metrics.sendDone('Node', 'transient_error', 10);
    expect(await samples(registry, 'steward_starter_sends_total')).toEqual(counts([0, 1, 0], [2, 0, 0]));
    const latency = await samples(registry, 'steward_starter_send_duration_seconds');
    expect(latency).toContain('steward_starter_send_duration_seconds_count{"kind":"Pod","result":"sent"} 2');
    expect(latency).toContain('steward_starter_send_duration_seconds_sum{"kind":"Pod","result":"sent"} 0.32');
    expect(latency).toContain(
      'steward_starter_send_duration_seconds_bucket{"le":0.025,"kind":"Pod","result":"sent"} 1',
    );
    expect(latency).toContain(
      'steward_starter_send_duration_seconds_bucket{"le":10,"kind":"Node","result":"transient_error"} 1',
    );
  });

  it('counts informer restarts by kind, every watched kind at zero from the start', async () => {
    const { registry, metrics } = setup();
    metrics.informerRestarted('Pod');
    metrics.informerRestarted('Pod');
    expect(await samples(registry, 'steward_starter_informer_restarts_total')).toEqual([
      'steward_starter_informer_restarts_total{"kind":"Node"} 0',
      'steward_starter_informer_restarts_total{"kind":"Pod"} 2',
    ]);
  });

  it('dates the last complete re-list by its oldest list: 0 until every kind was listed', async () => {
    const { registry, metrics } = setup();
    const relist = () => samples(registry, 'steward_starter_last_relist_timestamp_seconds');
    expect(await relist()).toEqual(['steward_starter_last_relist_timestamp_seconds{} 0']);
    metrics.listed('Node');
    expect(await relist()).toEqual(['steward_starter_last_relist_timestamp_seconds{} 0']);
    clock += 2_000;
    metrics.listed('Pod');
    expect(await relist()).toEqual(['steward_starter_last_relist_timestamp_seconds{} 1700000000']);
    // Nodes listed again later: the complete re-list is as old as the Pods' list now.
    clock += 5_000;
    metrics.listed('Node');
    expect(await relist()).toEqual(['steward_starter_last_relist_timestamp_seconds{} 1700000002']);
  });
});
