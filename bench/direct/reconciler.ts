// The direct baseline (issue 12): what a plain @kubernetes/client-node controller would do with Steward's own pieces
// and no Temporal. Informers on Nodes, Pods, Services, Endpoints and Translations feed one work queue of object
// keys; `workers` keys are reconciled at a time (the worker's default activity slots). An object's reconcile
// translates it (model/translation) and applies its Translations by server-side apply, deleting stale ones
// (activities/kubernetes applyTranslations); a Translation's reconcile pushes its resources to MidoNet in order
// (activities/midonet ensure) and writes status Ready; a deleted Translation's resources are removed in reverse
// order, then its finalizer `midonet.org/deleter` released. The garbage collector deletes the Translations of a
// deleted object, as for Steward. What it does not do, and Steward does: keep a record of what it pushed outside the
// Translation, referrer back-references, drift repair, stuck states, operator actions, and surviving its own crash
// mid-push with anything but a re-list.
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { createKubernetesActivities, type KubeObject } from '../../activities/kubernetes';
import { identify, type MidonetClient } from '../../activities/midonet';
import {
  createSource,
  informerFactory,
  kubernetesListWatch,
  type SourceEvent,
} from '../../platform/kubernetes/informer';
import { workerSettings } from '../../cli/worker';
import { translate } from '../../model/translation';
import {
  CLUSTER_SCOPED_NAMESPACE,
  OWNER_UID_LABEL,
  type BackendResource,
  type KubernetesProjection,
} from '../../model/translation/types';
import { toProjection } from '../../model/translation/to-projection';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { createKeyQueue } from './queue';

export interface DirectOptions {
  kubeConfig: k8s.KubeConfig;
  midonet: MidonetClient;
  /** The run's namespace: its Pods, Services, Endpoints and their Translations are this reconciler's. */
  namespace: string;
  /** The run's Nodes (and, in the cluster-scoped namespace, their Translations) are those whose name starts so. */
  nodePrefix: string;
  tenant?: string;
  /** Reconciles at a time; the worker's default activity slots. */
  workers?: number;
  logger: Logger;
}

/** Calls by the name of the Steward activity doing the same work, so the two sides compare line by line. */
export type DirectCalls = Record<
  'applyTranslations' | 'pushTranslation' | 'recordTranslationStatus' | 'deleteTranslation' | 'releaseFinalizer',
  number
>;

export interface DirectReconciler {
  /** Nothing queued, in flight or waiting for a retry. */
  idle(): boolean;
  stats(): { calls: DirectCalls; reconciles: number; retries: number; failures: Record<string, number> };
  stop(): Promise<void>;
}

