// The pusher's decisions, apart from its calls (push.ts): what this Translation pushed before, what it may not
// touch (another Translation's), what it removes, what it records before writing, and what a resource's ensure made
// of it. Pure: the watch's index comes in as a lookup, MidoNet's answers as values.
import type { ApplicationFailure } from '@temporalio/common';
import type { RecordedResource } from '../kubernetes/translation-record';
import { identify, identifyIfJson, type BackendResource, type PushedResource } from '../../model/translation/types';
import { TRIED_RECORD_STATE } from '../../model/translation/model';
import { classify, conflictReason, type Claim } from './adoption';
import type { EnsureResult } from './client';
import type { FieldDiff } from './compare';
import { midonetFailure } from './errors';

/** Which other Translation owns a resource key (TranslationIndex.ownerOf); undefined for none, or without Kubernetes. */
export type OwnerOf = (key: string) => string | undefined;

/**
 * A resource known from a record in `status.childResources` alone: kinds without an ID of their own are identified
 * by parent and body (identify()), so they come back whole; the others come back as their ID (an empty body), which
 * is all a deletion needs (MidonetClient.removeById).
 */
export function fromRecord({ kind, id, state }: RecordedResource): PushedResource {
  const slash = id.indexOf('/');
  const [parent, body] = slash < 0 ? ['', ''] : [id.slice(0, slash), id.slice(slash + 1)];
  return {
    kind: kind as PushedResource['kind'],
    parent,
    body,
    id,
    key: `${kind}:${id}`,
    ...(state === TRIED_RECORD_STATE ? { state: 'pending', tried: true } : { state: state as PushedResource['state'] }),
  };
}
/** A resource's state as a status records it: a `tried` pending one says so (fromRecord reads it back). */
const recordedState = ({ state, tried }: PushedResource): string =>
  state === 'pending' && tried ? TRIED_RECORD_STATE : state;
/** A key of `status.childResources` as the worker's index holds it (`kind:id`). */
function fromKey(key: string): PushedResource {
  const colon = key.indexOf(':');
  return fromRecord({ kind: key.slice(0, colon), id: key.slice(colon + 1), state: 'synced' });
}
export const byIdOnly = (resource: BackendResource) => resource.body === '';
function keyOf(resource: BackendResource): string {
  if (byIdOnly(resource)) return `${resource.kind}:${(resource as PushedResource).id}`;
  // Not JSON: never pushed, only ever skipped.
  return identifyIfJson(resource)?.key ?? `${resource.kind}:${resource.parent}/${resource.body}`;
}
export const idOf = (resource: BackendResource) =>
  byIdOnly(resource) ? (resource as PushedResource).id : identify(resource).id;

/** `first` then what `second` adds (by key). */
function union<T extends BackendResource>(first: T[], second: T[]): T[] {
  const seen = new Set(first.map(keyOf));
  return [...first, ...second.filter((r) => !seen.has(keyOf(r)))];
}

export const asRecord = (resources: BackendResource[], state: string): RecordedResource[] =>
  resources.map((r) => ({ kind: r.kind, id: idOf(r), state }));

/** The record a status keeps: each resource's state as the push left it (a foreign one stays foreign). */
export const recordOf = (pushed: PushedResource[]): RecordedResource[] =>
  pushed.map((p) => ({ kind: p.kind, id: p.id, state: recordedState(p) }));

export const record = (resource: BackendResource, state: PushedResource['state']): PushedResource => ({
  kind: resource.kind,
  parent: resource.parent ?? '',
  body: resource.body,
  ...identify(resource),
  state,
});

/** The MidoNet ID a resource has of its own (a body `id`); kinds identified by parent and body have none. */
function ownId(resource: BackendResource): string | undefined {
  const { id } = identify(resource);
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id) ? id : undefined;
}

/** The IDs other Translations may name: own IDs, and the IDs of resources known by ID only. */
export const idsOf = (resources: BackendResource[]) =>
  resources.flatMap((r) => (byIdOnly(r) ? [idOf(r)] : (ownId(r) ?? [])));

/**
 * What this Translation pushed before: its workflow's record, then what its status adds. `stored` is the status
 * read by reference; `indexed` the keys the watch's index holds for it, where a workflow without a record (a lost
 * namespace, one terminated by hand) starts from what its status says it pushed.
 */
