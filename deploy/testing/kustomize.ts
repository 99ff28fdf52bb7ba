import * as k8s from '@kubernetes/client-node';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../local/paths';
import { capture, commandExists, runLogged } from '../local/process';
import { MissingPrerequisite, stderrReporter, step } from '../local/progress';

/**
 * kustomize for the tests of deploy/'s base and overlays: built once from its Go module and cached by version like
 * the Kubernetes binaries, so a fresh machine (CI) needs only Go, not a kubectl from some package repository.
 * v5.8.1 is the newest release whose go.mod asks for no newer Go than the Go ≥ 1.24 the README requires; its
 * output is what `kubectl apply -k` renders (kubectl ≥ 1.27 embeds kustomize v5).
 */
export const KUSTOMIZE_VERSION = 'v5.8.1';

export async function ensureKustomize(): Promise<string> {
  const binDir = join(cacheRoot, `kustomize-${KUSTOMIZE_VERSION}`, 'bin');
  const binary = join(binDir, 'kustomize');
  if (existsSync(binary)) return binary;
  if (!(await commandExists('go'))) {
    throw new MissingPrerequisite(
      `Go is needed once to build kustomize ${KUSTOMIZE_VERSION}.`,
      'install Go >= 1.24 (official tarball into /usr/local/go, then PATH=/usr/local/go/bin:$PATH)',
    );
  }
  // Installed into a staging folder renamed at the end, so an interrupted build is never taken for a cache.
  const staging = `${binDir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  await step(stderrReporter, `build kustomize ${KUSTOMIZE_VERSION} with go install`, () =>
    runLogged(
      'go',
      ['install', '-trimpath', '-ldflags', '-s -w', `sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}`],
      {
        step: 'go install kustomize',
        logFile: join(cacheRoot, 'logs', `kustomize-${KUSTOMIZE_VERSION}-build.log`),
        env: { GOBIN: staging, CGO_ENABLED: '0', GOTOOLCHAIN: 'local' },
      },
    ),
  );
  rmSync(binDir, { recursive: true, force: true });
  renameSync(staging, binDir);
  return binary;
}

/** `kustomize build <dir>`, as objects in kustomize's output order (namespaces and CRDs first). */
export async function kustomizeBuild(kustomize: string, dir: string): Promise<k8s.KubernetesObject[]> {
  return k8s.loadAllYaml(await capture(kustomize, ['build', dir])) as k8s.KubernetesObject[];
}
