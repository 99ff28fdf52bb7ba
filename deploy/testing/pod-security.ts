import * as k8s from '@kubernetes/client-node';

/** A namespace that enforces the PodSecurity `restricted` profile, where the deploy tests put their Pods. */
export const enforcingRestricted = (name: string): k8s.V1Namespace => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: {
    name,
    labels: {
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/enforce-version': 'latest',
    },
  },
});

/** A Pod as the Deployment's ReplicaSet would make it, for the restricted namespace. */
export const podOf = (deployment: k8s.V1Deployment): k8s.V1Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `${deployment.metadata!.name}-0`, labels: deployment.spec!.template.metadata?.labels },
  spec: structuredClone(deployment.spec!.template.spec!),
});

/** The same Pod allowed to escalate: the control that restricted must refuse, or an admission proves nothing. */
export function escalating(pod: k8s.V1Pod): k8s.V1Pod {
  const copy = structuredClone(pod);
  copy.spec!.containers[0]!.securityContext = {
    ...copy.spec!.containers[0]!.securityContext,
    allowPrivilegeEscalation: true,
  };
  return copy;
}

/** PodSecurity's refusal of the Pod (a server-side dry-run create in an enforcing namespace), or undefined. */
export async function podSecurityRefusal(
  core: k8s.CoreV1Api,
  namespace: string,
  pod: k8s.V1Pod,
): Promise<string | undefined> {
  try {
    await core.createNamespacedPod({ namespace, body: pod, dryRun: 'All' });
    return undefined;
  } catch (error) {
    if (error instanceof k8s.ApiException && error.code === 403) {
      // The Status's message names the profile and each rule the Pod breaks.
      const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
      return (body as k8s.V1Status).message ?? JSON.stringify(body);
    }
    throw error;
  }
}
