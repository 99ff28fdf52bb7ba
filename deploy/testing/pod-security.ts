import * as k8s from '@kubernetes/client-node';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

/**
 * A namespace that enforces a PodSecurity level, where the deploy tests put their Pods: `restricted` for a
 * peer-pods-only installation, `privileged` for the MidoNet profile's host network (which `baseline` refuses).
 */
export const enforcing = (level: PodSecurityLevel, name: string): k8s.V1Namespace => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: {
    name,
    labels: {
      'pod-security.kubernetes.io/enforce': level,
      'pod-security.kubernetes.io/enforce-version': 'latest',
    },
  },
});
export const enforcingRestricted = (name: string) => enforcing('restricted', name);

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

/**
 * Admission of a Deployment's Pod where the profile puts it, with the control that proves the level matters: the
 * MidoNet profile's Pod is admitted under `privileged` and refused under `baseline` for its host network; a
 * peer-pods-only Pod is admitted under `restricted`, and refused there once allowed to escalate. Returns, for the
 * test to compare, [the refusal where it must be admitted (undefined), the refusal of the control].
 */
export async function admissionOf(
  core: k8s.CoreV1Api,
  deployment: k8s.V1Deployment,
  namespaces: Record<PodSecurityLevel, string>,
): Promise<[string | undefined, string | undefined]> {
  const pod = podOf(deployment);
  if (pod.spec!.hostNetwork)
    return [
      await podSecurityRefusal(core, namespaces.privileged, pod),
      await podSecurityRefusal(core, namespaces.baseline, pod),
    ];
  return [
    await podSecurityRefusal(core, namespaces.restricted, pod),
    await podSecurityRefusal(core, namespaces.restricted, escalating(pod)),
  ];
}

/** The control's refusal that admissionOf expects, by whether the Pod is on the host network. */
export const controlRefusal = (hostNetwork: boolean | undefined): RegExp =>
  hostNetwork
    ? /violates PodSecurity "baseline:latest".*host namespaces \(hostNetwork=true\)/
    : /violates PodSecurity "restricted:latest".*allowPrivilegeEscalation/;
