import { join } from 'node:path';
import { KUBERNETES_VERSION } from '../local/kubernetes';
import { ensureGoTool } from './go-tool';

/**
 * kubectl at the embedded stack's Kubernetes release, for tests that run documented commands as a user types them
 * (docs/migration.md). Built once from the wrapper module in ./kubectl (k8s.io/kubectl's command tree, as upstream's
 * cmd/kubectl runs it) and cached like kustomize and helm; `kubectl version` reports the release.
 */
export const ensureKubectl = (): Promise<string> =>
  ensureGoTool({
    name: 'kubectl',
    module: 'k8s.io/kubectl',
    version: KUBERNETES_VERSION,
    wrapper: {
      dir: join(__dirname, 'kubectl'),
      ldflags: ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].map(
        (pkg) => `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
      ),
    },
  });
