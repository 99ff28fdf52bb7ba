// The pusher's two batched activities: a whole Translation is pushed (or deleted) in one activity, in order, with
// a heartbeat after each resource, so a Translation costs a constant number of history events whatever its size,
// and a retry resumes after the last resource done. Both use the Translation's record of what it pushed, which
// is what makes removing a resource, or changing one MidoNet cannot update, safe (seed 000's first two limits).
// A small Translation's record travels with its workflow; a large one's (sent by reference) is read from and
// written to its `status.childResources` here, so no payload grows with the Translation.
import { Context } from '@temporalio/activity';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { Provenance, TranslationIndex } from '../kubernetes/translation-index';
import type { RecordedResource, TranslationRecords } from '../kubernetes/translation-record';
import { openFence, settlesLater, type FenceChange, type UnsettledWrite } from '../../model/fence';
import type { TranslationReference } from '../../model/translation/model';
import type { BackendChanged, ResourceRef } from '../../model/messages';
import { Reason } from '../../model/vocabulary';
import { ANNOTATIONS, type BackendResource, type PushedResource } from '../../model/translation/types';
import type { EventInput } from '../kubernetes/events';
import type { RecordTranslationStatusInput } from '../kubernetes/translations';
import { describeDiff, knownCause } from './adoption';
import { identify, settlingUnanswered, type MidonetClient } from './client';
import type { FieldDiff } from './compare';
import { midonetFailure, type MidonetFailureDetails } from './errors';
import {
  byIdOnly,
  claimRefusal,
  conflictRefusal,
  findingOf,
  fromRecord,
  idOf,
  idsOf,
  observeFirst,
  onlyIfAsAsked,
  preRecord,
  previousRecord,
  pushedEntry,
  record,
  recordedAs,
  recordOf,
  removedIds,
  staleResources,
  stillFound,
  toDelete,
  type FoundAsAsked,
  type OwnerOf,
} from './push-plan';
import { invalidTranslation, validateResources } from './validate';
import {
  afterFailedPush,
  outcomeOf,
  PUSH_PROGRESS,
  parseProgress,
  type PushProgress,
} from '../../model/translation/push-progress';
import type { DeletionGuard } from '../deletion-guard';

export interface PushInput {
  /** Who asks, for messages: `translation/<ns>/<name>`. */
  owner: string;
  resources: BackendResource[];
  /** What this Translation pushed before (its workflow's record). */
  previous: PushedResource[];
  /**
   * The Translation pushed: the push reports on it (its record, Ready and Synced, the attempt's fence: one status
   * write), and reads from the API server what it says (a large Translation's resources, or its record).
   */
  reference?: TranslationReference;
  /** The generation of `resources` when they are given (one read by reference is the one read). */
  generation?: number;
  /**
   * The last heartbeat of a push of this Translation that was lost (its worker went with its last attempt): for a
   * record kept in the status, what it made, found made by someone else or may have written, at its generation.
   */
  lostPush?: PushProgress;
}

export interface PushResult {
  pushed: PushedResource[];
  /** Resources of `previous` no longer wanted, deleted in reverse order. */
  removed: PushedResource[];
  /** Resources MidoNet cannot update in place that were deleted and created again. */
  recreated: string[];
  /** Other Translations told that resources they name were created or removed. */
  notified: number;
  /** The record was written to `status.childResources` (a Translation sent by reference): `pushed` and `removed` are empty. */
  recordInStatus: boolean;
  /** Resources in MidoNet after the push. */
  count: number;
  /** The generation of the resources pushed, when they were read from the API server (sent by reference). */
  generation?: number;
  /** Resources it found in MidoNet exactly as asked and took over without a write (left by midonet-kubernetes, or a lost workflow). */
  adopted?: number;
  /** Resources it found in MidoNet with another body and made right (keys). */
  corrected?: string[];
  /** With the record in status: the first `NAMED_RESOURCES` resources in MidoNet, for a workflow's view. */
  named?: ResourceRef[];
}

export interface DeleteInput {
  owner: string;
  /** The workflow's record of what this Translation pushed (push-plan.ts toDelete says what of it is deleted). */
  resources: PushedResource[];
  /** An operator's `cleanup --mode force`: a resource MidoNet refuses to delete is recorded as failed and skipped. */
  force?: boolean;
  /**
   * Its record is read from here too. What was removed is not written back: every caller lets the Translation go
   * right after (its finalizer), and the record goes with it; a failure before that leaves the record as it was, and
   * the retry deletes it all again (a resource already gone counts as removed).
   */
  reference?: TranslationReference;
}

