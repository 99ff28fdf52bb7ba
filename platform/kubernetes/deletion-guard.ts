import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { guardState, TRANSLATION_CRD, type GuardState } from '../../model/deletion-guard';
import { createSource, informerFactory } from './informer';

/**
 * The guard against mass deletion as Kubernetes holds it (model/deletion-guard.ts): one watch of the one CRD
 * `translations.midonet.org` for the workers and the starter, so that checking it before a deletion costs no
 * request; a fresh read for whoever must be sure (a refusal, the CLI); and the annotations written on it.
 */
export interface DeletionGuardWatch {
  /** As the watch saw the CRD last. */
  state(): GuardState;
  /** The CRD was listed and its watch has not failed since. */
  synced(): boolean;
  stop(): Promise<void>;
}

const crdApi = (kubeConfig: k8s.KubeConfig) => kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
const byName = `metadata.name=${TRANSLATION_CRD}`;

export function watchDeletionGuard(
  kubeConfig: k8s.KubeConfig,
  log: Logger,
  onChange?: (state: GuardState) => void,
): DeletionGuardWatch {
  let metadata: k8s.V1ObjectMeta | undefined;
  const api = crdApi(kubeConfig);
  const source = createSource({
    kinds: ['CustomResourceDefinition'],
    listWatch: () => ({
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      fieldSelector: byName,
      list: () => api.listCustomResourceDefinition({ fieldSelector: byName }),
    }),
    makeInformer: informerFactory(kubeConfig),
    resyncMs: 10 * 60_000,
    backoff: { initialMs: 500, maxMs: 30_000 },
    logger: log.child({ component: 'deletion-guard' }),
    onEvent: ({ type, object }) => {
      metadata = type === 'delete' ? undefined : object.metadata;
      onChange?.(guardState(metadata));
    },
  });
  source.start();
  return { state: () => guardState(metadata), synced: () => source.synced(), stop: () => source.stop() };
}

/** The CRD now: its guard, and its metadata (absent when there is no such CRD). */
export async function readDeletionGuard(
  kubeConfig: k8s.KubeConfig,
): Promise<{ state: GuardState; metadata?: k8s.V1ObjectMeta }> {
  try {
    const { metadata } = await crdApi(kubeConfig).readCustomResourceDefinition({ name: TRANSLATION_CRD });
    return { state: guardState(metadata), ...(metadata ? { metadata } : {}) };
  } catch (error) {
    if ((error as { code?: number }).code === 404) return { state: guardState(undefined) };
    throw error;
  }
}

/**
 * Writes the guard's annotations on the CRD (a merge patch, so nothing else of it is touched), guarded by the
 * resourceVersion read: two writers at once (two starters, a starter and an operator) do not overwrite each other.
 */
export async function annotateDeletionGuard(
  kubeConfig: k8s.KubeConfig,
  resourceVersion: string | undefined,
  annotations: Record<string, string>,
): Promise<void> {
  await crdApi(kubeConfig).patchCustomResourceDefinition(
    { name: TRANSLATION_CRD, body: { metadata: { annotations, ...(resourceVersion ? { resourceVersion } : {}) } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}
