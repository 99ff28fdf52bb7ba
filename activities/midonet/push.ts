// The pusher's two batched activities: a whole Translation is pushed (or deleted) in one activity, in order, with
// a heartbeat after each resource, so a Translation costs a constant number of history events whatever its size,
// and a retry resumes after the last resource done. Both use the Translation's record of what it pushed, which
// is what makes removing a resource, or changing one MidoNet cannot update, safe (seed 000's first two limits).
// A small Translation's record travels with its workflow; a large one's (sent by reference) is read from and
// written to its `status.childResources` here, so no payload grows with the Translation.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Provenance, TranslationIndex } from '../kubernetes/translation-index';
import type { RecordedResource, TranslationRecords } from '../kubernetes/translation-record';
import type { TranslationReference } from '../../workflows/machines/pusher';
import type { BackendChanged } from '../../workflows/messages';
import {
  ANNOTATIONS,
  identifyIfJson,
  type BackendResource,
  type PushedResource,
} from '../../workflows/translation/types';
import type { EventInput } from '../kubernetes/events';
import { classify, conflictReason, describeDiff, knownCause, type Claim } from './adoption';
import { checkResource, identify, settlingUnanswered, type MidonetClient } from './client';
import type { FieldDiff } from './compare';
import { midonetFailure, type MidonetFailureDetails } from './errors';
import { invalidTranslation, validateResources } from './validate';

export interface PushInput {
  /** Who asks, for messages: `translation/<ns>/<name>`. */
  owner: string;
  resources: BackendResource[];
  /** What this Translation pushed before (its workflow's record). */
  previous: PushedResource[];
  /** Read the resources, or the record, from the API server (a large Translation's). */
  reference?: TranslationReference;
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
  /** Resources it found in MidoNet exactly as asked and took over without a write (left by midonet-kubernetes, or a lost workflow). */
  adopted?: number;
  /** Resources it found in MidoNet with another body and made right (keys). */
  corrected?: string[];
}

