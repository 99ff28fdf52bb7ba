import * as k8s from '@kubernetes/client-node';
import { setMaxListeners } from 'node:events';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import { K8sKind, K8sName, K8sNamespace, K8sUID } from '../../workflows/search-attributes';
import type { Logger } from 'pino';
import type { Observation } from '../../workflows/messages';
import { TASK_QUEUE, workflowId } from '../../workflows/naming';
import { PEERPOD_FINALIZER, REFERRERS_FINALIZER, TRANSLATION_FINALIZER } from '../../workflows/vocabulary';
import { backoffDelay, sleep, type Backoff } from './backoff';
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
  /** Deadline of each call to Temporal. Default 10 s. */
  callTimeoutMs?: number;
  lease?: LeaseOptions;
  logger: Logger;
  /** MidoNet tenant of the cluster's objects, given to their workflows. Default: the default tenant. */
  tenant?: string;
  /** Workflow type per kind. Default `defaultWorkflowTypes`. */
  workflowTypes?: Readonly<Record<WatchedKind, string>>;
  /** Kinds to watch. Default all of `WATCHED_KINDS`. */
  kinds?: readonly WatchedKind[];
  /**
   * Pods of these runtime classes are peer pods: their lifecycle also makes a cloud VM. Default none: Steward makes VMs
   * only where asked to (beside cloud-api-adaptor, which makes them itself, it only tracks the PeerPods).
   */
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
  /** Objects sent again by a re-list because their workflow was not running (terminated, lost with its namespace), and gone objects whose workflow still ran. */
  repaired: number;
  /** Observations let through but not yet confirmed as delivered. */
  unconfirmed: number;
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
export const DEFAULT_PEERPOD_RUNTIME_CLASSES: string[] = [];
/** The runtime class of peer pods in cloud-api-adaptor's installs: what `steward up` and `steward demo` make VMs for. */
export const KATA_REMOTE = 'kata-remote';

const SIGNAL_BACKOFF: Backoff = { initialMs: 200, maxMs: 30_000 };
const INFORMER_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 60_000 };
const STEWARD_FINALIZERS = new Set([TRANSLATION_FINALIZER, REFERRERS_FINALIZER, PEERPOD_FINALIZER]);

/** A live object needs its workflow running; one being deleted only while a finalizer of ours waits for it. */
const needsWorkflow = (obs: Observation) =>
  !obs.gone && (!obs.deleting || obs.finalizers.some((f) => STEWARD_FINALIZERS.has(f)));

/**
 * The starter: source → projection → predicate → queue → handler, gated by the Lease. Every instance keeps its
 * informers running; only the leader sends. A leader that acquires the Lease sends what it knows (see `onChange`) and
 * at once checks the running workflows against it, since deletions it saw while not leading were dropped.
 */