/**
 * A missing parent or referenced object usually belongs to another Translation not pushed yet (a Pod's port needs
 * its Node's bridge; a Node's address routes need the router port of its main Translation, pushed by a sibling
 * workflow at the same time): midonet-kubernetes retries those, and so do we, until the retries run out and the
 * machine shows `stuck`. MidoNet answers 400, not 404, for a route whose next-hop port does not exist (ref §1.4).
 */
function waitForOtherTranslations(error: unknown, resource: BackendResource): never {
  if (!(error instanceof ApplicationFailure)) throw error;
  const missing = error.type === 'MidonetParentMissing' || error.type === 'MidonetReferenceMissing';
  const routeWithoutPort =
    error.type === 'MidonetValidation' && resource.kind === 'Route' && resource.body.includes('"nextHopPort"');
  if (missing || routeWithoutPort)
    throw midonetFailure(
      'MidonetDependencyMissing',
      error.message,
      error.details?.[0] as MidonetFailureDetails | undefined,
    );
  // MidoNet only says the host is in no tunnel zone; what puts it in one is its Node's annotation.
  if (error.type === 'MidonetConflict' && resource.kind === 'HostInterfacePort') {
    const hint = `host ${resource.parent} joins a tunnel zone through its Node's annotation ${ANNOTATIONS.tunnelEndpointIP}: is it set, and its Node-Tunnel-Endpoint Translation pushed?`;
    throw midonetFailure(
      'MidonetConflict',
      `${error.message}; ${hint}`,
      error.details?.[0] as MidonetFailureDetails | undefined,
    );
  }
  throw error;
}

type Corrected = { resource: BackendResource; diff: FieldDiff[] };

const findings = (adopted: string[], corrected: Corrected[]) => ({
  ...(adopted.length ? { adopted: adopted.length } : {}),
  ...(corrected.length
    ? { corrected: corrected.slice(0, NOTICE_IDS).map(({ resource }) => identify(resource).key) }
    : {}),
});

/** A refusal no retry can change (a 4xx, a bad resource), as opposed to a backend that may recover. */
const isRefusal = (error: unknown) => error instanceof ApplicationFailure && error.nonRetryable;

/**
 * The other Translations, as the worker's watch of them knows them (activities/kubernetes/translation-index.ts):
 * who owns a resource, and whom to tell when resources they name change under them.
 */
export interface Neighbours {
  index: TranslationIndex;
  /** The watch has listed every Translation: an owner not in the index does not exist. */
  synced(): boolean;
  /** Signals `backendChanged` to these pusher workflows; a workflow that does not run is skipped. */
  notify(workflowIds: string[], notice: BackendChanged): Promise<void>;
  /** A Translation's resources and record, read from and written to the API server (large Translations). */
  records: TranslationRecords;
  /** Records a Kubernetes Event on the Translation of this pusher workflow (`translation/<ns>/<name>`). */
  announce(owner: string, event: EventInput): Promise<void>;
  /** Who wrote that Translation, read from the API server now (the watch may not have seen Steward's latest apply yet). */
  provenance(owner: string): Promise<Provenance | undefined>;
  /** Writes a Translation's status (activities/kubernetes/translations.ts): how a push reports. */
  report(status: RecordTranslationStatusInput): Promise<unknown>;
}

export interface PushDeps {
  client: MidonetClient;
  /** Without them (a worker without Kubernetes) no claim is checked and nobody is told. */
  neighbours?: Neighbours;
  /** The guard against mass deletion, asked before a Translation's resources are deleted (none without Kubernetes). */
  guard?: DeletionGuard;
}

const NOTICE_IDS = 20;

/**
 * At most this many of an object's MidoNet resources are named in its workflow (its Temporal UI page and `steward
 * status`); the rest are counted. A Node's or a Pod's are all named; a large Service's are listed whole in its
 * Translations' status, which the workflow does not carry. A push names its first ones (`named`).
 */
export const NAMED_RESOURCES = 20;
const SYNC_WAIT_MS = 10_000;

/**
 * The activity's progress as its heartbeat (model/translation/push-progress.ts): `resumeAt`, where an earlier attempt
 * stopped, and which resources before it were found someone else's; `done(n, foreign)` after each resource; `alive()`
 * while one is waited for (a retry resumes at the last `done`); `writing()` once resources are pushed. An attempt the
 * server gave up on (its heartbeat timed out while it ran on), or its workflow called off (a deletion), learns it from
 * a heartbeat and stops at the next resource: writing on, it would race what replaced it. A write it is waiting on is
 * waited out first (`alive` does not stop it), so that nothing of it lands after it has stopped. A failure carries the
 * progress too (`failed`): the workflow records what the push made, found, or may have written. An earlier attempt's
 * heartbeat is resumed only when it pushed the same resources: those the workflow gave, or the same `generation` of
 * those read by reference (another generation's indices name other ones). A retry's progress says it is one
 * (`resumed`): what the attempts before it wrote past its `done` may be in MidoNet.
 */