export interface DeleteInput {
  owner: string;
  /** Deleted in reverse order. */
  resources: BackendResource[];
  /** An operator's `cleanup --mode force`: a resource MidoNet refuses to delete is recorded as failed and skipped. */
  force?: boolean;
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

/**
 * A resource known from a record in `status.childResources` alone: kinds without an ID of their own are identified
 * by parent and body (identify()), so they come back whole; the others come back as their ID (an empty body), which
 * is all a deletion needs (MidonetClient.removeById).
 */
function fromRecord({ kind, id, state }: RecordedResource): PushedResource {
  const slash = id.indexOf('/');
  const [parent, body] = slash < 0 ? ['', ''] : [id.slice(0, slash), id.slice(slash + 1)];
  return {
    kind: kind as PushedResource['kind'],
    parent,
    body,
    id,
    key: `${kind}:${id}`,
    state: state as PushedResource['state'],
  };
}
/** A key of `status.childResources` as the worker's index holds it (`kind:id`). */
function fromKey(key: string): PushedResource {
  const colon = key.indexOf(':');
  return fromRecord({ kind: key.slice(0, colon), id: key.slice(colon + 1), state: 'synced' });
}
const byIdOnly = (resource: BackendResource) => resource.body === '';
function keyOf(resource: BackendResource): string {
  if (byIdOnly(resource)) return `${resource.kind}:${(resource as PushedResource).id}`;
  // Not JSON: never pushed, only ever skipped.
  return identifyIfJson(resource)?.key ?? `${resource.kind}:${resource.parent}/${resource.body}`;
}
const idOf = (resource: BackendResource) =>
  byIdOnly(resource) ? (resource as PushedResource).id : identify(resource).id;

/** `first` then what `second` adds (by key). */
function union<T extends BackendResource>(first: T[], second: T[]): T[] {
  const seen = new Set(first.map(keyOf));
  return [...first, ...second.filter((r) => !seen.has(keyOf(r)))];
}

const asRecord = (resources: BackendResource[], state: string): RecordedResource[] =>
  resources.map((r) => ({ kind: r.kind, id: idOf(r), state }));

const record = (resource: BackendResource, state: PushedResource['state']): PushedResource => ({
  kind: resource.kind,
  parent: resource.parent ?? '',
  body: resource.body,
  ...identify(resource),
  state,
});

const findings = (adopted: string[], corrected: { resource: BackendResource }[]) => ({
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
}

export interface PushDeps {
  client: MidonetClient;
  /** Without them (a worker without Kubernetes) no claim is checked and nobody is told. */
  neighbours?: Neighbours;
}

/** The MidoNet ID a resource has of its own (a body `id`); kinds identified by parent and body have none. */
function ownId(resource: BackendResource): string | undefined {
  const { id } = identify(resource);
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id) ? id : undefined;
}

const NOTICE_IDS = 20;
const SYNC_WAIT_MS = 10_000;

/**
 * The activity's progress as its heartbeat: `resumeAt`, where an earlier attempt stopped; `done(n)` after each
 * resource; `alive()` while one is waited for (a retry resumes at the last `done`). An attempt the server gave up on
 * (its heartbeat timed out while it ran on) learns it from a heartbeat and stops there: writing on, it would race the
 * attempt that replaced it.
 */
function heartbeats() {
  const ctx = Context.current();
  const resumeAt = (ctx.info.heartbeatDetails as number | undefined) ?? 0;
  let at = resumeAt;
  const beat = () => {
    ctx.cancellationSignal.throwIfAborted();
    ctx.heartbeat(at);
  };
  return {
    resumeAt,
    done: (n: number) => {
      at = n;
      beat();
    },
    alive: beat,
  };
}

export function createPushActivities({ client, neighbours }: PushDeps) {
  /** Who owns what is only known once the watch has listed every Translation. */
  async function neighboursListed(owner: string): Promise<void> {
    for (let waited = 0; neighbours && !neighbours.synced(); waited += 200) {
      if (waited >= SYNC_WAIT_MS)
        throw ApplicationFailure.retryable(
          `${owner}: the worker's watch of Translations has not listed them yet`,
          'TranslationsNotListed',
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * One owner per resource (issue 10, defect 1): a resource that another, senior Translation records as pushed is
   * not this one's to push, to delete or to report; it is refused whole, naming the owner, until the owner lets go
   * (its deletion tells this one, which then pushes and owns it).
   */
  async function refuseClaimed(owner: string, resources: BackendResource[]): Promise<void> {
    if (!neighbours) return;
    await neighboursListed(owner);
    const claimed = resources.flatMap((resource) => {
      const { key, id } = identify(resource);
      const other = neighbours.index.ownerOf(key, owner);
      return other ? [`${resource.kind} ${id} (owned by ${other})`] : [];
    });
    if (claimed.length > 0) {
      const shown = claimed.slice(0, 5).join(', ') + (claimed.length > 5 ? ` and ${claimed.length - 5} more` : '');
      throw midonetFailure(
        'ResourceClaimed',
        `${owner}: ${claimed.length} resources are pushed and recorded by another Translation: ${shown}`,
      );
    }
  }

  /**
   * Tells the Translations that name these IDs (for created ones, those they concern: TranslationIndex.mentioning).
   * Telling is what keeps them truthful until their next drift check, so a notice that cannot be delivered fails the
   * activity, which is retried (every step before it is idempotent) rather than lost.
   */
  async function tell(owner: string, ids: string[], created: boolean): Promise<number> {
    if (!neighbours || ids.length === 0) return 0;
    const targets = neighbours.index.mentioning(ids, owner, { created });
    if (targets.length > 0) await neighbours.notify(targets, { by: owner, ids: ids.slice(0, NOTICE_IDS) });
    return targets.length;
  }

  /**
   * What to tell about after removing `removed`: what this attempt deleted, and on a retry everything it may have
   * removed, since an earlier attempt (a worker killed after a delete, before its notice) may have deleted it.
   */
  const removedIds = (removed: PushedResource[], all: BackendResource[]) =>
    Context.current().info.attempt > 1 ? idsOf(all) : idsOf(removed.filter((r) => r.state === 'deleted'));

  /** Another Translation's resource is never removed by this one, even one it listed (it was refused for it). */
  const ownedByAnother = (owner: string, resource: BackendResource) =>
    neighbours?.index.ownerOf(keyOf(resource), owner) !== undefined;

  /** The Translation as the API server has it, for a workflow that does not carry it. */
  async function stored(owner: string, reference: TranslationReference) {
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
      resources: reference.readResources ? found.resources : undefined,
      record: reference.readRecord ? found.record.map(fromRecord) : [],
    };
  }

  /** Tells, on the Translation, what a push took over (no write) and what it made right, with the known cause. */
  async function announce(
    owner: string,
    adopted: string[],
    corrected: { resource: BackendResource; diff: FieldDiff[] }[],
  ): Promise<void> {
    if (!neighbours) return;
    const name = owner.split('/').at(-1) ?? owner;
    const events: EventInput[] = [];
    if (adopted.length > 0) {
      const shown = adopted.slice(0, 10).join(', ') + (adopted.length > 10 ? ` and ${adopted.length - 10} more` : '');
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
    // An Event only tells; the push is done and recorded either way.
    for (const event of events) {
      await neighbours.announce(owner, event).catch((error: unknown) => {
        Context.current().log.warn(`${owner}: Event ${event.reason} not recorded: ${(error as Error).message}`);
      });
    }
  }

  const idsOf = (resources: BackendResource[]) =>
    resources.flatMap((r) => (byIdOnly(r) ? [idOf(r)] : (ownId(r) ?? [])));

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
      try {
        const { outcome } = byIdOnly(resource)
          ? await midonet.removeById(resource.kind, idOf(resource))
          : await midonet.remove(resource);
        removed.push({
          ...(byIdOnly(resource) ? (resource as PushedResource) : record(resource, 'synced')),
          state: outcome === 'deleted' ? 'deleted' : 'absent',
        });
      } catch (error) {
        if (!force || !isRefusal(error)) throw error;
        Context.current().log.warn(
          `force: ${resource.kind} ${idOf(resource)} could not be deleted and is left: ${(error as Error).message}`,
        );
        removed.push({
          ...(byIdOnly(resource) ? (resource as PushedResource) : record(resource, 'synced')),
          state: 'failed',
        });
      }
      progress(i + 1);
    }
    return removed;
  }

  return {
    async pushTranslation({ owner, resources: given, previous: carried, reference }: PushInput): Promise<PushResult> {
      const fromApi = reference ? await stored(owner, reference) : undefined;
      const resources = fromApi?.resources ?? given;
      // A workflow without a record (a lost namespace, one terminated by hand) starts from what its status says it pushed.
      const rebuilt = !reference && carried.length === 0 ? (neighbours?.index.recordOf(owner) ?? []).map(fromKey) : [];
      const previous = union(carried, fromApi?.record ?? rebuilt);
      // A Translation sent by reference keeps its record in its status: written before anything is pushed (what may
      // be created is pending), and again once all of it is.
      const writeRecord = reference?.readResources
        ? (record: RecordedResource[]) => neighbours!.records.write(reference.ref, reference.uid, record)
        : undefined;
      // The whole Translation is checked before any of it is pushed: nothing half-pushed for a bad resource.
      const problems = validateResources(resources);
      if (problems.length > 0) throw invalidTranslation(owner, problems);
      await refuseClaimed(owner, resources);
      const ctx = Context.current();
      const progress = heartbeats();
      const { resumeAt } = progress;
      const midonet = settlingUnanswered(client, progress.alive);
      const wanted = new Set(resources.map((r) => identify(r).key));
      const stale = previous.filter(
        (p) => !wanted.has(p.key) && ['synced', 'pending', 'unverified'].includes(p.state) && !ownedByAnother(owner, p),
      );
      const before = new Set(previous.map((p) => p.key));
      await writeRecord?.([
        ...asRecord(previous, 'unverified'),
        ...asRecord(
          resources.filter((r) => !before.has(identify(r).key)),
          'pending',
        ),
      ]);
      const removed = await removeInReverse(midonet, stale, 0, () => progress.done(resumeAt));
      const ours = new Map(previous.map((p) => [p.key, p]));
      const provenance = neighbours?.index.provenanceOf(owner);
      const pushed: PushedResource[] = [];
      const recreated: string[] = [];
      const created: BackendResource[] = [];
      const adopted: string[] = [];
      const corrected: { resource: BackendResource; diff: FieldDiff[] }[] = [];
      try {
        for (const [index, resource] of resources.entries()) {
          const { key, id } = identify(resource);
          // This push's own pre-record (pending, with the body it asks for) tells nothing about who made what MidoNet holds.
          const known = ours.get(key);
          const mine = known?.state === 'pending' && known.body === resource.body ? undefined : known;
          let adoptedNow = false;
          if (index >= resumeAt) {
            // What is probably there already is looked at before anything is written: what a record says was pushed, and
            // anything a Translation someone else wrote asks for (midonet-kubernetes left it): found as asked, it is
            // taken over without a write.
            const observed =
              mine || provenance?.foreign
                ? await midonet.observe(resource).catch((error: unknown) => waitForOtherTranslations(error, resource))
                : undefined;
            const result = await midonet
              .ensure(resource, observed)
              .catch((error: unknown) => waitForOtherTranslations(error, resource));
            if (result.outcome === 'conflict') {
              // Where it decides, the API server is asked (rarely): the watch may lag behind the apply that made these resources Steward's.
              const translated =
                (provenance?.translated ?? false) ||
                (mine === undefined && ((await neighbours?.provenance(owner))?.translated ?? false));
              const claim: Claim = {
                recorded: mine !== undefined,
                translated,
                recordedByOther: neighbours?.index.recordedByOthers(key, owner) ?? false,
                updatable: false,
              };
              if (classify({ exists: true }, claim) === 'conflict') {
                throw midonetFailure(
                  'ResourceConflict',
                  `${owner}: ${resource.kind} ${id} exists in MidoNet with another body and ${conflictReason(claim)} (${result.reason}); differences: ${JSON.stringify(result.diff)}`,
                );
              }
              await midonet.replace(resource);
              recreated.push(key);
              created.push(resource);
            }
            if (result.outcome === 'created') created.push(resource);
            adoptedNow = result.outcome === 'unchanged' && (!mine || mine.adopted === true);
            if (adoptedNow) adopted.push(key);
            // Made right what MidoNet held otherwise than this workflow left it: found so, adopted so, or drifted (an
            // update of a body it pushed itself is an ordinary change).
            if (
              (result.outcome === 'conflict' || result.outcome === 'updated') &&
              (!mine || mine.adopted || mine.body === resource.body)
            )
              corrected.push({ resource, diff: result.diff });
            progress.done(index + 1);
          }
          // Kept as adopted until Steward pushes a body of its own: a later change of it is then still a correction.
          const stillAdopted = adoptedNow || (index < resumeAt && mine?.adopted && mine.body === resource.body);
          pushed.push({ ...record(resource, 'synced'), ...(stillAdopted ? { adopted: true as const } : {}) });
        }
      } catch (error) {
        // What this attempt created before it failed is told now: the retry resumes after it, and a dependent waiting
        // for it would otherwise wait for its own slow retry.
        await tell(owner, idsOf(created), true).catch((notTold: unknown) => {
          ctx.log.warn(`${owner}: created resources not told: ${(notTold as Error).message}`);
        });
        throw error;
      }
      await announce(owner, adopted, corrected);
      const notified =
        (await tell(owner, idsOf(created), true)) + (await tell(owner, removedIds(removed, stale), false));
      if (writeRecord) {
        await writeRecord(asRecord(pushed, 'synced'));
        return {
          pushed: [],
          removed: [],
          recreated: recreated.slice(0, NOTICE_IDS),
          notified,
          recordInStatus: true,
          count: pushed.length,
          ...findings(adopted, corrected),
        };
      }
      return {
        pushed,
        removed,
        recreated,
        notified,
        recordInStatus: false,
        count: pushed.length,
        ...findings(adopted, corrected),
      };
    },

    /**
     * Deletes in reverse order. A resource that is not a valid MidoNet resource was never pushed (a push checks the
     * whole Translation first), so it is skipped rather than refused: an invalid Translation still deletes cleanly.
     */
    async deleteTranslation({
      owner,
      resources: given,
      force,
      reference,
    }: DeleteInput): Promise<{ removed: PushedResource[]; notified: number; count: number }> {
      const progress = heartbeats();
      const fromApi = reference ? await stored(owner, reference) : undefined;
      // Everything recorded, then everything asked for: deleted in reverse, so what was asked for last goes first.
      const resources = union<BackendResource>(fromApi?.record ?? [], union(given, fromApi?.resources ?? []));
      await neighboursListed(owner);
      const deletable = resources.filter(
        (resource) => (byIdOnly(resource) || checkResource(resource).ok) && !ownedByAnother(owner, resource),
      );
      const removed = await removeInReverse(
        settlingUnanswered(client, progress.alive),
        deletable,
        progress.resumeAt,
        progress.done,
        force,
      );
      if (reference?.readRecord)
        await neighbours!.records.write(
          reference.ref,
          reference.uid,
          removed.map(({ kind, id, state }) => ({ kind, id, state })),
        );
      // What MidoNet removed with them (a bridge's ports, a port's routes) may be another Translation's: it is told.
      const notified = await tell(owner, removedIds(removed, deletable), false);
      return { removed: reference ? [] : removed, notified, count: removed.length };
    },
  };
}

export type PushActivities = ReturnType<typeof createPushActivities>;
