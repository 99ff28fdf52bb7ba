import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { backoffDelay, type Backoff } from '../backoff';
import { listWatchSpec, type EndpointsSource, type ListWatchSpec, type WatchedKind } from './kinds';

export interface SourceEvent<K extends string = WatchedKind> {
  type: 'upsert' | 'delete';
  kind: K;
  object: k8s.KubernetesObject;
}

/** `K`: the kinds watched, the starter's (WatchedKind) unless another watch says otherwise. */
export interface SourceOptions<K extends string = WatchedKind> {
  kinds: readonly K[];
  /** Builds the list/watch pair of a kind; tests inject their own. */
  listWatch: (kind: K) => ListWatchSpec;
  /** Makes an informer; `k8s.makeInformer` over the starter's KubeConfig in production. */
  makeInformer: (spec: ListWatchSpec) => k8s.Informer<k8s.KubernetesObject>;
  /** Every this often each kind is listed again from scratch, so a missed event is repaired. */
  resyncMs: number;
  /** Delay before restarting an informer that stopped on an error. */
  backoff: Backoff;
  logger: Logger;
  onEvent: (event: SourceEvent<K>) => void;
  /** An informer stopped on an error; it is restarted from a fresh list after the backoff. */
  onError?: (kind: K, error: unknown) => void;
  /** A kind was listed in full (at start, at a re-list, after a restart or a 410 Gone). */
  onListed?: (kind: K) => void;
  /** Called at every periodic re-list, before the informers list again. */
  onResync?: () => void;
}

export interface Source<K extends string = WatchedKind> {
  start(): void;
  stop(): Promise<void>;
  /** Emits an `upsert` for every object currently known (a new leader sends everything once), to `visit` if given. */
  replay(visit?: (event: SourceEvent<K>) => void): void;
  /** Objects known, per kind. */
  counts(): Record<string, number>;
  /** The object of that kind and name as last seen (namespace `''` or absent for cluster-scoped kinds). */
  get(kind: K, namespace: string | undefined, name: string): k8s.KubernetesObject | undefined;
  /** Every kind's last list succeeded and its watch has not failed since: what is known is all there is. */
  synced(): boolean;
}

/** The phases of a watch event that carry an object of the kind watched (not a BOOKMARK's or an ERROR's Status). */
const OBJECT_PHASES = new Set(['ADDED', 'MODIFIED', 'DELETED']);

/**
 * The informer of a spec: client-node's ListWatch (`k8s.makeInformer` is one with no field selector). With `keep`, the
 * list's items and the watch's objects pass through it before the informer caches them, so the whole object is
 * garbage as soon as it is read. `watch` is the client's Watch over `kubeConfig`; tests give their own.
 */
export const informerFactory =
  (kubeConfig: k8s.KubeConfig, watch: Pick<k8s.Watch, 'watch'> = new k8s.Watch(kubeConfig)) =>
  ({ path, list, fieldSelector, keep }: ListWatchSpec): k8s.ListWatch<k8s.KubernetesObject> => {
    if (!keep) return new k8s.ListWatch(path, watch as k8s.Watch, list, false, undefined, fieldSelector);
    const keptWatch: Pick<k8s.Watch, 'watch'> = {
      watch: (watchPath, params, callback, done) =>
        watch.watch(
          watchPath,
          params,
          (phase, object, raw) =>
            callback(phase, OBJECT_PHASES.has(phase) ? keep(object as k8s.KubernetesObject) : object, raw),
          done,
        ),
    };
    const keptList = async () => {
      const result = await list();
      return { ...result, items: result.items.map(keep) };
    };
    return new k8s.ListWatch(path, keptWatch as k8s.Watch, keptList, false, undefined, fieldSelector);
  };

export const kubernetesListWatch =
  (kubeConfig: k8s.KubeConfig, namespace?: string, endpointsFrom?: EndpointsSource) => (kind: WatchedKind) =>
    listWatchSpec(kubeConfig, kind, namespace, endpointsFrom);