function heartbeats(generation?: number) {
  const ctx = Context.current();
  const heartbeat = parseProgress(ctx.info.heartbeatDetails);
  const earlier = heartbeat?.generation === generation ? heartbeat : undefined;
  const resumed = ctx.info.attempt > 1;
  const progress: PushProgress = {
    ...(earlier ?? { done: 0, foreign: [], ...(generation === undefined ? {} : { generation }) }),
    writing: false,
    ...(resumed ? { resumed } : {}),
  };
  const resumeAt = progress.done;
  const foundForeign = new Set(progress.foreign);
  // A local activity (an object's own push) has no heartbeat: its retry starts over, which every step allows.
  const alive = () => {
    if (!ctx.info.isLocal) ctx.heartbeat({ ...progress });
  };
  return {
    resumeAt,
    /** This attempt is a retry: what the attempts before it wrote may be past `resumeAt`. */
    resumed,
    /** How far this push got, as its heartbeat says. */
    now: (): PushProgress => ({ ...progress, foreign: [...progress.foreign] }),
    /** An earlier attempt found the resource at this index made by someone else. */
    foundForeign: (index: number) => foundForeign.has(index),
    writing: () => {
      progress.writing = true;
    },
    done: (n: number, foreign = false) => {
      if (foreign) progress.foreign.push(n - 1);
      progress.done = n;
      ctx.cancellationSignal.throwIfAborted();
      alive();
    },
    alive,
    /** The error, with how far this push got among its details (an ApplicationFailure as the SDK would make it). */
    failed: (error: unknown): unknown => {
      // The final heartbeat is sent however throttled (the SDK flushes it with the failure): a retry resumes here.
      alive();
      if (error instanceof ApplicationFailure)
        return ApplicationFailure.create({
          type: error.type ?? undefined,
          message: error.message,
          nonRetryable: error.nonRetryable ?? undefined,
          category: error.category ?? undefined,
          details: [...(error.details ?? []), { [PUSH_PROGRESS]: progress }],
          cause: error.cause,
        });
      if (!(error instanceof Error) || ctx.cancellationSignal.aborted) return error;
      return ApplicationFailure.create({
        type: error.name,
        message: error.message,
        details: [{ [PUSH_PROGRESS]: progress }],
        cause: error,
      });
    },
  };
}

