import { WorkflowNotFoundError } from '@temporalio/client';
import type { TypedSearchAttributes } from '@temporalio/common';
import type { Logger } from 'pino';
import type { Observation } from '../../model/messages';
import { clusterFilter, inCluster, workflowId } from '../../model/naming';
import { K8sKind, K8sName, K8sNamespace, K8sUID } from '../../model/search-attributes';
import { finalizerNames, PEERPOD_FINALIZER, REFERRERS_FINALIZER, TRANSLATION_FINALIZER } from '../../model/vocabulary';
import type { Source, SourceEvent } from '../../platform/kubernetes/informer';
import { backoffDelay, sleep, type Backoff } from '../../platform/backoff';
import type { SignalClient } from './handler';
import type { WatchedKind } from '../../platform/kubernetes/kinds';
import { delivered, withoutEnded, type DeliveryTable } from './delivery';
import { observe, type HeldTranslation } from './projection';

/** The object a running workflow was started for, as its search attributes name it. */
export interface RunningObject {
  kind?: string;
  name?: string;
  uid?: string;
  namespace?: string;
}

/** What this starter watches: a running workflow outside it is not its to tell. */
export interface WatchScope {
  kinds: readonly WatchedKind[];
  /** The watched namespace of namespaced kinds; all when absent. */
  namespace?: string;
  /** The cluster's prefix of its workflow ids: another cluster's workflows sharing the namespace are not its own. */
  clusterId?: string;
}

export interface RepairInput {
  /** Running workflows by id. */
  running: ReadonlyMap<string, RunningObject>;
  /** The Observations of every object the source knows. */
  live: readonly Observation[];
  /** Every kind is listed: only a complete picture of what exists may say that something does not. */
  synced: boolean;
  /** Its delivery was confirmed (and it has not changed since). */
  confirmed: (obs: Observation) => boolean;
  scope: WatchScope;
  /** The Translations being deleted that our finalizer holds for their owner's workflow (see `HeldTranslation`). */
  held?: readonly HeldTranslation[];
}

export interface RepairPlan {
  /** Confirmed objects whose workflow is not listed as running: described, then sent again unless it runs. */
  resend: Observation[];
  /** `gone` Observations for running workflows whose object no list shows, not yet told. */
  gone: Observation[];
  /**
   * Held Translations whose owner's incarnation no workflow serves and no list shows (its workflow failed or was
   * terminated before it finalized them): each is started a workflow of its own, which lets it go as the pusher did.
   */
  orphaned: HeldTranslation[];
}

const STEWARD_FINALIZERS = new Set([TRANSLATION_FINALIZER, ...finalizerNames(REFERRERS_FINALIZER), PEERPOD_FINALIZER]);

/** A live object needs its workflow running; one being deleted only while a finalizer of ours waits for it. */
const needsWorkflow = (obs: Observation): boolean =>
  !obs.gone && (!obs.deleting || obs.finalizers.some((f) => STEWARD_FINALIZERS.has(f)));

/**
 * The `gone` Observation a watch would have sent for a running workflow's object, when this starter watches it and the
 * workflow is that object's. Peer pods are left to their own checks (a Pod and a PeerPod feed one).
 */
export function goneObservation(id: string, object: RunningObject, scope: WatchScope): Observation | undefined {
  const { name, uid, namespace } = object;
  const kind = object.kind as WatchedKind | undefined;
  if (!kind || !name || !uid || kind === 'PeerPod' || !scope.kinds.includes(kind)) return undefined;
  if (kind !== 'Node' && scope.namespace !== undefined && namespace !== scope.namespace) return undefined;
  const gone = observe(kind, { metadata: { name, uid, ...(namespace ? { namespace } : {}) } }, true);
  return workflowId(gone.ref, scope.clusterId) === id ? gone : undefined;
}

/**
 * Which live objects have no running workflow, which running workflows have no live object, and which held
 * Translations have no workflow that will let them go.
 */
