import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../local/paths';
import { capture } from '../local/process';
import { ensureGoTool } from './go-tool';

/**
 * helm for the tests of deploy/helm/steward, built once from its Go module (./go-tool.ts). v3.19.5 is the newest
 * Helm 3 release whose go.mod asks for no newer Go than the Go ≥ 1.24 the README requires (3.20 needs 1.25).
 */
export const HELM_VERSION = 'v3.19.5';
export const CHART_DIR = join(repoRoot, 'deploy', 'helm', 'steward');

export const ensureHelm = (): Promise<string> =>
  ensureGoTool({ name: 'helm', module: 'helm.sh/helm/v3/cmd/helm', version: HELM_VERSION });

/** Values as helm takes them: a file (JSON is YAML), so that no --set escaping stands between a test and the chart. */
export function valuesFile(values: object): string {
  const file = join(mkdtempSync(join(tmpdir(), 'steward-helm-')), 'values.yaml');
  writeFileSync(file, JSON.stringify(values));
  return file;
}

// helm's own cache, config and data folders, away from the user's repositories and plugins.
const helmHome = mkdtempSync(join(tmpdir(), 'steward-helm-home-'));
export const helmEnv = {
  HELM_CACHE_HOME: join(helmHome, 'cache'),
  HELM_CONFIG_HOME: join(helmHome, 'config'),
  HELM_DATA_HOME: join(helmHome, 'data'),
};

/** Runs helm and returns its stdout; rejects with its stderr. */
export const runHelm = (helm: string, args: string[]): Promise<string> => capture(helm, args, helmEnv);

/** `helm template` of the chart as release `steward` in namespace `steward` (the kustomize base's names), CRDs too. */
export async function helmTemplate(helm: string, values: object): Promise<k8s.KubernetesObject[]> {
  const args = ['template', 'steward', CHART_DIR, '--namespace', 'steward', '--include-crds'];
  const output = await runHelm(helm, [...args, '--values', valuesFile(values)]);
  return k8s.loadAllYaml(output).filter(Boolean) as k8s.KubernetesObject[];
}
