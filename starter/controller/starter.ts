import * as k8s from '@kubernetes/client-node';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { Observation } from '../../model/messages';
import { TASK_QUEUE, workflowId } from '../../model/naming';
import type { Backoff } from '../../platform/backoff';
import { createHandler, type Handler, type HandlerOptions, type SignalClient } from './handler';
import type { EndpointsSource, WatchedKind } from '../../platform/kubernetes/kinds';
import { installation, type Backend } from '../../platform/backends';
import { defaultWorkflowTypes } from './workflow-types';
import { createLeaderElector, type LeaderElector, type LeaseOptions, type LeaseRound } from './leader';
import { createStarterMetrics, type StarterMetrics } from './metrics';
import { afterTakeover, isNews, recordDelivery, type DeliveryTable } from './delivery';
import {
  awaitsPeerPodDeletion,
  heldTranslation,
  observe,
  observePeerPodOfPod,
  ownerOfTranslation,
  ownerToRepair,
  ownLivePeerPod,
  releasedPeerPod,
} from './projection';
import { createWorkQueue, type WorkQueue } from './queue';
import { createMassDeletionGuard, type MassDeletionGuard, type MassDeletionGuardOptions } from './deletion-guard';
import type { WaveSettings } from '../../model/deletion-guard';
import { createRepairs } from './repair';
import { endpointsFromSlices } from './endpoint-slices';
import { createServedClouds, type ServedClouds } from './served-clouds';
import { createOperatorRequests, type OperatorRequests } from './operator-requests';
import {
  createSource,
  informerFactory,
  kubernetesListWatch,
  type Source,
  type SourceEvent,
  type SourceOptions,
} from '../../platform/kubernetes/informer';

export interface StarterOptions {
  kubeConfig: k8s.KubeConfig;
  /** A `@temporalio/client` Client (only `workflow.signalWithStart` and `workflow.getHandle` are used). */
  temporalClient: SignalClient;
  /** The workers' task queue, where the workflows it starts run. Default `TASK_QUEUE`. */
  taskQueue?: string;
  /** The cluster's prefix of the workflow ids it starts and repairs (`inCluster`); none when absent. */
  clusterId?: string;
  /** Kubernetes namespace whose namespaced objects are watched; all namespaces when absent. Nodes are always watched. */
  namespace?: string;
  /** Where Endpoints are read from: v1 Endpoints (the default) or the EndpointSlices that stand for them. */
  endpointsFrom?: EndpointsSource;
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
  /** What the installation drives (platform/backends.ts): what is watched and which kinds get workflows. Default both. */
  backends?: readonly Backend[];
  /** Kinds to watch, of those the backends watch (a test's narrower scope). Default all of them. */
  kinds?: readonly WatchedKind[];
  /**
   * Pods of these runtime classes are peer pods: their lifecycle also makes a cloud VM. Default none: Steward makes VMs
   * only where asked to (beside cloud-api-adaptor, which makes them itself, it only tracks the PeerPods).
   */
  peerPodRuntimeClasses?: readonly string[];
  /**
   * Clouds whose PeerPods it serves (`spec.cloudProvider`): a PeerPod of another is left to its own controller, no
   * workflow started for it. Every PeerPod when absent (callers that are no installation; run.ts always gives it).
   */
  peerPodClouds?: readonly string[];
  /** Where its metrics go (metrics.ts); a registry of its own when absent. */
  registry?: Registry;
  /** When a wave of Translation deletions trips the guard against mass deletion (deletion-guard.ts). */
  massDeletion?: WaveSettings;
}