/** Who owns what is only known once the watch has listed every Translation. */
async function neighboursListed(neighbours: Neighbours | undefined, owner: string): Promise<void> {
  for (let waited = 0; neighbours && !neighbours.synced(); waited += 200) {
    if (waited >= SYNC_WAIT_MS)
      throw ApplicationFailure.retryable(
        `${owner}: the worker's watch of Translations has not listed them yet`,
        'TranslationsNotListed',
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Who else owns a resource key, as the watch knows it now (nobody, without Kubernetes). */
const ownerOf =
  (neighbours: Neighbours | undefined, owner: string, asked?: Provenance): OwnerOf =>
  (key) =>
    neighbours?.index.ownerOf(key, owner, asked);

/**
 * Refuses a Translation listing another's resources (push-plan.ts claimRefusal), once the watch knows them all. One
 * the watch has not seen yet (its owner's workflow just applied it) is ranked as the API server has it.
 */
async function refuseClaimed(
  neighbours: Neighbours | undefined,
  owner: string,
  resources: BackendResource[],
  current: () => Promise<Provenance | undefined>,
) {
  if (!neighbours) return;
  await neighboursListed(neighbours, owner);
  const refusal =
    claimRefusal(owner, resources, ownerOf(neighbours, owner)) &&
    claimRefusal(owner, resources, ownerOf(neighbours, owner, await unseenAs(neighbours, owner, current)));
  if (refusal) throw refusal;
}

/** A Translation the watch has not seen yet, as the API server has it, for its rank; nothing when the watch knows it. */
const unseenAs = (neighbours: Neighbours, owner: string, current: () => Promise<Provenance | undefined>) =>
  neighbours.index.provenanceOf(owner) ? Promise.resolve(undefined) : current();

/**
 * Tells each Translation that yielded resources to this one (TranslationIndex.yielding: it pushed them first, by hand,
 * and Steward derives them for this one's object), with an Event on both; told, it pushes again and is refused them.
 */
async function takeOver({ owner, neighbours, current }: Attempt, pushed: PushedResource[]): Promise<number> {
  if (!neighbours) return 0;
  const held = pushed.map((p) => p.key);
  // Read from the API server only when another records one of them (rarely).
  const asked = held.some((key) => neighbours.index.recordedByOthers(key, owner))
    ? await unseenAs(neighbours, owner, current)
    : undefined;
  const yielded = neighbours.index.yielding(held, owner, asked);
  for (const [other, keys] of yielded) {
    const shown = listed(keys);
    const events: [string, EventInput][] = [
      [
        owner,
        {
          type: 'Normal',
          reason: 'ResourceTakenOver',
          message: `${keys.length} resources ${other} had pushed are Steward's translation of this Translation's object, and now its own: ${shown}`,
        },
      ],
      [
        other,
        {
          type: 'Warning',
          reason: 'ResourceYielded',
          message: `${keys.length} resources this Translation pushed are what Steward's translation derives for ${owner}'s object, and now its own; this Translation is refused them while it lists them: ${shown}`,
        },
      ],
    ];
    for (const [on, event] of events) await announceOne(neighbours, on, event);
    const ids = idsOf(pushed.filter((p) => keys.includes(p.key)));
    await neighbours.notify([other], { by: owner, ids: ids.slice(0, NOTICE_IDS) });
  }
  return yielded.size;
}

/**
 * Tells the Translations that name these IDs (for created ones, those they concern: TranslationIndex.mentioning).
 * Telling is what keeps them truthful until their next drift check, so a notice that cannot be delivered fails the
 * activity, which is retried (every step before it is idempotent) rather than lost.
 */
async function tell(neighbours: Neighbours | undefined, owner: string, ids: string[], created: boolean) {
  if (!neighbours || ids.length === 0) return 0;
  const targets = neighbours.index.mentioning(ids, owner, { created });
  if (targets.length > 0) await neighbours.notify(targets, { by: owner, ids: ids.slice(0, NOTICE_IDS) });
  return targets.length;
}

/** The Translation as the API server has it, for a workflow that does not carry it. */
async function stored(neighbours: Neighbours | undefined, owner: string, reference: TranslationReference) {
  if (!neighbours)
    throw ApplicationFailure.nonRetryable(
      `${owner} is sent by reference, but this worker has no Kubernetes access to read it`,
      'TranslationUnreadable',
    );
  const found = await neighbours.records.read(reference.ref, reference.uid);
  // Gone, or another incarnation: its workflow hears of it and stops; nothing may be pushed or deleted meanwhile.
  if (!found)
    throw ApplicationFailure.retryable(
      `${owner} (uid ${reference.uid}) is no longer in the API server`,
      'TranslationGone',
    );
  return {
    generation: reference.readResources ? found.generation : undefined,
    resources: reference.readResources ? found.resources : undefined,
    record: reference.readRecord ? found.record.map(fromRecord) : [],
    unsettledUntil: found.unsettledUntil,
  };
}

/**
 * Waits until a lost local attempt's writes can have landed (its fence, `status.unsettledWrites`), before anything is
 * deleted: a write landing after the deletion would leave a resource nobody records. A local activity waits a few
 * seconds at most, else fails retryably (its workflow's finalization waits with a timer instead: activities/object.ts).
 */
async function settled(owner: string, until: string | undefined, alive: () => void): Promise<void> {
  const wait = until ? Date.parse(until) - Date.now() : 0;
  if (wait <= 0) return;
  if (Context.current().info.isLocal && settlesLater(until, Date.now()))
    throw ApplicationFailure.retryable(
      `${owner}: a push attempt lost with its worker may still have writes landing in MidoNet until ${until}`,
      'WritesUnsettled',
    );
  for (let left = wait; left > 0; left -= 5_000) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, 5_000)));
    alive();
  }
}

