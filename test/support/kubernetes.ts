// Kubernetes fixtures for the stack tests of activities/, starter/ and workflows/: the admin client of the running
// stack, a fresh namespace, owners and Translations to apply.
import * as k8s from '@kubernetes/client-node';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { sleep } from '../../deploy/local/process';
import { OWNER_UID_LABEL, type Translation } from '../../model/translation/types';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import type { TranslationOwner } from '../../activities/kubernetes/translations';

export function adminConfig(): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(stackInfo().kubernetes.kubeconfig);
  return kc;
}

export const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

export async function createNamespace(kc: k8s.KubeConfig, prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name } } });
  return name;
}

/** A Service to own Translations (Services need no controller to exist, unlike Pods without a ServiceAccount). */
export async function createService(
  kc: k8s.KubeConfig,
  namespace: string,
  name = uniqueName('svc'),
): Promise<TranslationOwner & { kind: 'Service' }> {
  const service = await kc
    .makeApiClient(k8s.CoreV1Api)
    .createNamespacedService({ namespace, body: { metadata: { name }, spec: { ports: [{ port: 80 }] } } });
  return { kind: 'Service', namespace, name, uid: service.metadata!.uid! };
}

/** A Translation of `owner` with one Bridge per id, as the translator writes them. */
export function translationOf(
  owner: TranslationOwner & { kind: 'Service' },
  name: string,
  bridgeIds: string[],
): Translation {
  return {
    name,
    namespace: owner.namespace!,
    labels: { [OWNER_UID_LABEL]: owner.uid },
    ownerReferences: [{ apiVersion: 'v1', kind: owner.kind, name: owner.name, uid: owner.uid }],
    finalizers: [TRANSLATION_FINALIZER],
    resources: bridgeIds.map((id) => ({ kind: 'Bridge', parent: '', body: JSON.stringify({ id, name: name }) })),
  };
}

export const bridgeId = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;

/** Polls `check` until it holds; the garbage collector and RBAC caches work asynchronously. */
export async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(300);
  }
}
