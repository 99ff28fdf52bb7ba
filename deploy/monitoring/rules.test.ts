import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dumpYaml, loadYaml } from '@kubernetes/client-node';
import { join } from 'node:path';
import { headingAnchors } from '../../docs/markdown';
import {
  dashboardMetricUses,
  DASHBOARD_FILE,
  exportedNames,
  metricNames,
  missingMetrics,
  plainRulesFile,
  RULE_FILE,
  ruleGroups,
  ruleMetricUses,
} from './rules';

const PROMTOOL_INSTALL = 'sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus';

describe('the alert rules', () => {
  it('pass promtool check rules as a plain Prometheus rules file', () => {
    // Never skipped: CI installs promtool (.ci/run), and a machine without it is told how to get it.
    const found = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (found.error)
      throw new Error(`promtool is not installed (Debian package prometheus, /usr/bin/promtool): ${PROMTOOL_INSTALL}`);
    const dir = mkdtempSync(join(tmpdir(), 'steward-rules-'));
    try {
      const file = join(dir, 'steward-rules.yml');
      writeFileSync(file, plainRulesFile());
      const check = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect({ status: check.status, output: `${check.stdout}${check.stderr}` }).toEqual({
        status: 0,
        output: expect.stringContaining('SUCCESS: 7 rules found') as unknown,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are rejected by promtool when an expression is not PromQL, so the check above can fail', () => {
    if (spawnSync('promtool', ['--version']).error) throw new Error(`promtool is not installed: ${PROMTOOL_INSTALL}`);
    const dir = mkdtempSync(join(tmpdir(), 'steward-rules-'));
    try {
      const file = join(dir, 'broken.yml');
      const broken = readFileSync(RULE_FILE, 'utf8').replace(
        'max by (namespace, cluster, kind) (steward_objects{state="stuck"}) > 0',
        'max by (namespace, cluster, kind) (steward_objects{state="stuck"} > 0',
      );
      writeFileSync(file, plainRulesFile(broken));
      expect(() => execFileSync('promtool', ['check', 'rules', file], { stdio: 'pipe' })).toThrow(/FAILED|parse/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fire when they should and not before (promtool test rules on sampled series)', () => {
    if (spawnSync('promtool', ['--version']).error) throw new Error(`promtool is not installed: ${PROMTOOL_INSTALL}`);
    const alert = (evalTime: string, alertname: string, exp_alerts: { exp_labels: Record<string, string> }[]) => ({
      eval_time: evalTime,
      alertname,
      exp_alerts,
    });
    const caaRuns = (instance: string) =>
      `steward_sweep_runs_total{backend="cloud-api-adaptor",outcome="dryRun",instance="${instance}"}`;
    const tests = {
      rule_files: ['steward-rules.yml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // Two workers report the same stuck Pod: one alert, not two.
            { series: 'steward_objects{kind="Pod",state="stuck",instance="w1"}', values: '1x30' },
            { series: 'steward_objects{kind="Pod",state="stuck",instance="w2"}', values: '1x30' },
            { series: 'steward_objects{kind="Node",state="stuck",instance="w1"}', values: '1x5 0x25' },
            // No starter leads: one follows, the other is gone.
            { series: 'steward_starter_leader{instance="s1"}', values: '0x30' },
            // The guard holds for 10 minutes, seen by two starters, then an operator confirms.
            { series: 'steward_mass_deletion_held{instance="s1"}', values: '0x4 1x10 0x15' },
            { series: 'steward_mass_deletion_held{instance="s2"}', values: '0x4 1x10 0x15' },
            // The sweep's first failure on a worker: its series starts at 1.
            { series: 'steward_sweep_runs_total{backend="cloud",outcome="failed",instance="w1"}', values: '_x10 1x20' },
            // Half the MidoNet calls fail.
            { series: 'steward_backend_call_errors_total{backend="midonet",instance="w1"}', values: '0+30x30' },
            {
              series: 'steward_backend_call_duration_seconds_count{backend="midonet",instance="w1"}',
              values: '0+60x30',
            },
          ],
          alert_rule_test: [
            alert('10m', 'StewardObjectsStuck', []),
            alert('20m', 'StewardObjectsStuck', [{ exp_labels: { severity: 'warning', kind: 'Pod' } }]),
            alert('3m', 'StewardMassDeletionHeld', []),
            alert('6m', 'StewardMassDeletionHeld', [{ exp_labels: { severity: 'critical' } }]),
            alert('20m', 'StewardMassDeletionHeld', []),
            alert('1m', 'StewardStarterNoLeader', []),
            alert('5m', 'StewardStarterNoLeader', [{ exp_labels: { severity: 'critical' } }]),
            alert('5m', 'StewardSweepFailing', []),
            alert('12m', 'StewardSweepFailing', [{ exp_labels: { severity: 'warning' } }]),
            alert('20m', 'StewardBackendErrorRateHigh', [{ exp_labels: { severity: 'warning', backend: 'midonet' } }]),
          ],
        },
        {
          interval: '1m',
          // cloud-api-adaptor's leaked VM, found by every sweep of the worker that runs them from minute 6 on; the
          // other worker's last sweep (before the window) found one too, then it stopped sweeping.
          input_series: [
            { series: 'steward_cloud_unrecorded_vms{instance="w1"}', values: '0x5 1x60' },
            { series: caaRuns('w1'), values: '1+1x65' },
          ],
          alert_rule_test: [
            alert('30m', 'StewardCloudApiAdaptorVmsLeaked', []),
            alert('40m', 'StewardCloudApiAdaptorVmsLeaked', [{ exp_labels: { severity: 'warning' } }]),
          ],
        },
        {
          interval: '1m',
          // A worker's gauge from a sweep it ran an hour ago is stale: the worker sweeping now finds none.
          input_series: [
            { series: 'steward_cloud_unrecorded_vms{instance="w1"}', values: '1x90' },
            { series: caaRuns('w1'), values: '1x90' },
            { series: 'steward_cloud_unrecorded_vms{instance="w2"}', values: '0x90' },
            { series: caaRuns('w2'), values: '1+1x90' },
          ],
          alert_rule_test: [alert('80m', 'StewardCloudApiAdaptorVmsLeaked', [])],
        },
        {
          interval: '1m',
          // Two installations side by side, in namespaces a and b: each alert names the one that fails, and the
          // busy healthy one neither hides the other's failures nor shares its alert.
          input_series: [
            // a's MidoNet calls half fail; b makes ten times as many, all answered (both: 4.5 % of all calls).
            {
              series: 'steward_backend_call_errors_total{namespace="a",backend="midonet",instance="a1"}',
              values: '0+30x30',
            },
            {
              series: 'steward_backend_call_duration_seconds_count{namespace="a",backend="midonet",instance="a1"}',
              values: '0+60x30',
            },
            {
              series: 'steward_backend_call_errors_total{namespace="b",backend="midonet",instance="b1"}',
              values: '0x30',
            },
            {
              series: 'steward_backend_call_duration_seconds_count{namespace="b",backend="midonet",instance="b1"}',
              values: '0+600x30',
            },
            // a's starter leads; b's does not.
            { series: 'steward_starter_leader{namespace="a",instance="a2"}', values: '1x30' },
            { series: 'steward_starter_leader{namespace="b",instance="b2"}', values: '0x30' },
            // A Pod stuck in b; a's are fine.
            { series: 'steward_objects{namespace="a",kind="Pod",state="stuck",instance="a1"}', values: '0x30' },
            { series: 'steward_objects{namespace="b",kind="Pod",state="stuck",instance="b1"}', values: '1x30' },
            // a's guard holds.
            { series: 'steward_mass_deletion_held{namespace="a",instance="a2"}', values: '1x30' },
            { series: 'steward_mass_deletion_held{namespace="b",instance="b2"}', values: '0x30' },
          ],
          alert_rule_test: [
            alert('20m', 'StewardBackendErrorRateHigh', [
              { exp_labels: { severity: 'warning', namespace: 'a', backend: 'midonet' } },
            ]),
            alert('5m', 'StewardStarterNoLeader', [{ exp_labels: { severity: 'critical', namespace: 'b' } }]),
            alert('20m', 'StewardObjectsStuck', [{ exp_labels: { severity: 'warning', namespace: 'b', kind: 'Pod' } }]),
            alert('5m', 'StewardMassDeletionHeld', [{ exp_labels: { severity: 'critical', namespace: 'a' } }]),
          ],
        },
        {
          interval: '1m',
          // No starter scraped at all is no leader either.
          input_series: [{ series: 'up{job="other"}', values: '1x10' }],
          alert_rule_test: [alert('5m', 'StewardStarterNoLeader', [{ exp_labels: { severity: 'critical' } }])],
        },
      ],
    };
    const dir = mkdtempSync(join(tmpdir(), 'steward-rules-'));
    try {
      // Without annotations: promtool would compare each rendered text; when they fire is what is tested here.
      const groups = ruleGroups().map((g) => ({ ...g, rules: g.rules.map((r) => ({ ...r, annotations: undefined })) }));
      writeFileSync(join(dir, 'steward-rules.yml'), dumpYaml(JSON.parse(JSON.stringify({ groups })) as unknown));
      writeFileSync(join(dir, 'tests.yml'), dumpYaml(tests));
      const run = spawnSync('promtool', ['test', 'rules', 'tests.yml'], { cwd: dir, encoding: 'utf8' });
      expect({ status: run.status, output: `${run.stdout}${run.stderr}` }).toEqual({
        status: 0,
        output: expect.stringContaining('SUCCESS') as unknown,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('alert on a mass deletion held, stuck objects, backend errors, the sweep, cloud-api-adaptor leaks, a starter without a leader and slow activity pickup', () => {
    const alerts = ruleGroups().flatMap((g) => g.rules.map((r) => r.alert));
    expect(alerts).toEqual([
      'StewardMassDeletionHeld',
      'StewardObjectsStuck',
      'StewardBackendErrorRateHigh',
      'StewardSweepFailing',
      'StewardCloudApiAdaptorVmsLeaked',
      'StewardStarterNoLeader',
      'StewardActivityScheduleToStartHigh',
    ]);
  });

  it('each tell operators what happened and where to read what to do: summary, description and runbook_url', () => {
    for (const rule of ruleGroups().flatMap((g) => g.rules)) {
      const annotations = rule.annotations ?? {};
      const missing = ['summary', 'description', 'runbook_url'].filter((key) => !annotations[key]?.trim());
      expect({ alert: rule.alert, missing }).toEqual({ alert: rule.alert, missing: [] });
    }
  });

  it("each link their own section of docs/alerts.md, at the chart's home, and that page has the heading", () => {
    const { home } = loadYaml<{ home: string }>(
      readFileSync(join(__dirname, '..', 'helm', 'steward', 'Chart.yaml'), 'utf8'),
    );
    const page = `${home}/blob/main/docs/alerts.md`;
    const anchors = headingAnchors(readFileSync(join(__dirname, '..', '..', 'docs', 'alerts.md'), 'utf8'));
    const links = ruleGroups()
      .flatMap((g) => g.rules)
      .map((rule) => {
        const url = rule.annotations?.runbook_url ?? '';
        const anchor = url.slice(url.indexOf('#') + 1);
        return { alert: rule.alert, url, heading: anchors.has(anchor) };
      });
    expect(links).toEqual(links.map(({ alert }) => ({ alert, url: `${page}#${alert?.toLowerCase()}`, heading: true })));
  });

  it('read the PrometheusRule and nothing else: a manifest of another kind is refused', () => {
    expect(() => ruleGroups('kind: ConfigMap\nspec: {}\n')).toThrow(/not a PrometheusRule/);
  });
});

describe('metric names in PromQL', () => {
  it('are the selectors, with or without label matchers and ranges', () => {
    expect(
      metricNames('sum by (backend) (rate(a_total[5m])) / sum by (backend) (rate(b_count{x="y"}[5m])) > 0.1'),
    ).toEqual(['a_total', 'b_count']);
    expect(metricNames('steward_starter_leader')).toEqual(['steward_starter_leader']);
    expect(metricNames('(sum(up) or vector(0)) < 1')).toEqual(['up']);
  });

  it('leave out functions, aggregations, keywords, label lists, strings, numbers and Grafana variables', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum without (pod) (rate(h_bucket{le!="+Inf", job=~"a|b"}[$__rate_interval] offset 1h)))' +
          ' and on (instance) group_left (kind) g unless ignoring (x) k * 1e3 > bool 2',
      ),
    ).toEqual(['h_bucket', 'g', 'k']);
    expect(metricNames('sum(x) by (le) + count_over_time(y[1h:5m])')).toEqual(['x', 'y']);
  });
});

describe('the metrics a page exports', () => {
  const page = [
    '# HELP steward_backend_call_errors_total Failed backend calls',
    '# TYPE steward_backend_call_errors_total counter',
    '# TYPE steward_backend_call_duration_seconds histogram',
    'steward_backend_call_duration_seconds_bucket{le="0.1",backend="midonet"} 1',
    '# TYPE temporal_num_pollers gauge',
    'temporal_num_pollers{task_queue="q"} 2',
    'process_resident_memory_bytes 1234',
  ].join('\n');

  it('are the declared families, with the sample names of a histogram, and every sample name', () => {
    const names = exportedNames(page);
    for (const name of [
      'steward_backend_call_errors_total',
      'steward_backend_call_duration_seconds_count',
      'steward_backend_call_duration_seconds_sum',
      'temporal_num_pollers',
      'process_resident_memory_bytes',
    ])
      expect({ name, exported: names.has(name) }).toEqual({ name, exported: true });
    expect(names.has('steward_backend_call_errors_total_count')).toBe(false);
    expect(names.has('Failed')).toBe(false);
  });

  it('make a missing name fail, naming the file, the rule and the metric', () => {
    const manifest = [
      'kind: PrometheusRule',
      'spec:',
      '  groups:',
      '    - name: g',
      '      rules:',
      '        - alert: Gone',
      '          expr: rate(steward_gone_total[5m]) > 0 and temporal_num_pollers > 0',
    ].join('\n');
    expect(missingMetrics(ruleMetricUses(manifest), exportedNames(page))).toEqual([
      'deploy/helm/steward/files/prometheus-rule.yaml: group g, alert Gone: steward_gone_total is not exported',
    ]);
  });
});

describe('the Grafana dashboard', () => {
  it('queries a metric in every panel, nested rows included', () => {
    interface Panel {
      type: string;
      title: string;
      panels?: Panel[];
    }
    const panels = (JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: Panel[] }).panels.flatMap((p) => [
      p,
      ...(p.panels ?? []),
    ]);
    const queried = new Set(dashboardMetricUses().map((use) => use.where.replace(/, query \w+$/, '')));
    const silent = panels.filter((p) => p.type !== 'row' && !queried.has(`panel "${p.title}"`)).map((p) => p.title);
    expect(silent).toEqual([]);
    expect(panels.filter((p) => p.type !== 'row').length).toBeGreaterThanOrEqual(12);
  });

  it('shows one installation at a time: every query selects the namespace and cluster variables', () => {
    interface Panel {
      targets?: { expr?: string }[];
      panels?: Panel[];
    }
    const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
      templating: { list: { name: string }[] };
      panels: Panel[];
    };
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'namespace', 'cluster']);
    const exprs = dashboard.panels
      .flatMap((p) => [p, ...(p.panels ?? [])])
      .flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));
    expect(exprs.length).toBeGreaterThan(15);
    // Every selector of every metric a query names carries both matchers.
    const unscoped = exprs.flatMap((expr) =>
      metricNames(expr).filter((metric) => {
        const named = expr.split(new RegExp(`(?<![\\w:])${metric}(?![\\w:])`)).length - 1;
        return expr.split(`${metric}{namespace=~"$namespace", cluster=~"$cluster"`).length - 1 !== named;
      }),
    );
    expect(unscoped).toEqual([]);
  });

  it('shows lifecycles, backend calls, the starter, schedule-to-start latencies and worker memory', () => {
    const metrics = new Set(dashboardMetricUses().map((use) => use.metric));
    expect([...metrics]).toEqual(
      expect.arrayContaining([
        'steward_objects',
        'steward_backend_call_duration_seconds_count',
        'steward_backend_call_errors_total',
        'steward_backend_call_duration_seconds_bucket',
        'steward_starter_leader',
        'steward_starter_queue_depth',
        'steward_starter_sends_total',
        'temporal_workflow_task_schedule_to_start_latency_bucket',
        'temporal_activity_schedule_to_start_latency_bucket',
        'process_resident_memory_bytes',
      ]),
    );
  });
});