/** Tells, on the Translation, what a push took over (no write) and what it made right, with the known cause. */
async function announce(
  neighbours: Neighbours | undefined,
  owner: string,
  { adopted, foreign, corrected }: Pick<Pushed, 'adopted' | 'foreign' | 'corrected'>,
) {
  if (!neighbours) return;
  const name = owner.split('/').at(-1) ?? owner;
  const events: EventInput[] = [];
  if (foreign.length > 0)
    events.push({
      type: 'Normal',
      reason: 'FoundForeign',
      message: `${foreign.length} resources found in MidoNet as this Translation asks, made by someone else (Steward's translation did not write this Translation): used as they are, never deleted by it: ${listed(foreign)}`,
    });
  if (adopted.length > 0) {
    const shown = listed(adopted);
    events.push({
      type: 'Normal',
      reason: 'Adopted',
      message: `${adopted.length} resources found in MidoNet exactly as this Translation asks, taken over without a write: ${shown}`,
    });
  }
  for (const { resource, diff } of corrected) {
    const cause = knownCause(name, resource, diff);
    events.push({
      type: 'Normal',
      reason: 'Corrected',
      message: `${identify(resource).key} held another body in MidoNet and was made right: ${describeDiff(diff)}${cause ? `; cause: ${cause}` : ''}`,
    });
  }
  for (const event of events) await announceOne(neighbours, owner, event);
}

/** An Event only tells; the push is done and recorded either way. */
const announceOne = (neighbours: Neighbours, on: string, event: EventInput) =>
  neighbours.announce(on, event).catch((error: unknown) => {
    Context.current().log.warn(`${on}: Event ${event.reason} not recorded: ${(error as Error).message}`);
  });

const listed = (keys: string[]) =>
  keys.slice(0, 10).join(', ') + (keys.length > 10 ? ` and ${keys.length - 10} more` : '');

/**
 * Why a `pending` resource is left rather than deleted: not in MidoNet, or held otherwise than any push of this
 * Translation asked while it was pending (not what a push cut short would have made: someone else's); undefined when
 * it is there as one of them. One known by its ID alone cannot be compared, and is left.
 */
async function leftAs(midonet: MidonetClient, resource: BackendResource): Promise<'absent' | 'foreign' | undefined> {
  if (byIdOnly(resource)) return 'foreign';
  const candidates = [resource.body, ...((resource as Partial<PushedResource>).alsoAsked ?? [])];
  for (const body of candidates) {
    const seen = await midonet.observe({ ...resource, body });
    if (!seen.exists) return 'absent';
    if (seen.upToDate) return undefined;
  }
  return 'foreign';
}

async function removeInReverse(
  midonet: MidonetClient,
  resources: BackendResource[],
  startAt: number,
  progress: (done: number) => void,
  force = false,
): Promise<PushedResource[]> {
  const removed: PushedResource[] = [];
  const reversed = [...resources].reverse();
  for (let i = startAt; i < reversed.length; i++) {
    const resource = reversed[i]!;
    const known = () => (byIdOnly(resource) ? (resource as PushedResource) : record(resource, 'synced'));
    const left = onlyIfAsAsked(resource) ? await leftAs(midonet, resource) : undefined;
    if (left) {
      removed.push({ ...known(), state: left });
      progress(i + 1);
      continue;
    }
    try {
      const { outcome } = byIdOnly(resource)
        ? await midonet.removeById(resource.kind, idOf(resource))
        : await midonet.remove(resource);
      removed.push({ ...known(), state: outcome === 'deleted' ? 'deleted' : 'absent' });
    } catch (error) {
      if (!force || !isRefusal(error)) throw error;
      Context.current().log.warn(
        `force: ${resource.kind} ${idOf(resource)} could not be deleted and is left: ${(error as Error).message}`,
      );
      removed.push({ ...known(), state: 'failed' });
    }
    progress(i + 1);
  }
  return removed;
}

/** One push attempt's fixed context. */
interface Attempt {
  owner: string;
  neighbours?: Neighbours;
  midonet: MidonetClient;
  progress: ReturnType<typeof heartbeats>;
  /** Who wrote the Translation, as the watch knew it when the resources' turn came. */
  provenance?: Provenance;
  /** Who wrote it, from the API server when the watch does not say it is Steward's (asked once, when it decides). */
  current: () => Promise<Provenance | undefined>;
}

/** Asks the API server at most once: the watch may lag behind the apply that made these resources Steward's. */
function currentOnce(neighbours: Neighbours | undefined, owner: string, provenance: Provenance | undefined) {
  let asked: Promise<Provenance | undefined> | undefined;
  return () =>
    provenance?.translated
      ? Promise.resolve(provenance)
      : (asked ??= (neighbours?.provenance(owner) ?? Promise.resolve(undefined)).then((read) => read ?? provenance));
}

/**
 * Whose a resource found as asked with no record of it is (push-plan.ts FoundAsAsked): on a retry, what this push
 * recorded as pending may be what an earlier attempt made. Without Kubernetes, nobody else's is known.
 */
async function whoseFound(attempt: Attempt, maybeOurs: boolean): Promise<FoundAsAsked> {
  const current = attempt.neighbours && (await attempt.current());
  if (!attempt.neighbours || current?.translated || current?.takeover) return 'adoptable';
  return maybeOurs ? 'ours' : 'others';
}