const keyOf = (object: k8s.KubernetesObject) => `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/**
 * The source: one informer per kind, each restarted from a fresh list when it stops on an error (with backoff) and
 * every `resyncMs`. The informer itself already re-lists on 410 Gone and re-watches when a connection closes
 * cleanly; what it does not do is come back after an error, which is what this adds.
 *
 * The source keeps the last object of each name. A re-list compares against it, so an object deleted while no
 * watch was running still yields a `delete`, and so does an old incarnation replaced under the same name.
 */
export function createSource<K extends string = WatchedKind>(options: SourceOptions<K>): Source<K> {
  const { logger, onEvent } = options;
  const watchers = options.kinds.map((kind) => watchKind(kind, options, logger.child({ kind }), onEvent));
  let resync: NodeJS.Timeout | undefined;
  return {
    start() {
      for (const w of watchers) w.restart();
      resync = setInterval(() => {
        logger.debug('periodic re-list');
        options.onResync?.();
        for (const w of watchers) w.restart();
      }, options.resyncMs);
    },
    async stop() {
      clearInterval(resync);
      await Promise.all(watchers.map((w) => w.stop()));
    },
    replay: (visit = onEvent) => watchers.forEach((w) => w.replay(visit)),
    counts: () => Object.fromEntries(watchers.map((w) => [w.kind, w.known.size])),
    get: (kind, namespace, name) => watchers.find((w) => w.kind === kind)?.known.get(`${namespace ?? ''}/${name}`),
    synced: () => watchers.every((w) => w.synced()),
  };
}

function watchKind<K extends string>(
  kind: K,
  options: SourceOptions<K>,
  logger: Logger,
  onEvent: (event: SourceEvent<K>) => void,
) {
  const known = new Map<string, k8s.KubernetesObject>();
  let informer: k8s.Informer<k8s.KubernetesObject> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let failures = 0;
  let synced = false;
  let stopped = false;

  const upsert = (object: k8s.KubernetesObject) => {
    known.set(keyOf(object), object);
    onEvent({ type: 'upsert', kind, object });
  };
  const remove = (object: k8s.KubernetesObject) => {
    const key = keyOf(object);
    const last = known.get(key);
    // Deletions reach us twice after a re-list (our diff and the informer's own): report each incarnation once.
    if (!last || last.metadata?.uid !== object.metadata?.uid) return;
    known.delete(key);
    onEvent({ type: 'delete', kind, object });
  };

  const spec = options.listWatch(kind);
  /** The informer's list, diffed against what we knew: whatever is missing (or another incarnation) is gone. */
  const list = async () => {
    const result = await spec.list();
    const listed = new Map(result.items.map((object) => [keyOf(object), object.metadata?.uid]));
    for (const [key, object] of known) if (listed.get(key) !== object.metadata?.uid) remove(object);
    failures = 0;
    synced = true;
    options.onListed?.(kind);
    return result;
  };

  function restart() {
    clearTimeout(retry);
    void informer?.stop();
    if (stopped) return;
    // The whole spec: a field selector is what RBAC by resource name lets watch (the guard's one CRD).
    const current = options.makeInformer({ ...spec, list });
    informer = current;
    // Callbacks of an informer we replaced (its stop() reports an abort as an error) are ignored.
    const live =
      <A extends unknown[]>(fn: (...args: A) => void) =>
      (...args: A) => {
        if (informer === current) fn(...args);
      };
    current.on('add', live(upsert));
    current.on('update', live(upsert));
    current.on('delete', live(remove));
    current.on('error', live(failed));
    current.start().catch(live(failed));
  }

  function failed(error: unknown) {
    synced = false;
    const delayMs = backoffDelay(options.backoff, failures++);
    logger.warn({ err: error, delayMs }, 'informer stopped on an error; restarting with a fresh list');
    options.onError?.(kind, error);
    void informer?.stop();
    informer = undefined;
    clearTimeout(retry);
    retry = setTimeout(restart, delayMs);
  }

  return {
    kind,
    known,
    synced: () => synced,
    restart,
    replay: (visit: (event: SourceEvent<K>) => void) =>
      known.forEach((object) => visit({ type: 'upsert', kind, object })),
    async stop() {
      stopped = true;
      clearTimeout(retry);
      const last = informer;
      informer = undefined;
      await last?.stop();
    },
  };
}