export function planRepair({ running, live, synced, confirmed, scope, held = [] }: RepairInput): RepairPlan {
  const idOf = (obs: Observation) => workflowId(obs.ref, scope.clusterId);
  const resend = live.filter((obs) => confirmed(obs) && needsWorkflow(obs) && !running.has(idOf(obs)));
  if (!synced) return { resend, gone: [], orphaned: [] };
  const liveUids = new Set(live.map((obs) => obs.uid));
  const liveIds = new Set(live.map(idOf));
  const orphaned = held.filter(({ owner, observation }) => {
    const ownerId = workflowId(owner, scope.clusterId);
    // A new incarnation's run that this repair starts applies over the held Translation of its own name and lets it
    // go itself: two deletions of it at once could land one after that run pushed the same ids again. What it leaves
    // is the next repair's.
    const successorStarting = liveIds.has(ownerId) && !running.has(ownerId);
    const served = running.get(ownerId)?.uid === owner.uid;
    return !liveUids.has(owner.uid) && !served && !successorStarting && !running.has(idOf(observation));
  });
  const known = new Set([...live, ...held.map((h) => h.observation)].map(idOf));
  const gone = [...running]
    .filter(([id]) => !known.has(id))
    .map(([id, object]) => goneObservation(id, object, scope))
    // Told already (the watch saw the deletion): the workflow is finishing, not waiting.
    .filter((obs): obs is Observation => obs !== undefined && !confirmed(obs));
  return { resend, gone, orphaned };
}

const runningObject = (attributes: TypedSearchAttributes): RunningObject => ({
  kind: attributes.get(K8sKind),
  name: attributes.get(K8sName),
  uid: attributes.get(K8sUID),
  namespace: attributes.get(K8sNamespace),
});

type Workflows = SignalClient['workflow'];

/**
 * The running workflows and their objects. The list may be long (one workflow per object), so it is bounded by its
 * progress, not its length: it ends when no entry came for three call deadlines.
 */
async function runningWorkflows(
  workflow: Workflows,
  clusterId: string | undefined,
  lifetime: AbortSignal,
  callTimeoutMs: number,
): Promise<Map<string, RunningObject>> {
  const query = ['ExecutionStatus="Running"', clusterFilter(clusterId)].filter(Boolean).join(' AND ');
  const running = new Map<string, RunningObject>();
  const stalled = new AbortController();
  const watchdog = setTimeout(
    () => stalled.abort(new Error('listing the running workflows stalled')),
    3 * callTimeoutMs,
  );
  try {
    await workflow.withAbortSignal(AbortSignal.any([lifetime, stalled.signal]), async () => {
      for await (const execution of workflow.list({ query })) {
        running.set(execution.workflowId, runningObject(execution.typedSearchAttributes));
        watchdog.refresh();
      }
    });
  } finally {
    clearTimeout(watchdog);
  }
  return running;
}

/** The latest run of a workflow id: its status name (`NOT_FOUND` when there is none) and the UID it serves. */
const latestRun = (workflow: Workflows, id: string, lifetime: AbortSignal, callTimeoutMs: number) =>
  workflow.withAbortSignal(AbortSignal.any([lifetime, AbortSignal.timeout(callTimeoutMs)]), async () => {
    try {
      const described = await workflow.getHandle(id).describe();
      return { status: described.status.name, uid: described.typedSearchAttributes.get(K8sUID) };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return { status: 'NOT_FOUND' };
      throw error;
    }
  });

export interface RepairOptions {
  client: SignalClient;
  /** Deadline of each call to Temporal. */
  callTimeoutMs: number;
  /** Aborted when the starter stops. */
  lifetime: AbortSignal;
  /** What was delivered (delivery.ts): the one table the starter keeps. */
  deliveries: { table: DeliveryTable };
  source: Pick<Source, 'synced' | 'replay'>;
  observationsOf: (event: SourceEvent) => Observation[];
  /** Sends an Observation whatever its workflow was sent before. */
  tell: (obs: Observation) => void;
  /** Sends what the source knows and its workflow has not got (a send that failed for good). */
  resendNews: () => void;
  /** The held Translation of a source event, if it is one (`heldTranslation`). */
  heldOf: (event: SourceEvent) => HeldTranslation | undefined;
  /** Starts the workflow of an Observation's object with it in its input; false when it runs already. */
  start: (obs: Observation) => Promise<boolean>;
  scope: WatchScope;
  isLeader: () => boolean;
  /** Delay between catch-up attempts. */
  backoff: Backoff;
  counters: { errors: number; repaired: number };
  logger: Logger;
}