/**
 * A resource this Translation asked for, not recorded as pushed, that a push of it may have made: one a failed push
 * was writing (`tried`), or, on a retry, any still pending (the heartbeat an attempt resumes from may lag behind what
 * the attempt before it wrote).
 */
const maybeOurs = (entry: PushedResource | undefined, resumed: boolean) =>
  entry?.state === 'pending' && (entry.tried === true || resumed);

/** What pushing the resources did and found, for the report. */
interface Pushed {
  pushed: PushedResource[];
  recreated: string[];
  created: BackendResource[];
  adopted: string[];
  /** Found as asked, made by someone else: used, never deleted by this Translation. */
  foreign: string[];
  corrected: Corrected[];
}

/** An object MidoNet cannot update in place: replaced where it is this Translation's, refused otherwise. */
async function replaceOrRefuse(
  { owner, neighbours, midonet, provenance, current }: Attempt,
  resource: BackendResource,
  mine: PushedResource | undefined,
  conflict: { diff: FieldDiff[]; reason: string },
): Promise<void> {
  const translated =
    (provenance?.translated ?? false) || (mine === undefined && ((await current())?.translated ?? false));
  const recordedByOther = neighbours?.index.recordedByOthers(identify(resource).key, owner) ?? false;
  const refusal = conflictRefusal(owner, resource, conflict, {
    recorded: mine !== undefined,
    translated,
    recordedByOther,
  });
  if (refusal) throw refusal;
  await midonet.replace(resource);
}

/** Pushes one resource (observe where it may be there, then ensure); says whether it was adopted or found foreign. */
async function pushOne(
  attempt: Attempt,
  resource: BackendResource,
  { mine, maybeOurs }: { mine: PushedResource | undefined; maybeOurs: boolean },
  done: Pushed,
): Promise<'adopted' | 'foreign' | undefined> {
  const { midonet } = attempt;
  const dependencies = (error: unknown) => waitForOtherTranslations(error, resource);
  const observed = observeFirst(mine, attempt.provenance?.foreign)
    ? await midonet.observe(resource).catch(dependencies)
    : undefined;
  const result = await midonet.ensure(resource, observed).catch(dependencies);
  const { key } = identify(resource);
  if (result.outcome === 'conflict') {
    await replaceOrRefuse(attempt, resource, mine, result);
    done.recreated.push(key);
    done.created.push(resource);
  }
  if (result.outcome === 'created') done.created.push(resource);
  const found = result.outcome === 'unchanged' && !mine ? await whoseFound(attempt, maybeOurs) : undefined;
  const { adopted, foreign, correction } = findingOf(result, mine, resource, found);
  if (adopted) done.adopted.push(key);
  if (foreign) done.foreign.push(key);
  if (correction) done.corrected.push({ resource, diff: correction });
  return adopted ? 'adopted' : foreign && 'foreign';
}

/** Pushes the resources in order, from where an earlier attempt stopped; what it created is told even on failure. */
async function pushAll(attempt: Attempt, resources: BackendResource[], previous: PushedResource[]): Promise<Pushed> {
  const mineOf = recordedAs(previous);
  const entries = new Map(previous.map((p) => [p.key, p]));
  const done: Pushed = { pushed: [], recreated: [], created: [], adopted: [], foreign: [], corrected: [] };
  const { progress } = attempt;
  progress.writing();
  try {
    for (const [index, resource] of resources.entries()) {
      const entry = entries.get(identify(resource).key);
      let found: 'adopted' | 'foreign' | undefined;
      if (index >= progress.resumeAt) {
        const known = { mine: mineOf(resource), maybeOurs: maybeOurs(entry, progress.resumed) };
        found = await pushOne(attempt, resource, known, done);
        progress.done(index + 1, found === 'foreign');
      } else found = progress.foundForeign(index) ? 'foreign' : stillFound(entry, resource);
      done.pushed.push(pushedEntry(resource, found));
    }
  } catch (error) {
    // What this attempt created before it failed is told now: the retry resumes after it, and a dependent waiting
    // for it would otherwise wait for its own slow retry.
    await tell(attempt.neighbours, attempt.owner, idsOf(done.created), true).catch((notTold: unknown) => {
      Context.current().log.warn(`${attempt.owner}: created resources not told: ${(notTold as Error).message}`);
    });
    throw error;
  }
  return done;
}

/**
 * How a push reports on its Translation (with a reference): in one status write, its record, Ready and Synced, and
 * the removal of the attempt's fence. Nothing without Kubernetes (nobody to tell).
 */
