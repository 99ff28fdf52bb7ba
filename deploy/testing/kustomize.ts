import * as k8s from '@kubernetes/client-node';
import { capture } from '../local/process';
import { ensureGoTool } from './go-tool';

/**
 * kustomize for the tests of deploy/'s base and overlays, built once from its Go module (./go-tool.ts).
 * v5.8.1 is the newest release whose go.mod asks for no newer Go than the Go ≥ 1.24 the README requires; its
 * output is what `kubectl apply -k` renders (kubectl ≥ 1.27 embeds kustomize v5).
 */
export const KUSTOMIZE_VERSION = 'v5.8.1';

export const ensureKustomize = (): Promise<string> =>
  ensureGoTool({ name: 'kustomize', module: 'sigs.k8s.io/kustomize/kustomize/v5', version: KUSTOMIZE_VERSION });

/** `kustomize build <dir>`, as objects in kustomize's output order (namespaces and CRDs first). */
export async function kustomizeBuild(kustomize: string, dir: string): Promise<k8s.KubernetesObject[]> {
  return k8s.loadAllYaml(await capture(kustomize, ['build', dir])) as k8s.KubernetesObject[];
}