export interface Repairs {
  /** At every periodic re-list: what the source knows and its workflow has not got is sent, then the repair. */
  resync(): Promise<void>;
  /**
   * Every change of leadership ends the catch-up of the term before; acquiring starts one. A new leader repairs at
   * once, not at the next re-list: deletions seen while it did not lead (a lapsed renewal on a busy machine, another
   * starter's term, no starter at all) were dropped, and the replay only sends what exists. Only the running
   * workflows show what is gone meanwhile. Retried until complete while the term lasts.
   */
  leadershipChanged(leading: boolean): void;
}

/**
 * Level-triggered repair: an object whose delivery was confirmed but whose workflow is not running (terminated by
 * hand, lost with its namespace) is sent again, which starts it anew; a running workflow whose object no list shows
 * was deleted while no watch saw it (the starter was down) and is told so, as a watch would have told it. Visibility
 * lags (Elasticsearch refreshes every second), so what it does not list as running is described before it is sent
 * again.
 */
export function createRepairs(options: RepairOptions): Repairs {
  const { client, callTimeoutMs, lifetime, deliveries, source, tell, counters, logger: log } = options;
  const confirmed = (obs: Observation) => delivered(deliveries.table, obs) !== undefined;
  const { workflow } = client;
  const { clusterId } = options.scope;

  function tellGone(gone: Observation) {
    log.warn(
      { workflowId: workflowId(gone.ref, clusterId), uid: gone.uid },
      'object is gone but its workflow runs: telling it',
    );
    counters.repaired++;
    tell(gone);
  }

  async function resendUnlessRunning(obs: Observation) {
    const id = workflowId(obs.ref, clusterId);
    const { status } = await latestRun(workflow, id, lifetime, callTimeoutMs);
    if (status === 'RUNNING' || !confirmed(obs)) return;
    log.warn({ workflowId: id, uid: obs.uid, status }, 'object has no running workflow: sending it again');
    counters.repaired++;
    tell(obs);
  }

  async function finalizeOrphan({ observation, owner }: HeldTranslation) {
    const ownerId = workflowId(owner, clusterId);
    const run = await latestRun(workflow, ownerId, lifetime, callTimeoutMs);
    if (run.status === 'RUNNING' && run.uid === owner.uid) return;
    const fields = { workflowId: workflowId(observation.ref, clusterId), owner: ownerId, ownerUid: owner.uid };
    if (!(await options.start(observation))) return;
    counters.repaired++;
    log.warn(fields, "Translation held by our finalizer has no workflow of its owner's to let it go: started its own");
  }

  /** One check of the running workflows against the known objects; true when it was complete. */
  async function repair(): Promise<boolean> {
    try {
      const running = await runningWorkflows(workflow, clusterId, lifetime, callTimeoutMs);
      // The table keeps the ids without the cluster's prefix.
      deliveries.table = withoutEnded(deliveries.table, (id) => running.has(inCluster(id, clusterId)));
      const synced = source.synced();
      const live: Observation[] = [];
      const held: HeldTranslation[] = [];
      source.replay((event) => {
        live.push(...options.observationsOf(event));
        const translation = options.heldOf(event);
        if (translation) held.push(translation);
      });
      const plan = planRepair({ running, live, synced, confirmed, scope: options.scope, held });
      plan.gone.forEach(tellGone);
      for (const orphan of plan.orphaned) await finalizeOrphan(orphan);
      for (const obs of plan.resend) await resendUnlessRunning(obs);
      return synced;
    } catch (error) {
      counters.errors++;
      log.warn({ err: error }, 'could not check that every object has its workflow');
      return false;
    }
  }

  /** Counts leadership changes: a catch-up belongs to the term it started in. */
  let term = 0;
  async function catchUp(ofTerm: number) {
    for (let attempt = 0; term === ofTerm && !lifetime.aborted && options.isLeader(); attempt++) {
      // Before every kind is listed the picture is not complete: no list of the running workflows yet.
      if (source.synced() && (await repair())) return;
      await sleep(backoffDelay(options.backoff, attempt), lifetime);
    }
  }

  return {
    async resync() {
      if (!options.isLeader()) return;
      options.resendNews();
      await repair();
    },
    leadershipChanged(leading) {
      term++;
      if (leading) void catchUp(term);
    },
  };
}
