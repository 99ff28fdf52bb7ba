import * as k8s from '@kubernetes/client-node';
import { waitFor } from '../../test/support';

/**
 * Waits until the API server's authorizer answers `expected` for the ServiceAccount `user` (a SubjectAccessReview)
 * on `attributes`: bindings reach the authorizer's cache asynchronously, so a freshly applied RBAC is waited for.
 */
export async function expectAccess(
  kubeConfig: k8s.KubeConfig,
  user: string,
  attributes: k8s.V1ResourceAttributes,
  expected: boolean,
  what: string,
): Promise<void> {
  const authorization = kubeConfig.makeApiClient(k8s.AuthorizationV1Api);
  const allowed = async () =>
    (
      await authorization.createSubjectAccessReview({
        body: { spec: { user, groups: ['system:serviceaccounts'], resourceAttributes: attributes } },
      })
    ).status?.allowed ?? false;
  await waitFor(
    `${what}: ${expected ? 'allowed' : 'denied'}`,
    async () => (await allowed()) === expected || undefined,
    30_000,
  );
}
