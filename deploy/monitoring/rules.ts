// Steward's alerts and dashboard as data: the PrometheusRule's rule groups as a plain Prometheus rules file, and every
// metric name a rule or a panel queries, so the tests can hold both to what the worker and the starter export.
// `npx tsx deploy/monitoring/rules.ts > steward-rules.yml` prints the plain rules file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dumpYaml, loadYaml } from '@kubernetes/client-node';

/** In the Helm chart, which renders it when prometheusRule.enabled (Helm reads only files inside its chart). */
export const RULE_FILE = join(__dirname, '..', 'helm', 'steward', 'files', 'prometheus-rule.yaml');
export const DASHBOARD_FILE = join(__dirname, '..', 'helm', 'steward', 'files', 'grafana-dashboard.json');

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface PrometheusRule {
  kind: string;
  spec: { groups: { name: string; rules: Rule[] }[] };
}

/** The rule groups the PrometheusRule holds: one copy, read by the operator and by plain Prometheus alike. */
export function ruleGroups(text = readFileSync(RULE_FILE, 'utf8')): PrometheusRule['spec']['groups'] {
  const manifest = loadYaml<PrometheusRule>(text);
  if (manifest.kind !== 'PrometheusRule') throw new Error(`${RULE_FILE} is a ${manifest.kind}, not a PrometheusRule`);
  return manifest.spec.groups;
}

/** A rules file for Prometheus' rule_files (what promtool checks). */
export const plainRulesFile = (text?: string) => dumpYaml({ groups: ruleGroups(text) }, { lineWidth: 120 });

/** Functions, aggregations, operators and keywords: words in PromQL that are not metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
KEYWORDS.add('bool').add('offset').add('inf').add('nan').add('atan2');

/**
 * The metric names a PromQL expression selects. Strings, label matchers, ranges and Grafana variables go first, then
 * the label lists of by/without/on/ignoring/group_*; of the words left, one followed by `(` is a function or an
 * aggregation, a keyword is a keyword, and the rest are metric names (`name{…}`, `name[5m]` or bare `name`).
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\w+/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ')
    .replace(/\boffset\s+-?\w+/gi, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/(?<![\w.:])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const [, word, call] = match;
    if (call || KEYWORDS.has(word!.toLowerCase())) continue;
    names.add(word!);
  }
  return [...names];
}

/** Where a metric is named: the file, the rule or panel, and its expression. */
export interface MetricUse {
  file: string;
  where: string;
  metric: string;
}

interface Panel {
  title?: string;
  panels?: Panel[];
  targets?: { expr?: string; refId?: string }[];
}

export function ruleMetricUses(text?: string): MetricUse[] {
  return ruleGroups(text).flatMap((group) =>
    group.rules.flatMap((rule) =>
      metricNames(rule.expr).map((metric) => ({
        file: 'deploy/helm/steward/files/prometheus-rule.yaml',
        where: `group ${group.name}, ${rule.alert ? `alert ${rule.alert}` : `record ${rule.record}`}`,
        metric,
      })),
    ),
  );
}

export function dashboardMetricUses(text = readFileSync(DASHBOARD_FILE, 'utf8')): MetricUse[] {
  const visit = (panel: Panel): MetricUse[] => [
    ...(panel.targets ?? []).flatMap((target) =>
      metricNames(target.expr ?? '').map((metric) => ({
        file: 'deploy/helm/steward/files/grafana-dashboard.json',
        where: `panel "${panel.title}", query ${target.refId}`,
        metric,
      })),
    ),
    ...(panel.panels ?? []).flatMap(visit),
  ];
  return visit(JSON.parse(text) as Panel);
}

/**
 * The metric names a /metrics page offers: each family its `# TYPE` line declares (prom-client declares a metric
 * before its first sample) and each sample's name. A histogram's `_bucket`, `_sum` and `_count` are its family's.
 */
export function exportedNames(page: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of page.matchAll(/^# TYPE (\S+) (\S+)/gm)) {
    names.add(name!);
    if (type === 'histogram' || type === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(name! + s);
  }
  for (const [, name] of page.matchAll(/^([a-zA-Z_:][\w:]*)[{ ]/gm)) names.add(name!);
  return names;
}

/** One line per metric named somewhere but exported nowhere: the file, the rule or panel, and the name. */
export function missingMetrics(uses: MetricUse[], exported: Set<string>): string[] {
  return uses
    .filter((use) => !exported.has(use.metric))
    .map((use) => `${use.file}: ${use.where}: ${use.metric} is not exported`);
}

if (require.main === module) process.stdout.write(plainRulesFile());