export interface StarterStats {
  /** Watch and re-list events seen (on followers too). */
  events: number;
  signalsSent: number;
  /** Observations not sent: their workflow had them already (the projection had not changed). */
  suppressed: number;
  /** Changes of an object that waited already: sent with it, as one. */
  coalesced: number;
  /** Failed signal attempts and informer failures. */
  errors: number;
  /** Objects sent again by a re-list because their workflow was not running (terminated, lost with its namespace), and gone objects whose workflow still ran. */
  repaired: number;
  isLeader: boolean;
  /** Keys and Observations waiting or in flight. */
  pending: number;
  /** Objects known per kind. */
  known: Record<string, number>;
  /** Every kind listed, and no watch failed since: what it knows is all there is. */
  synced: boolean;
  /** The Lease loop's last round. */
  leaseRound?: LeaseRound;
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
/** How long a peer pod's deletion waits for its PeerPod's (projection.ts awaitsPeerPodDeletion); then it goes alone. */
const PEERPOD_DELETION_HOLD_MS = 5_000;

/**
 * The Observations of one source event: the object's where its kind has a lifecycle of its own (a Pod has none without
 * MidoNet), and its peer pod's when the object is a peer pod's Pod and peer pods are served. None for what a workflow
 * wrote itself: a Translation that an object's workflow pushes (its owner's: translationOwner)
 * has no workflow of its own and is observed through its owner (see `ownerToRepair`); a live PeerPod Steward wrote is
 * its peer pod workflow's own record (`ownLivePeerPod`), and one gone after its Pod is what that workflow let go
 * (`releasedPeerPod`). None either for a PeerPod of a cloud not served here
 * (served-clouds.ts).
 */
function observer(
  lifecycles: readonly WatchedKind[],
  runtimeClasses: readonly string[] | undefined,
  translationOwnerOf: (event: SourceEvent) => unknown,
  pods: Pick<Source, 'get'>,
  served: ServedClouds,
): (event: SourceEvent) => Observation[] {
  const peerPodRuntimeClasses = new Set(runtimeClasses ?? DEFAULT_PEERPOD_RUNTIME_CLASSES);
  const writtenByAWorkflow = (event: SourceEvent) =>
    translationOwnerOf(event) !== undefined ||
    ownLivePeerPod(event, pods, peerPodRuntimeClasses) ||
    releasedPeerPod(event, pods);
  return (event) => {
    if (writtenByAWorkflow(event) || served.leftAlone(event)) return [];
    const gone = event.type === 'delete';
    const peerPod =
      event.kind === 'Pod' && lifecycles.includes('PeerPod')
        ? observePeerPodOfPod(event.object, peerPodRuntimeClasses, gone)
        : undefined;
    return [
      ...(lifecycles.includes(event.kind) ? [observe(event.kind, event.object, gone)] : []),
      ...(peerPod ? [peerPod] : []),
    ];
  };
}

function createSignalHandler(
  options: StarterOptions,
  logger: Logger,
  callTimeoutMs: number,
  hooks: Pick<HandlerOptions, 'isLeader' | 'onSent' | 'onFailure'>,
): Handler {
  return createHandler({
    client: options.temporalClient,
    taskQueue: options.taskQueue ?? TASK_QUEUE,
    clusterId: options.clusterId,
    workflowTypes: options.workflowTypes ?? defaultWorkflowTypes,
    tenant: options.tenant,
    backoff: SIGNAL_BACKOFF,
    callTimeoutMs,
    logger,
    ...hooks,
  });
}

function createObjectSource(
  options: StarterOptions,
  kinds: readonly WatchedKind[],
  logger: Logger,
  hooks: Pick<SourceOptions, 'onEvent' | 'onError' | 'onListed' | 'onResync'>,
): Source {
  const endpointsFrom = options.endpointsFrom ?? 'Endpoints';
  const slices = endpointsFrom === 'EndpointSlices' ? endpointsFromSlices(hooks.onEvent, logger) : undefined;
  const source = createSource({
    kinds,
    listWatch: kubernetesListWatch(options.kubeConfig, options.namespace, endpointsFrom),
    makeInformer: informerFactory(options.kubeConfig),
    resyncMs: options.resyncMs ?? 10 * 60_000,
    backoff: INFORMER_BACKOFF,
    logger,
    ...hooks,
    onEvent: slices?.onEvent ?? hooks.onEvent,
  });
  return slices?.over(source) ?? source;
}

/**
 * What a send's outcome changes: the counters, the metrics, and the delivery table. A send that failed for good
 * leaves no row: the object is news at its next change or re-list.
 */
function sendOutcomes(
  counters: Counters,
  metrics: StarterMetrics,
  deliveries: { table: DeliveryTable },
  log: Logger,
): Pick<HandlerOptions, 'onSent' | 'onFailure'> {
  return {
    onSent(obs, seconds, runId) {
      // What each workflow was told, for an operator asking why one never heard of a change.
      log.debug(
        { workflowId: workflowId(obs.ref), uid: obs.uid, deleting: obs.deleting, gone: obs.gone, runId },
        'delivered',
      );
      counters.signalsSent++;
      metrics.sendDone(obs.ref.kind, 'sent', seconds);
      recordDelivery(deliveries.table, obs, Date.now(), runId);
    },
    onFailure(obs, _error, permanent, seconds) {
      counters.errors++;
      metrics.sendDone(obs.ref.kind, permanent ? 'permanent_error' : 'transient_error', seconds);
    },
  };
}

/** What the source reports: informer restarts and complete lists. */
function sourceOutcomes(counters: Counters, metrics: StarterMetrics): Pick<SourceOptions, 'onError' | 'onListed'> {
  return {
    onError(kind) {
      counters.errors++;
      metrics.informerRestarted(kind);
    },
    onListed: metrics.listed,
  };
}

/** Where Translations are watched (not in a peer-pods-only installation), a wave of their deletions is counted. */
const massDeletionGuard = (
  options: StarterOptions,
  kinds: readonly WatchedKind[],
  registry: Registry,
  log: Logger,
  readings: Pick<MassDeletionGuardOptions, 'isLeader' | 'total'>,
) =>
  kinds.includes('Translation')
    ? createMassDeletionGuard({
        kubeConfig: options.kubeConfig,
        settings: options.massDeletion,
        registry,
        log,
        ...readings,
      })
    : undefined;

/**
 * The kinds watched, of the installation's (narrowed by `kinds`), and of those the kinds whose objects get a workflow
 * of their own: the repair's scope too (a `pod/` run left from a MidoNet installation is not a peer-pods one's to tell).
 */
function watchedOf(options: StarterOptions) {
  const installed = installation(options.backends);
  const kinds = installed.watched.filter((kind) => !options.kinds || options.kinds.includes(kind));
  return { kinds, lifecycles: installed.lifecycles.filter((kind) => kinds.includes(kind)) };
}

/** An object's key in the queue, and in the informer's cache: `<kind>/<namespace>/<name>`. */
const objectKey = ({ kind, object }: SourceEvent) =>
  `${kind}/${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

/**
 * Between source and queue, as controller-runtime's event handlers: a change enqueues the object's key for each
 * workflow it feeds, when the Observation is news to it (delivery.ts); the queue reads the object from the cache when
 * it is sent (`resolve`). A deletion is told with the object it carries: nothing is left in the cache to read.
 */
function createFeed(pieces: {
  source: Pick<Source, 'get'>;
  observationsOf: (event: SourceEvent) => Observation[];
  queue: Pick<WorkQueue, 'offer' | 'tell'>;
  deliveries: { table: DeliveryTable };
  counters: Pick<Counters, 'suppressed'>;
  log: Logger;
}) {
  const { source, observationsOf, queue, deliveries, counters, log } = pieces;
  const tell = (obs: Observation) => queue.tell(workflowId(obs.ref), obs);
  return {
    tell,
    offer(event: SourceEvent, count = true) {
      const observations = observationsOf(event);
      log.trace(
        { kind: event.kind, key: objectKey(event), type: event.type, uid: event.object.metadata?.uid },
        `event: ${observations.length} observations`,
      );
      for (const obs of observations) {
        if (!isNews(deliveries.table, obs)) {
          if (count) counters.suppressed++;
        } else if (event.type === 'delete') tell(obs);
        else queue.offer(workflowId(obs.ref), objectKey(event));
      }
    },
    resolve(id: string, key: string): Observation[] {
      const [kind, namespace, ...name] = key.split('/') as [WatchedKind, string, ...string[]];
      const object = source.get(kind, namespace || undefined, name.join('/'));
      return object ? observationsOf({ type: 'upsert', kind, object }).filter((obs) => workflowId(obs.ref) === id) : [];
    },
  };
}

/**
 * The starter: source → feed (projection, predicate) → queue of keys → handler → delivery table, gated by the Lease. Every instance keeps its
 * informers running; only the leader sends. A leader that acquires the Lease sends what it knows (see `onChange`) and
 * at once checks the running workflows against it (see `createRepairs`), since deletions it saw while not leading
 * were dropped.
 */
export function createStarter(options: StarterOptions): Starter {
  const { namespace, identity } = options;
  const log = options.logger.child({ component: 'starter', identity });
  const counters: Counters = { events: 0, signalsSent: 0, suppressed: 0, coalesced: 0, errors: 0, repaired: 0 };
  const callTimeoutMs = options.callTimeoutMs ?? 10_000;
  const lifetime = new AbortController();
  // Every bounded call of a re-check listens on it (one per workflow described): many more than the warning's 10.
  setMaxListeners(0, lifetime.signal);

  const { kinds, lifecycles } = watchedOf(options);
  const registry = options.registry ?? new Registry();
  const isLeader = () => elector.isLeader();
  const metrics = createStarterMetrics(registry, { kinds, isLeader, queueDepth: () => queue.size() });
  const deliveries = { table: new Map() as DeliveryTable };
  const elector = createLeaderElector({
    api: options.kubeConfig.makeApiClient(k8s.CoordinationV1Api),
    identity,
    lease: options.lease,
    logger: log,
    onChange(leading, continued) {
      queue.clear();
      if (leading) {
        // After a lapse of its own, what it delivered is still what the workflows have: it only sends what it dropped.
        // After another starter's term it cannot know what that one got out, so it sends every object it knows once.
        deliveries.table = afterTakeover(deliveries.table, continued);
        source.replay();
      }
      repairs.leadershipChanged(leading);
    },
  });
  const handler = createSignalHandler(options, log, callTimeoutMs, {
    isLeader,
    ...sendOutcomes(counters, metrics, deliveries, log),
  });
  const queue = createWorkQueue({
    debounceMs: options.debounceMs ?? 200,
    resolve: (id, key) => feed.resolve(id, key),
    isNews: (obs) => isNews(deliveries.table, obs),
    work: handler.drain,
    onCoalesced: () => counters.coalesced++,
    hold: { awaits: (pending) => awaitsPeerPodDeletion(source, pending), ms: PEERPOD_DELETION_HOLD_MS },
  });
  const source = createObjectSource(options, kinds, log, {
    onEvent,
    ...sourceOutcomes(counters, metrics),
    onResync: () => void repairs.resync(),
  });
  const guard = massDeletionGuard(options, kinds, registry, log, {
    isLeader,
    total: () => source.counts().Translation ?? 0,
  });
  const translationOwnerOf = ownerOfTranslation(kinds);
  const requests = createOperatorRequests({ ...options, client: options.temporalClient, isLeader, logger: log });
  const served = createServedClouds(options.peerPodClouds, log, metrics);
  const observationsOf = observer(lifecycles, options.peerPodRuntimeClasses, translationOwnerOf, source, served);
  const feed = createFeed({ source, observationsOf, queue, deliveries, counters, log });
  function onEvent(event: SourceEvent) {
    counters.events++;
    guard?.observe(event);
    if (!isLeader()) return;
    requests.observe(event);
    feed.offer(event);
    // Unchanged for the predicate, but news for its workflow: sent whatever was sent before.
    const repair = ownerToRepair(event, translationOwnerOf(event), source);
    if (repair) feed.tell(repair);
  }
  const repairs = createRepairs({
    client: options.temporalClient,
    callTimeoutMs,
    lifetime: lifetime.signal,
    deliveries,
    source,
    observationsOf,
    tell: feed.tell,
    resendNews: () => source.replay((event) => feed.offer(event, false)),
    heldOf: (event) => heldTranslation(event, translationOwnerOf(event)),
    start: handler.start,
    scope: { kinds: lifecycles, namespace, clusterId: options.clusterId },
    isLeader,
    backoff: INFORMER_BACKOFF,
    counters,
    logger: log,
  });

  return lifecycle({ elector, queue, source, guard, requests }, lifetime, counters, log, namespace);
}

type Counters = Pick<StarterStats, 'events' | 'signalsSent' | 'suppressed' | 'coalesced' | 'errors' | 'repaired'>;

interface Pieces {
  elector: LeaderElector;
  queue: WorkQueue;
  source: Source;
  guard?: MassDeletionGuard;
  requests: OperatorRequests;
}

/** Starts and stops the pieces in their order, and reads their numbers. */
function lifecycle(
  { elector, queue, source, guard, requests }: Pieces,
  lifetime: AbortController,
  counters: Counters,
  log: Logger,
  namespace: string | undefined,
): Starter {
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
      await requests.stop();
      await elector.stop();
      await source.stop();
      await guard?.stop();
      log.info(counters, 'stopped');
    },
    stats: () => ({
      ...counters,
      isLeader: elector.isLeader(),
      pending: queue.size(),
      known: source.counts(),
      synced: source.synced(),
      leaseRound: elector.lastRound(),
    }),
  };
}