export function previousRecord(
  carried: PushedResource[],
  stored: PushedResource[] | undefined,
  indexed: () => readonly string[],
): PushedResource[] {
  const rebuilt = stored === undefined && carried.length === 0 ? indexed().map(fromKey) : [];
  return union(carried, stored ?? rebuilt);
}

/**
 * One owner per resource (issue 10, defect 1): a resource that another, senior Translation records as pushed is
 * not this one's to push, to delete or to report; it is refused whole, naming the owner, until the owner lets go
 * (its deletion tells this one, which then pushes and owns it).
 */
export function claimRefusal(
  owner: string,
  resources: BackendResource[],
  ownerOf: OwnerOf,
): ApplicationFailure | undefined {
  const claimed = resources.flatMap((resource) => {
    const { key, id } = identify(resource);
    const other = ownerOf(key);
    return other ? [`${resource.kind} ${id} (owned by ${other})`] : [];
  });
  if (claimed.length === 0) return undefined;
  const shown = claimed.slice(0, 5).join(', ') + (claimed.length > 5 ? ` and ${claimed.length - 5} more` : '');
  return midonetFailure(
    'ResourceClaimed',
    `${owner}: ${claimed.length} resources are pushed and recorded by another Translation: ${shown}`,
  );
}

/** The states of a record entry that a removal or deletion acts on: this Translation's, or possibly (`pending`). */
const REMOVABLE = new Set<string>(['synced', 'pending', 'unverified']);

/**
 * What a push removes: recorded, no longer wanted, possibly in MidoNet, and not another Translation's (even one it
 * listed: it was refused for it).
 */
export function staleResources(
  resources: BackendResource[],
  previous: PushedResource[],
  ownerOf: OwnerOf,
): PushedResource[] {
  const wanted = new Set(resources.map((r) => identify(r).key));
  return previous.filter((p) => !wanted.has(p.key) && REMOVABLE.has(p.state) && ownerOf(keyOf(p)) === undefined);
}

/**
 * The record written before anything is pushed: what was pushed is unverified, what may be created is pending; what
 * was found made by someone else stays foreign (never deleted by this Translation, whatever becomes of the push).
 */
export function preRecord(previous: PushedResource[], resources: BackendResource[]): RecordedResource[] {
  const before = new Set(previous.map((p) => p.key));
  return [
    ...previous.map((p) => ({ kind: p.kind, id: p.id, state: p.state === 'synced' ? 'unverified' : recordedState(p) })),
    ...asRecord(
      resources.filter((r) => !before.has(identify(r).key)),
      'pending',
    ),
  ];
}

/**
 * This Translation's record of a resource. A pre-record (pending) tells nothing about who made what MidoNet holds
 * unless a push that failed was writing it (`tried`, whatever body it asked): the body a record read from a status
 * lacks. Nor does a resource it found made by someone else (`foreign`): neither is this one's to correct.
 */
export function recordedAs(previous: PushedResource[]): (resource: BackendResource) => PushedResource | undefined {
  const ours = new Map(previous.map((p) => [p.key, p]));
  return (resource) => {
    const known = ours.get(identify(resource).key);
    if (known?.state === 'foreign') return undefined;
    return known?.state === 'pending' && !known.tried ? undefined : known;
  };
}

/**
 * What is probably there already is looked at before anything is written: what a record says was pushed, and
 * anything a Translation someone else wrote asks for (midonet-kubernetes left it): found as asked, it is taken
 * over without a write.
 */
export const observeFirst = (mine: PushedResource | undefined, foreign: boolean | undefined) =>
  Boolean(mine || foreign);

/** A resource MidoNet holds with another body and cannot update: refused unless it is shown to be this Translation's. */
export function conflictRefusal(
  owner: string,
  resource: BackendResource,
  conflict: { diff: FieldDiff[]; reason: string },
  { recorded, translated, recordedByOther }: Omit<Claim, 'updatable'>,
): ApplicationFailure | undefined {
  const claim: Claim = { recorded, translated, recordedByOther, updatable: false };
  if (classify({ exists: true }, claim) !== 'conflict') return undefined;
  return midonetFailure(
    'ResourceConflict',
    `${owner}: ${resource.kind} ${identify(resource).id} exists in MidoNet with another body and ${conflictReason(claim)} (${conflict.reason}); differences: ${JSON.stringify(conflict.diff)}`,
  );
}