interface Reporter {
  /** The record of what is in MidoNet, with Ready and Synced naming the generation pushed, and a Synced Event. */
  pushed(record: RecordedResource[], count: number): Promise<void>;
  /**
   * Ready and Synced False with the reason; `touched`: what was recorded synced is no longer claimed so; `record`: the
   * record the failed push leaves (afterFailedPush), when it keeps one in the status.
   */
  failed(error: unknown, touched: boolean, record?: RecordedResource[]): Promise<void>;
}

function reporterOf(
  neighbours: Neighbours | undefined,
  reference: TranslationReference | undefined,
  generation: number,
  fence: UnsettledWrite | undefined,
): Reporter | undefined {
  if (!neighbours || !reference) return undefined;
  const { ref, uid } = reference;
  const settles = fence ? { settles: fence.attempt } : {};
  return {
    async pushed(record, count) {
      const message = `pushed ${count} MidoNet resources (generation ${generation})`;
      const synced = { status: 'True' as const, reason: Reason.Synced, message };
      await neighbours.report({
        ref,
        uid,
        generation,
        childResources: record,
        ...settles,
        ready: synced,
        synced,
        event: { type: 'Normal', reason: Reason.Synced, message },
      });
    },
    async failed(error, touched, record) {
      const reason = error instanceof ApplicationFailure ? (error.type ?? Reason.Stuck) : Reason.Stuck;
      const failed = { status: 'False' as const, reason, message: (error as Error).message };
      await neighbours.report({
        ref,
        uid,
        generation,
        ...settles,
        ...(record ? { childResources: record } : touched ? { unverified: true } : {}),
        ready: failed,
        synced: failed,
      });
    },
  };
}

/** Announces what was adopted and corrected, tells the Translations concerned, reports, and says so. */
async function report(
  attempt: Attempt,
  done: Pushed,
  { removed, stale }: { removed: PushedResource[]; stale: PushedResource[] },
  { reporter, inStatus }: { reporter: Reporter | undefined; inStatus: boolean },
): Promise<PushResult> {
  const { owner, neighbours } = attempt;
  const { pushed, recreated, created, adopted, corrected } = done;
  await announce(neighbours, owner, done);
  const notified =
    (await tell(neighbours, owner, idsOf(created), true)) +
    (await tell(neighbours, owner, removedIds(removed, stale, attempt.progress.resumed), false));
  // Given up, it says nothing: the attempt after it reports, and this report, landing later, could name an older push.
  Context.current().cancellationSignal.throwIfAborted();
  await reporter?.pushed(recordOf(pushed), pushed.length);
  const yielded = await takeOver(attempt, pushed);
  return {
    pushed: inStatus ? [] : pushed,
    removed: inStatus ? [] : removed,
    recreated: inStatus ? recreated.slice(0, NOTICE_IDS) : recreated,
    notified: notified + yielded,
    recordInStatus: inStatus,
    count: pushed.length,
    ...findings(adopted, corrected),
    ...(inStatus ? { named: pushed.slice(0, NAMED_RESOURCES).map(({ kind, id }) => ({ kind, id })) } : {}),
  };
}

/**
 * Its workflow gave this attempt up (a deletion called it off, the local activity timed out, or its task went to
 * another worker): the attempt after it reports. A report of this one, landing later, would say what MidoNet no longer
 * holds (chaos seed 10: a failure written 20 s after the retry had pushed and said Ready, left there since).
 */
const givenUp = () => Context.current().cancellationSignal.aborted;

