import { ensureGoTool } from './go-tool';

/**
 * helm for the tests of deploy/helm/steward, built once from its Go module (./go-tool.ts). v3.19.5 is the newest
 * Helm 3 release whose go.mod asks for no newer Go than the Go ≥ 1.24 the README requires (3.20 needs 1.25).
 */
export const HELM_VERSION = 'v3.19.5';

export const ensureHelm = (): Promise<string> =>
  ensureGoTool({ name: 'helm', module: 'helm.sh/helm/v3/cmd/helm', version: HELM_VERSION });