/**
 * Whose a resource found in MidoNet exactly as asked, with no record of this Translation's, is: `adoptable` when
 * Steward's own translation wrote the Translation (the ID is the one Steward derives for it: a takeover from
 * midonet-kubernetes, or a lost workflow's), `ours` when an earlier attempt of this push may have made it, else
 * `others` (a hand-written Translation naming what another tenant or an operator made): used, never deleted.
 */
export type FoundAsAsked = 'adoptable' | 'ours' | 'others';

/**
 * What an ensure made of a resource: adopted when found as asked and not pushed by Steward, and Steward's to take
 * over; foreign when found as asked and someone else's; corrected (with what differed) when MidoNet held it otherwise
 * than this workflow left it: found so, adopted so, or drifted (an update of a body it pushed itself is an ordinary
 * change).
 */
export function findingOf(
  result: EnsureResult,
  mine: PushedResource | undefined,
  resource: BackendResource,
  found: FoundAsAsked = 'adoptable',
): { adopted: boolean; foreign?: true; correction?: FieldDiff[] } {
  const unchanged = result.outcome === 'unchanged';
  if (unchanged && !mine && found !== 'adoptable')
    return found === 'others' ? { adopted: false, foreign: true } : { adopted: false };
  const adopted = unchanged && (!mine || mine.adopted === true);
  const changed = result.outcome === 'conflict' || result.outcome === 'updated';
  return changed && (!mine || mine.adopted || mine.body === resource.body)
    ? { adopted, correction: result.diff }
    : { adopted };
}

/** What an earlier attempt found, kept for the resources a retry resumes after: adopted or foreign as it was. */
export const stillFound = (
  mine: PushedResource | undefined,
  resource: BackendResource,
): 'adopted' | 'foreign' | undefined => {
  if (mine?.body !== resource.body) return undefined;
  if (mine.state === 'foreign') return 'foreign';
  return mine.adopted === true ? 'adopted' : undefined;
};

export const pushedEntry = (resource: BackendResource, found?: 'adopted' | 'foreign'): PushedResource => ({
  ...record(resource, found === 'foreign' ? 'foreign' : 'synced'),
  ...(found === 'adopted' ? { adopted: true as const } : {}),
});

/**
 * What to tell about after removing `removed`: what this attempt deleted, and on a retry everything it may have
 * removed, since an earlier attempt (a worker killed after a delete, before its notice) may have deleted it.
 */
export const removedIds = (removed: PushedResource[], all: BackendResource[], retried: boolean) =>
  retried ? idsOf(all) : idsOf(removed.filter((r) => r.state === 'deleted'));

/**
 * Whether a removal deletes this entry only once MidoNet is seen holding it exactly as this Translation asked: a
 * `pending` one was maybe created by a push cut short, maybe found there (another tenant's, refused as a conflict).
 */
export const onlyIfAsAsked = (resource: BackendResource) => (resource as Partial<PushedResource>).state === 'pending';

/**
 * What a deletion deletes, in the order given (it goes in reverse): exactly what this Translation's records (its
 * workflow's, then its status') say it created or adopted, or may have created (`pending`), each once; never what it
 * only asks for (an invalid Translation pushed nothing), what it found made by someone else (`foreign`), nor another
 * Translation's. A `pending` resource known only by its ID takes the body asked for from `resources` (none: left, as
 * it cannot be checked).
 */
export function toDelete(
  given: PushedResource[],
  stored: { resources?: BackendResource[]; record: PushedResource[] } | undefined,
  ownerOf: OwnerOf,
): PushedResource[] {
  const asked = new Map((stored?.resources ?? []).flatMap((r) => (identifyIfJson(r) ? [[keyOf(r), r]] : [])));
  return union(given, stored?.record ?? []).flatMap((entry) => {
    if (!REMOVABLE.has(entry.state) || ownerOf(keyOf(entry)) !== undefined) return [];
    if (entry.state !== 'pending' || !byIdOnly(entry)) return [entry];
    const body = asked.get(entry.key);
    return body ? [{ ...entry, parent: body.parent ?? '', body: body.body }] : [];
  });
}