export function createStarter(options: StarterOptions): Starter {
  const { kubeConfig, temporalClient, namespace, identity, logger } = options;
  const log = logger.child({ component: 'starter', identity });
  const counters = { events: 0, signalsSent: 0, suppressed: 0, coalesced: 0, errors: 0, repaired: 0 };
  const callTimeoutMs = options.callTimeoutMs ?? 10_000;
  const lifetime = new AbortController();
  // Every bounded call of a re-check listens on it (one per workflow described): many more than the warning's 10.
  setMaxListeners(0, lifetime.signal);
  /** Counts leadership changes: a catch-up belongs to the term it started in. */
  let term = 0;

  const predicate = createChangePredicate();
  const elector = createLeaderElector({
    api: kubeConfig.makeApiClient(k8s.CoordinationV1Api),
    identity,
    lease: options.lease,
    logger: log,
    onChange(leading, continued) {
      queue.clear();
      term++;
      if (!leading) return;
      // After a lapse of its own, what it delivered is still what the workflows have: it only sends what it dropped.
      // After another starter's term it cannot know what that one got out, so it sends every object it knows once.
      if (continued) predicate.forgetUnconfirmed();
      else predicate.reset();
      source.replay();
      void catchUp(term);
    },
  });
  const handler = createHandler({
    client: temporalClient,
    taskQueue: options.taskQueue ?? TASK_QUEUE,
    workflowTypes: options.workflowTypes ?? defaultWorkflowTypes,
    tenant: options.tenant,
    backoff: SIGNAL_BACKOFF,
    callTimeoutMs,
    logger: log,
    isLeader: () => elector.isLeader(),
    onSent(obs) {
      counters.signalsSent++;
      predicate.confirm(obs);
    },
    onFailure(obs, _error, permanent) {
      counters.errors++;
      if (permanent) predicate.forget(obs);
    },
  });
  const queue = createWorkQueue({
    debounceMs: options.debounceMs ?? 200,
    work: handler.drain,
    onCoalesced: () => counters.coalesced++,
  });
  const watchedKinds = options.kinds ?? WATCHED_KINDS;
  const source = createSource({
    kinds: watchedKinds,
    listWatch: kubernetesListWatch(kubeConfig, namespace),
    makeInformer: informerFactory(kubeConfig),
    resyncMs: options.resyncMs ?? 10 * 60_000,
    backoff: INFORMER_BACKOFF,
    logger: log,
    onEvent,
    onError: () => counters.errors++,
    onResync: () => void resync(),
  });

  const peerPodRuntimeClasses = new Set(options.peerPodRuntimeClasses ?? DEFAULT_PEERPOD_RUNTIME_CLASSES);
  function observationsOf(event: SourceEvent): Observation[] {
    const gone = event.type === 'delete';
    const peerPod = event.kind === 'Pod' ? observePeerPodOfPod(event.object, peerPodRuntimeClasses, gone) : undefined;
    return [observe(event.kind, event.object, gone), ...(peerPod ? [peerPod] : [])];
  }
  function offer(obs: Observation) {
    if (predicate.accept(obs)) queue.offer(obs);
    else counters.suppressed++;
  }
  function onEvent(event: SourceEvent) {
    counters.events++;
    if (elector.isLeader()) observationsOf(event).forEach(offer);
  }

  /**
   * The running workflows and their search attributes. The list may be long (one workflow per object), so it is
   * bounded by its progress, not its length: it ends when no entry came for three call deadlines.
   */
  async function runningWorkflows(): Promise<Map<string, TypedSearchAttributes>> {
    const { workflow } = temporalClient;
    const running = new Map<string, TypedSearchAttributes>();
    const stalled = new AbortController();
    const watchdog = setTimeout(
      () => stalled.abort(new Error('listing the running workflows stalled')),
      3 * callTimeoutMs,
    );
    try {
      await workflow.withAbortSignal(AbortSignal.any([lifetime.signal, stalled.signal]), async () => {
        for await (const execution of workflow.list({ query: 'ExecutionStatus="Running"' })) {
          running.set(execution.workflowId, execution.typedSearchAttributes);
          watchdog.refresh();
        }
      });
    } finally {
      clearTimeout(watchdog);
    }
    return running;
  }

  /**
   * Level-triggered repair: an object whose delivery was confirmed but whose workflow is not running (terminated by
   * hand, lost with its namespace) is sent again, which starts it anew; a running workflow whose object no list shows
   * is told it is gone. Visibility lags (Elasticsearch refreshes every second), so what it does not list as running
   * is described before it is sent again. True when the check was complete.
   */
  async function repair(): Promise<boolean> {
    const { workflow } = temporalClient;
    try {
      const running = await runningWorkflows();
      predicate.forgetEnded((id) => running.has(id));
      // Only a complete picture of what exists may say that something does not.
      const synced = source.synced();
      const candidates: Observation[] = [];
      const known = new Set<string>();
      source.replay((event) => {
        for (const obs of observationsOf(event)) {
          known.add(workflowId(obs.ref));
          if (predicate.confirmedAt(obs) !== undefined && needsWorkflow(obs) && !running.has(workflowId(obs.ref)))
            candidates.push(obs);
        }
      });
      if (synced) for (const [id, attributes] of running) if (!known.has(id)) tellGone(id, attributes);
      for (const obs of candidates) {
        const id = workflowId(obs.ref);
        const status = await workflow.withAbortSignal(
          AbortSignal.any([lifetime.signal, AbortSignal.timeout(callTimeoutMs)]),
          async () => {
            try {
              return (await workflow.getHandle(id).describe()).status.name;
            } catch (error) {
              if (error instanceof WorkflowNotFoundError) return 'NOT_FOUND';
              throw error;
            }
          },
        );
        if (status === 'RUNNING' || predicate.confirmedAt(obs) === undefined) continue;
        log.warn({ workflowId: id, uid: obs.uid, status }, 'object has no running workflow: sending it again');
        counters.repaired++;
        predicate.forget(obs);
        offer(obs);
      }
      return synced;
    } catch (error) {
      counters.errors++;
      log.warn({ err: error }, 'could not check that every object has its workflow');
      return false;
    }
  }

  /** At every periodic re-list: what was let through but never delivered is let through again, then the repair. */
  async function resync() {
    predicate.forgetUnconfirmed();
    if (elector.isLeader()) await repair();
  }

  /**
   * A new leader repairs at once, not at the next re-list: deletions seen while it did not lead (a lapsed renewal on
   * a busy machine, another starter's term, no starter at all) were dropped, and the replay only sends what exists.
   * Only the running workflows show what is gone meanwhile. Retried until complete while the term lasts.
   */
  async function catchUp(ofTerm: number) {
    for (let attempt = 0; term === ofTerm && !lifetime.signal.aborted && elector.isLeader(); attempt++) {
      // Before every kind is listed the picture is not complete: no list of the running workflows yet.
      if (source.synced() && (await repair())) return;
      await sleep(backoffDelay(INFORMER_BACKOFF, attempt), lifetime.signal);
    }
  }

  /**
   * A running workflow whose object no list shows was deleted while no watch saw it (the starter was down): it is
   * told so, as a watch would have told it. Peer pods are left to their own checks (a Pod and a PeerPod feed one).
   */
  function tellGone(id: string, attributes: TypedSearchAttributes) {
    const kind = attributes.get(K8sKind) as WatchedKind | undefined;
    const name = attributes.get(K8sName);
    const uid = attributes.get(K8sUID);
    const objectNamespace = attributes.get(K8sNamespace);
    if (!kind || !name || !uid || kind === 'PeerPod' || !watchedKinds.includes(kind)) return;
    if (kind !== 'Node' && namespace !== undefined && objectNamespace !== namespace) return;
    const gone = observe(
      kind,
      { metadata: { name, uid, ...(objectNamespace ? { namespace: objectNamespace } : {}) } },
      true,
    );
    // Told already (the watch saw the deletion): the workflow is finishing, not waiting.
    if (workflowId(gone.ref) !== id || predicate.confirmedAt(gone) !== undefined) return;
    log.warn({ workflowId: id, uid }, 'object is gone but its workflow runs: telling it');
    counters.repaired++;
    offer(gone);
  }

  return {
    start() {
      log.info({ namespace: namespace ?? '(all)' }, 'starting');
      source.start();
      elector.start();
    },
    async stop() {
      lifetime.abort();
      // Nothing leaves after the Lease is released: the next leader must be the only sender.
      await queue.stop();
      await elector.stop();
      await source.stop();
      log.info(counters, 'stopped');
    },
    stats: () => ({
      ...counters,
      unconfirmed: predicate.unconfirmed(),
      isLeader: elector.isLeader(),
      pending: queue.size(),
      known: source.counts(),
    }),
  };
}