type Kind = SourceEvent['kind'];
const OBJECT_KINDS = ['Node', 'Pod', 'Service', 'Endpoints'] as const;
const keyOf = (kind: string, object: k8s.KubernetesObject) =>
  `${kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

export function startDirectReconciler(options: DirectOptions): DirectReconciler {
  const { kubeConfig, midonet, namespace, nodePrefix, tenant, logger } = options;
  const kubernetes = createKubernetesActivities({ kubeConfig, fieldManager: 'steward-direct' });
  const cache = new Map<string, KubeObject>();
  const nodeUids = new Set<string>();
  const calls: DirectCalls = {
    applyTranslations: 0,
    pushTranslation: 0,
    recordTranslationStatus: 0,
    deleteTranslation: 0,
    releaseFinalizer: 0,
  };
  const queue = createKeyQueue(options.workers ?? Number(workerSettings.maxConcurrentActivities.default), reconcile);

  const mine = (kind: Kind, object: KubeObject): boolean => {
    if (kind === 'Node') return object.metadata.name.startsWith(nodePrefix);
    if (kind === 'Translation' && object.metadata.namespace === CLUSTER_SCOPED_NAMESPACE)
      return nodeUids.has(object.metadata.labels?.[OWNER_UID_LABEL] ?? '');
    return object.metadata.namespace === namespace;
  };
  function onEvent({ type, kind, object }: SourceEvent): void {
    const kubeObject = object as KubeObject;
    if (!mine(kind, kubeObject)) return;
    const key = keyOf(kind, object);
    if (type === 'delete') cache.delete(key);
    else cache.set(key, kubeObject);
    if (kind === 'Node') nodeUids.add(kubeObject.metadata.uid);
    queue.add(key);
    // Dependents translate with their dependency: Endpoints with their Service, Pods with their Node.
    if (kind === 'Service') queue.add(`Endpoints/${kubeObject.metadata.namespace}/${kubeObject.metadata.name}`);
    if (kind === 'Node')
      for (const [podKey, pod] of cache)
        if (podKey.startsWith('Pod/') && (pod.spec as { nodeName?: string }).nodeName === kubeObject.metadata.name)
          queue.add(podKey);
  }

  const projectionOf = (kind: string, object: KubeObject | undefined): KubernetesProjection | undefined => {
    const result = object && toProjection({ ...object, kind });
    return result && result.ok ? result.projection : undefined;
  };

  async function reconcileObject(kind: (typeof OBJECT_KINDS)[number], key: string): Promise<void> {
    const object = cache.get(key);
    // Gone or going: the garbage collector deletes its Translations, whose reconciles clean the backend.
    if (!object || object.metadata.deletionTimestamp) return;
    const projection = projectionOf(kind, object);
    if (!projection) return logger.warn({ key }, 'does not project; left alone');
    const node =
      projection.kind === 'Pod'
        ? projectionOf('Node', cache.get(`Node//${projection.spec.nodeName ?? ''}`))
        : undefined;
    const service =
      projection.kind === 'Endpoints'
        ? projectionOf('Service', cache.get(`Service/${object.metadata.namespace}/${object.metadata.name}`))
        : undefined;
    const result = translate(projection, {
      ...(tenant ? { tenant } : {}),
      ...(node?.kind === 'Node' ? { node } : {}),
      ...(service?.kind === 'Service' ? { service } : {}),
    });
    // A dependency not seen yet (a Pod's Node): retried with backoff, as midonet-kubernetes does.
    if (!result.ok) throw Object.assign(new Error(result.error.message), { type: result.error.reason });
    calls.applyTranslations++;
    const { name, uid } = object.metadata;
    const owner =
      kind === 'Node' ? { kind, name, uid } : { kind, namespace: object.metadata.namespace ?? '', name, uid };
    const applied = await kubernetes.applyTranslations({ owner, translations: result.translations });
    // A previous incarnation's Translation is still being finalized: apply again once it is gone.
    if (applied.terminating.length)
      throw Object.assign(new Error(`terminating: ${applied.terminating.join(', ')}`), {
        type: 'TranslationTerminating',
      });
  }

  async function reconcileTranslation(key: string): Promise<void> {
    const object = cache.get(key);
    if (!object || !object.metadata.finalizers?.includes(TRANSLATION_FINALIZER)) return;
    const resources = (object.resources ?? []) as BackendResource[];
    const ref = {
      kind: 'Translation' as const,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name,
    };
    const { uid, generation = 0 } = object.metadata;
    if (object.metadata.deletionTimestamp) {
      calls.deleteTranslation++;
      for (const resource of [...resources].reverse()) await midonet.remove(resource);
      calls.releaseFinalizer++;
      await kubernetes.releaseFinalizer({ ref, uid, finalizer: TRANSLATION_FINALIZER });
      return;
    }
    const status = object.status as
      | { observedGeneration?: number; conditions?: { type: string; status: string }[] }
      | undefined;
    const ready =
      status?.observedGeneration === generation &&
      status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready) return;
    calls.pushTranslation++;
    for (const resource of resources) {
      const outcome = await midonet.ensure(resource);
      if (outcome.outcome === 'conflict')
        throw Object.assign(new Error(`${key}: ${resource.kind} conflicts (${outcome.reason})`), {
          type: 'ResourceConflict',
        });
    }
    const message = `${resources.length} MidoNet resources pushed`;
    const condition = { status: 'True' as const, reason: 'Synced', message };
    calls.recordTranslationStatus++;
    await kubernetes.recordTranslationStatus({
      ref,
      uid,
      generation,
      childResources: resources.map((resource) => ({
        kind: resource.kind,
        id: identify(resource).id,
        state: 'synced',
      })),
      ready: condition,
      synced: condition,
      event: { type: 'Normal', reason: 'Synced', message },
    });
  }

  function reconcile(key: string): Promise<void> {
    const kind = key.slice(0, key.indexOf('/'));
    if (kind === 'Translation') return reconcileTranslation(key);
    const objectKind = OBJECT_KINDS.find((k) => k === kind);
    return objectKind ? reconcileObject(objectKind, key) : Promise.resolve();
  }

  const sourceOptions = {
    makeInformer: informerFactory(kubeConfig),
    resyncMs: 600_000,
    backoff: { initialMs: 500, maxMs: 30_000 },
    logger,
    onEvent,
  };
  const sources = [
    createSource({
      ...sourceOptions,
      kinds: ['Node', 'Pod', 'Service', 'Endpoints', 'Translation'],
      listWatch: kubernetesListWatch(kubeConfig, namespace),
    }),
    createSource({
      ...sourceOptions,
      kinds: ['Translation'],
      listWatch: kubernetesListWatch(kubeConfig, CLUSTER_SCOPED_NAMESPACE),
    }),
  ];
  sources.forEach((source) => source.start());
  return {
    idle: () => queue.idle(),
    stats: () => ({ calls: { ...calls }, ...queue.stats() }),
    async stop() {
      await Promise.all(sources.map((source) => source.stop()));
      await queue.stop();
    },
  };
}