async function pushTranslation(
  { client, neighbours }: PushDeps,
  { owner, resources: given, previous: carried, reference, generation, lostPush }: PushInput,
): Promise<PushResult> {
  const reads = reference && (reference.readResources || reference.readRecord);
  const fromApi = reads ? await stored(neighbours, owner, reference) : undefined;
  const resources = fromApi?.resources ?? given;
  // A Translation sent by reference keeps its record in its status: written before anything is pushed (what may
  // be created is pending), and again once all of it is; with the attempt's fence when it runs as a local activity.
  const inStatus = reference?.readResources === true;
  const read = inStatus ? fromApi?.generation : undefined;
  const recorded = previousRecord(carried, fromApi?.record, () => neighbours?.index.recordOf(owner) ?? []);
  // A lost push left its pre-record: what it reached, by its last heartbeat, is told apart from what it never did.
  const previous =
    lostPush && read !== undefined && lostPush.generation === read
      ? afterFailedPush(recorded, outcomeOf(resources, lostPush, true))
      : recorded;
  const fence = inStatus ? fenceOf(Context.current().info.isLocal) : undefined;
  const writeRecord = (record: RecordedResource[] | undefined, change: FenceChange | undefined) =>
    neighbours!.records.write(reference!.ref, reference!.uid, record, change);
  // The generation comes from the same read as the resources: the report names what was pushed, not what came since.
  const pushedGeneration = fromApi?.generation ?? generation;
  const reporter = reporterOf(neighbours, reference, pushedGeneration ?? 0, fence);
  const progress = heartbeats(read);
  let touched = false;
  let preRecorded: RecordedResource[] | undefined;
  try {
    // The whole Translation is checked before any of it is pushed: nothing half-pushed for a bad resource.
    const problems = validateResources(resources);
    if (problems.length > 0) throw invalidTranslation(owner, problems);
    await refuseClaimed(neighbours, owner, resources, currentOnce(neighbours, owner, undefined));
    const midonet = settlingUnanswered(client, progress.alive);
    const stale = staleResources(resources, previous, ownerOf(neighbours, owner));
    touched = true;
    if (inStatus) {
      preRecorded = preRecord(previous, resources);
      await writeRecord(preRecorded, fence && { add: fence });
    }
    const removed = await removeInReverse(midonet, stale, 0, () => progress.done(progress.resumeAt));
    // As the watch knows it when the resources' turn comes (after the pre-record, so most often seen by then).
    const provenance = neighbours?.index.provenanceOf(owner);
    const current = currentOnce(neighbours, owner, provenance);
    const attempt: Attempt = { owner, neighbours, midonet, progress, provenance, current };
    const done = await pushAll(attempt, resources, previous);
    const result = await report(attempt, done, { removed, stale }, { reporter, inStatus });
    return pushedGeneration === undefined ? result : { ...result, generation: pushedGeneration };
  } catch (error) {
    // Its writes have all been answered or waited out (settlingUnanswered): nothing of it can land any more, and its
    // fence goes, with the failure unless the attempt was given up (the one after it reports).
    // A record kept in the status says what this push made, found and may have written, as a workflow's record does
    // (push-progress.ts): the next push, a new activity, reads it from there.
    const record =
      preRecorded &&
      recordOf(afterFailedPush(preRecorded.map(fromRecord), outcomeOf(resources, progress.now(), false)));
    const told =
      reporter && !givenUp()
        ? reporter.failed(error, touched, record)
        : fence && writeRecord(undefined, { remove: fence.attempt });
    await told?.catch(() => undefined);
    throw progress.failed(error);
  }
}

/**
 * A local attempt runs inside a workflow task: lost with its worker, its workflow goes on without waiting for it
 * (a regular activity's workflow waits for its heartbeat timeout), so its fence says until when its writes may land.
 */
function fenceOf(local: boolean): UnsettledWrite | undefined {
  return local ? openFence(randomUUID(), Date.now()) : undefined;
}

/** Deletes in reverse order what the Translation recorded (push-plan.ts toDelete says what). */
async function deleteTranslation(
  { client, neighbours, guard }: PushDeps,
  { owner, resources: given, force, reference: sent }: DeleteInput,
): Promise<{ removed: PushedResource[]; notified: number; count: number }> {
  // Every deletion of a Translation's resources comes here (its owner's finalization, its pusher's, `force`).
  await guard?.check(owner);
  const progress = heartbeats();
  // A push by reference writes its record in the status from its start (what it may create is pending), also when
  // it never reported: that record is what is deleted.
  const reference = sent && { ...sent, readRecord: sent.readRecord || sent.readResources };
  const fromApi = reference?.readRecord ? await stored(neighbours, owner, reference) : undefined;
  await settled(owner, fromApi?.unsettledUntil, progress.alive);
  await neighboursListed(neighbours, owner);
  const deletable = toDelete(given, fromApi, ownerOf(neighbours, owner));
  const removed = await removeInReverse(
    settlingUnanswered(client, progress.alive),
    deletable,
    progress.resumeAt,
    progress.done,
    force,
  );
  // What MidoNet removed with them (a bridge's ports, a port's routes) may be another Translation's: it is told.
  const notified = await tell(neighbours, owner, removedIds(removed, deletable, progress.resumed), false);
  return { removed: reference ? [] : removed, notified, count: removed.length };
}

export function createPushActivities(deps: PushDeps) {
  return {
    pushTranslation: (input: PushInput): Promise<PushResult> => pushTranslation(deps, input),
    deleteTranslation: (input: DeleteInput) => deleteTranslation(deps, input),
  };
}

export type PushActivities = ReturnType<typeof createPushActivities>;
