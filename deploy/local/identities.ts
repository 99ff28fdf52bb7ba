import * as k8s from '@kubernetes/client-node';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_ACCOUNT_DIR } from '../../platform/kubernetes/kubeconfig';
import { kubeconfigYaml } from './kubernetes';

/**
 * Least-privilege identities for running Steward (and tests) as a real ServiceAccount: the admin creates the account,
 * its role and binding, then asks the TokenRequest API for a token and writes a kubeconfig for it.
 */
export interface ServiceAccountIdentity {
  namespace: string;
  name: string;
  /** Rules of a namespaced Role in `namespace`. */
  rules?: k8s.V1PolicyRule[];
  /** Rules of a ClusterRole bound cluster-wide. */
  clusterRules?: k8s.V1PolicyRule[];
}

/** Server-side apply as `steward`, forcing conflicts: what `kubectl apply --server-side --force-conflicts` does. */
export function serverSideApply(
  kubeConfig: k8s.KubeConfig,
): (object: k8s.KubernetesObject) => Promise<k8s.KubernetesObject> {
  const objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
  return (object) => objects.patch(object, undefined, undefined, 'steward', true, k8s.PatchStrategy.ServerSideApply);
}

export async function createServiceAccountKubeconfig(
  adminKubeconfigPath: string,
  identity: ServiceAccountIdentity,
  outputPath: string,
): Promise<k8s.KubeConfig> {
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(adminKubeconfigPath);
  const apply = serverSideApply(admin);
  const { namespace, name } = identity;
  const subject = { kind: 'ServiceAccount', name, namespace };
  const roleName = `steward:${namespace}:${name}`;

  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  if (identity.rules) {
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: roleName, namespace },
      rules: identity.rules,
    } as k8s.V1Role);
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: roleName, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
      subjects: [subject],
    } as k8s.V1RoleBinding);
  }
  if (identity.clusterRules) {
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: roleName },
      rules: identity.clusterRules,
    } as k8s.V1ClusterRole);
    await apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: roleName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [subject],
    } as k8s.V1ClusterRoleBinding);
  }
  return serviceAccountKubeconfig(admin, namespace, name, outputPath);
}

/** A token of an existing ServiceAccount from the TokenRequest API (valid a day), with the cluster's server and CA. */
async function serviceAccountToken(
  admin: k8s.KubeConfig,
  namespace: string,
  name: string,
): Promise<{ server: string; caData: string; token: string }> {
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const tokenRequest = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster?.caData || !tokenRequest.status?.token)
    throw new Error(`no token issued for ServiceAccount ${namespace}/${name}`);
  return { server: cluster.server, caData: cluster.caData, token: tokenRequest.status.token };
}

/**
 * The ServiceAccount's files as the kubelet mounts them in its pod (token, ca.crt, namespace), under `root`: a
 * process given TELEPRESENCE_ROOT=<root> and the API server's address runs as that pod (no kubeconfig).
 */
export async function serviceAccountFiles(
  admin: k8s.KubeConfig,
  namespace: string,
  name: string,
  root: string,
): Promise<{ server: string }> {
  const { server, caData, token } = await serviceAccountToken(admin, namespace, name);
  const dir = join(root, SERVICE_ACCOUNT_DIR);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'token'), token, { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), Buffer.from(caData, 'base64'));
  writeFileSync(join(dir, 'namespace'), namespace);
  return { server };
}

/** A token of an existing ServiceAccount from the TokenRequest API (valid a day), written as a kubeconfig. */
export async function serviceAccountKubeconfig(
  admin: k8s.KubeConfig,
  namespace: string,
  name: string,
  outputPath: string,
): Promise<k8s.KubeConfig> {
  const { server, caData, token } = await serviceAccountToken(admin, namespace, name);
  writeFileSync(
    outputPath,
    kubeconfigYaml({ server, caData, user: `system:serviceaccount:${namespace}:${name}`, token }),
    { mode: 0o600 },
  );
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(outputPath);
  return kc;
}
