import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { TASK_QUEUE } from '../../workflows/naming';
import type { Backoff } from './backoff';
import { createHandler, type SignalClient } from './handler';
import { defaultWorkflowTypes, WATCHED_KINDS, type WatchedKind } from './kinds';
import { createLeaderElector, type LeaseOptions } from './leader';
import { createChangePredicate } from './predicate';
import { observe, observePeerPodOfPod } from './projection';
import { createWorkQueue } from './queue';
import { createSource, informerFactory, kubernetesListWatch, type SourceEvent } from './source';

export interface StarterOptions {
  kubeConfig: k8s.KubeConfig;
  /** A `@temporalio/client` Client (only `workflow.signalWithStart` and `workflow.getHandle` are used). */
  temporalClient: SignalClient;
  /** The workers' task queue, where the workflows it starts run. Default `TASK_QUEUE`. */
  taskQueue?: string;
  /** Kubernetes namespace whose namespaced objects are watched; all namespaces when absent. Nodes are always watched. */
  namespace?: string;
  /** Names this starter in the Lease and in logs; unique per process (e.g. the pod name). */
  identity: string;
  /** Full re-list period. Default 10 minutes. */
  resyncMs?: number;
  /** Coalescing window per workflow id. Default 200 ms. */
  debounceMs?: number;
  lease?: LeaseOptions;
  logger: Logger;
  /** MidoNet tenant of the cluster's objects, given to their workflows. Default: the default tenant. */
  tenant?: string;
  /** Workflow type per kind. Default `defaultWorkflowTypes`. */
  workflowTypes?: Readonly<Record<WatchedKind, string>>;
  /** Kinds to watch. Default all of `WATCHED_KINDS`. */
  kinds?: readonly WatchedKind[];
  /** Pods of these runtime classes are peer pods: their lifecycle also makes a cloud VM. Default `kata-remote`. */
  peerPodRuntimeClasses?: readonly string[];
}

export interface StarterStats {
  /** Watch and re-list events seen (on followers too). */
  events: number;
  signalsSent: number;
  /** Events dropped by the predicate: the projection had not changed. */
  suppressed: number;
  /** Observations replaced by a newer one of the same object before they were sent. */
  coalesced: number;
  /** Failed signal attempts and informer failures. */
  errors: number;
  isLeader: boolean;
  /** Observations waiting or in flight. */
  pending: number;
  /** Objects known per kind. */
  known: Record<string, number>;
}

export interface Starter {
  start(): void;
  stop(): Promise<void>;
  stats(): StarterStats;
}

/** The runtime class cloud-api-adaptor installs for peer pods. */
export const DEFAULT_PEERPOD_RUNTIME_CLASSES = ['kata-remote'];

const SIGNAL_BACKOFF: Backoff = { initialMs: 200, maxMs: 30_000 };
const INFORMER_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 60_000 };

/**
 * The starter: source → projection → predicate → queue → handler, gated by the Lease. Every instance keeps its
 * informers running; only the leader sends. Leadership changing hands resets the predicate and the new leader sends
 * every object it knows once, since it cannot know what the previous leader got out before it stopped.
 */
export function createStarter(options: StarterOptions): Starter {
  const { kubeConfig, temporalClient, namespace, identity, logger } = options;
  const log = logger.child({ component: 'starter', identity });
  const counters = { events: 0, signalsSent: 0, suppressed: 0, coalesced: 0, errors: 0 };

  const predicate = createChangePredicate();
  const elector = createLeaderElector({
    api: kubeConfig.makeApiClient(k8s.CoordinationV1Api),
    identity,
    lease: options.lease,
    logger: log,
    onChange(leading) {
      predicate.reset();
      queue.clear();
      if (leading) source.replay();
    },
  });
  const handler = createHandler({
    client: temporalClient,
    taskQueue: options.taskQueue ?? TASK_QUEUE,
    workflowTypes: options.workflowTypes ?? defaultWorkflowTypes,
    tenant: options.tenant,
    backoff: SIGNAL_BACKOFF,
    logger: log,
    isLeader: () => elector.isLeader(),
    onSent: () => counters.signalsSent++,
    onFailure(obs, _error, permanent) {
      counters.errors++;
      if (permanent) predicate.forget(obs);
    },
  });
  const queue = createWorkQueue({ debounceMs: options.debounceMs ?? 200, work: handler.drain, onCoalesced: () => counters.coalesced++ });
  const source = createSource({
    kinds: options.kinds ?? WATCHED_KINDS,
    listWatch: kubernetesListWatch(kubeConfig, namespace),
    makeInformer: informerFactory(kubeConfig),
    resyncMs: options.resyncMs ?? 10 * 60_000,
    backoff: INFORMER_BACKOFF,
    logger: log,
    onEvent,
    onError: () => counters.errors++,
  });

  const peerPodRuntimeClasses = new Set(options.peerPodRuntimeClasses ?? DEFAULT_PEERPOD_RUNTIME_CLASSES);
  function onEvent(event: SourceEvent) {
    counters.events++;
    if (!elector.isLeader()) return;
    const gone = event.type === 'delete';
    const peerPod = event.kind === 'Pod' ? observePeerPodOfPod(event.object, peerPodRuntimeClasses, gone) : undefined;
    for (const obs of [observe(event.kind, event.object, gone), ...(peerPod ? [peerPod] : [])]) {
      if (predicate.accept(obs)) queue.offer(obs);
      else counters.suppressed++;
    }
  }

  return {
    start() {
      log.info({ namespace: namespace ?? '(all)' }, 'starting');
      source.start();
      elector.start();
    },
    async stop() {
      // Nothing leaves after the Lease is released: the next leader must be the only sender.
      await queue.stop();
      await elector.stop();
      await source.stop();
      log.info(counters, 'stopped');
    },
    stats: () => ({ ...counters, isLeader: elector.isLeader(), pending: queue.size(), known: source.counts() }),
  };
}
