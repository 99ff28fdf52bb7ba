// What every Translation in the cluster records and mentions, kept from a watch in the worker so that a push can
// ask "does another Translation own this resource?" and a deletion "whose resources did this just cascade away?"
// without listing every Translation each time.
import type * as k8s from '@kubernetes/client-node';
import { workflowId } from '../../model/naming';
import { GLOBAL_LABEL, GLOBAL_NAMESPACE, TRIED_RECORD_STATE, translationOwner } from '../../model/translation/model';
import type { midonetFailures } from '../midonet/errors';

/** A Translation as the watch delivers it: only the fields read here. */
interface WatchedTranslation extends k8s.KubernetesObject {
  resources?: { parent?: unknown; body?: unknown }[];
  status?: {
    childResources?: { kind?: unknown; id?: unknown; state?: unknown }[];
    conditions?: { type?: unknown; status?: unknown; reason?: unknown }[];
  };
}

/** Who wrote a Translation, from its `managedFields`: what a push may assume about resources it has no record of. */
export interface Provenance {
  /** Someone other than Steward wrote it (midonet-kubernetes, kubectl; no managedFields at all counts too): its resources may exist already. */
  foreign: boolean;
  /** Its `resources` are what Steward's own translation applied: their IDs are the ones Steward derives for it. */
  translated: boolean;
  /**
   * Written as midonet-kubernetes writes its own: owned by the object it translates, or global (labelled, in the
   * global namespace, where only an administrator writes). What it names was derived for it, as Steward derives it:
   * taken over when found as asked, where a hand-written Translation's finds are someone else's.
   */
  takeover: boolean;
}

interface Entry extends Provenance {
  /** `creationTimestamp`, then the workflow id: who is senior when two Translations record one resource. */
  seniority: string;
  /** Keys (`kind:id`) of the resources its status records as pushed (a failed push leaves them `unverified`, still its). */
  records: string[];
  /**
   * The keys it holds against others: its records, and for one derived for its object (`takeover`) also what its
   * push is about to make (`pending`), which a Translation that yields them is refused from then on.
   */
  claims: string[];
  /** Every MidoNet ID its resources name: their own IDs, parents, and IDs in bodies (next hops, peers, chains). */
  mentions: string[];
  /** Ready=False because something it needs was missing when it was last pushed. */
  waitingForDependency: boolean;
  /** Being deleted: what it records is going away and owned by nobody (whoever lists it is told once it is gone). */
  deleting: boolean;
  /** Ready=True, and not being deleted. */
  ready: boolean;
  /** The workflow that pushes it: its owner's (a Pod's, a Node's…), or its own pusher's. */
  pushedBy: string;
}

/** The failure a push reports when a parent or referenced object is missing (activities/midonet/push.ts). */
const DEPENDENCY_MISSING: keyof typeof midonetFailures = 'MidonetDependencyMissing';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Who wrote the Translation, from its `managedFields`; `fieldManager` is the one Steward applies Translations with. */
export function provenanceOf(
  object: { metadata?: Pick<k8s.V1ObjectMeta, 'managedFields' | 'labels' | 'namespace' | 'ownerReferences'> },
  fieldManager = 'steward',
): Provenance {
  const written = (object.metadata?.managedFields ?? []).filter((f) => f.subresource !== 'status');
  const global =
    object.metadata?.labels?.[GLOBAL_LABEL] !== undefined && object.metadata.namespace === GLOBAL_NAMESPACE;
  return {
    takeover: global || translationOwner(object.metadata) !== undefined,
    foreign: written.length === 0 || written.some((f) => f.manager !== fieldManager),
    translated: written.some(
      (f) =>
        f.manager === fieldManager &&
        f.operation === 'Apply' &&
        typeof f.fieldsV1 === 'object' &&
        f.fieldsV1 !== null &&
        'f:resources' in f.fieldsV1,
    ),
  };
}

/**
 * V8's one copy of a string: the one its string table keeps for property names, and holds weakly. A match of the UUID
 * pattern is a slice that keeps the whole body it was found in, and a template makes a chain of its parts; thousands of
 * Translations repeat the same namespaces, hosts, bridges and routers. Shared, 15,660 of the bench's digests and their
 * index hold 4 MB of live heap where they held 16 (docs/benchmarks.md, issue 44's levers).
 */
const shared = <T extends string | undefined>(text: T): T =>
  text === undefined ? text : (Object.keys({ [text]: 0 })[0] as T);

function entryOf(object: WatchedTranslation, fieldManager: string): Entry {
  const mentions = new Set<string>();
  for (const r of object.resources ?? []) {
    for (const text of [r.parent, r.body])
      if (typeof text === 'string') for (const id of text.match(UUID) ?? []) mentions.add(shared(id.toLowerCase()));
  }
  const provenance = provenanceOf(object, fieldManager);
  const inStates = (...states: string[]) =>
    (object.status?.childResources ?? [])
      .filter((c) => states.includes(c.state as string) && typeof c.kind === 'string' && typeof c.id === 'string')
      .map((c) => shared(`${c.kind as string}:${c.id as string}`));
  const records = inStates('synced', 'unverified');
  const ready = object.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    seniority: shared(
      `${object.metadata?.creationTimestamp ? new Date(object.metadata.creationTimestamp).toISOString() : ''} ${workflowIdOf(object)}`,
    ),
    records,
    claims: provenance.takeover ? [...records, ...inStates('pending', TRIED_RECORD_STATE)] : records,
    mentions: [...mentions],
    waitingForDependency: ready?.status === 'False' && ready.reason === DEPENDENCY_MISSING,
    deleting: object.metadata?.deletionTimestamp !== undefined,
    ready: ready?.status === 'True' && object.metadata?.deletionTimestamp === undefined,
    pushedBy: shared(pushingWorkflowOf(object)),
    ...provenance,
  };
}

const workflowIdOf = (object: k8s.KubernetesObject) =>
  workflowId({ kind: 'Translation', namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '' });

function pushingWorkflowOf(object: k8s.KubernetesObject): string {
  const owner = translationOwner(object.metadata);
  return owner ? workflowId(owner) : workflowIdOf(object);
}

/** A multimap that forgets empty sets. */
class Multimap {
  private readonly map = new Map<string, Set<string>>();
  add(key: string, value: string) {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(value);
  }
  delete(key: string, value: string) {
    const set = this.map.get(key);
    set?.delete(value);
    if (set?.size === 0) this.map.delete(key);
  }
  get(key: string): ReadonlySet<string> {
    return this.map.get(key) ?? new Set();
  }
}

/** The metadata a digest keeps. */
const DIGEST_FIELDS = ['name', 'namespace', 'uid', 'resourceVersion'] as const;

/**
 * What the worker's watch keeps of a Translation in place of the whole object (TranslationIndex.digest): what its
 * informer needs to follow it, and the index's entry. At 5,000 Pods the watch holds some 15,000 Translations: 76 MB
 * of live heap whole, some 4 MB as digests with their strings shared (docs/benchmarks.md, issue 44's levers).
 */
export interface TranslationDigest extends k8s.KubernetesObject {
  metadata: Pick<k8s.V1ObjectMeta, (typeof DIGEST_FIELDS)[number]>;
  entry: Entry;
}

export interface TranslationIndex {
  /** An event of the Translations' watch (an upsert or a delete of one Translation, whole or as its digest). */
  apply(event: { type: 'upsert' | 'delete'; object: k8s.KubernetesObject | TranslationDigest }): void;
  /** The digest of a Translation: what the index reads of it, made once, where the watch would keep it whole. */
  digest(object: k8s.KubernetesObject): TranslationDigest;
  /**
   * The pusher workflow id of the Translation that owns this resource, if it is not `self`: one that records it and
   * comes before `self` (`before`). Two that both record it (they pushed at the same moment) resolve to the one that
   * comes first, so exactly one of them is refused. A Translation being deleted owns nothing any more. `asked` is
   * `self`'s provenance as the API server has it, for a Translation the watch has not seen yet (just applied).
   */
  ownerOf(key: string, self: string, asked?: Pick<Provenance, 'takeover'>): string | undefined;
  /**
   * The Translations that record any of these resources and yield them to `self` (`yields`), each with the keys it
   * records: a hand-written Translation that pushed what Steward derives for `self`'s object.
   */
  yielding(keys: readonly string[], self: string, asked?: Pick<Provenance, 'takeover'>): Map<string, string[]>;
  /**
   * The workflows that push the other Translations that name any of these MidoNet IDs (their owners', or their own
   * pushers'). `created`: the IDs were just
   * created, so they were missing; this keeps those waiting for them, and those that record anything as pushed: what
   * of theirs named a missing object is not in MidoNet (MidoNet cascaded it away, or refused it), whatever their
   * Ready says. Whoever has neither pushes after the creation anyway.
   */
  mentioning(ids: readonly string[], self: string, options?: { created?: boolean }): string[];
  /** What this Translation's own status records as pushed (keys `kind:id`): its record when its workflow has none. */
  recordOf(self: string): readonly string[];
  /** Whether any other Translation, senior or not, records this resource, unless it yields it to `self`. */
  recordedByOthers(key: string, self: string): boolean;
  /** Who wrote this Translation; undefined when the watch has not seen it. */
  provenanceOf(self: string): Provenance | undefined;
  /** The watch saw this Translation Ready and not being deleted last (false: not Ready, or not seen). */
  seenReady(translation: { namespace: string; name: string }): boolean;
}

/** What orders two claims on one resource. */
type Rank = Pick<Entry, 'takeover' | 'seniority'>;

/**
 * What Steward's translation derives for an object (a Translation owned by it, or the global one) is that object's,
 * whoever pushed it first: a hand-written Translation that pushed a Pod's future port, in any namespace, yields it
 * when the Pod appears (issue 43) instead of holding the Pod's own Translation refused for as long as it lives.
 */
const yields = (theirs: Rank, mine: Rank) => mine.takeover && !theirs.takeover;

/** Whether a claim of rank `a` comes before one of rank `b`: the derived one, then the senior (created first). */
const before = (a: Rank, b: Rank) => yields(b, a) || (!yields(a, b) && a.seniority < b.seniority);

/** A Translation the watch has not seen is the newest: it ranks by its kind alone. */
const UNSEEN = '\uffff';

/** `fieldManager` is the one Steward applies Translations with. */
export function createTranslationIndex(fieldManager = 'steward'): TranslationIndex {
  const entries = new Map<string, Entry>();
  const recordedBy = new Multimap();
  const mentionedBy = new Multimap();

  function forget(id: string) {
    const entry = entries.get(id);
    if (!entry) return;
    for (const key of entry.claims) recordedBy.delete(key, id);
    for (const mention of entry.mentions) mentionedBy.delete(mention, id);
    entries.delete(id);
  }

  const rankOf = (self: string, asked?: Pick<Provenance, 'takeover'>): Rank | undefined =>
    entries.get(self) ?? (asked && { takeover: asked.takeover, seniority: UNSEEN });

  return {
    apply({ type, object }) {
      const id = workflowIdOf(object);
      forget(id);
      if (type === 'delete') return;
      const entry = 'entry' in object ? object.entry : entryOf(object, fieldManager);
      entries.set(id, entry);
      for (const key of entry.claims) recordedBy.add(key, id);
      for (const mention of entry.mentions) mentionedBy.add(mention, id);
    },
    ownerOf(key, self, asked) {
      const mine = rankOf(self, asked);
      for (const other of recordedBy.get(key)) {
        const theirs = entries.get(other);
        if (other === self || !theirs || theirs.deleting) continue;
        if (mine === undefined || !before(mine, theirs)) return other;
      }
      return undefined;
    },
    yielding(keys, self, asked) {
      const found = new Map<string, string[]>();
      const mine = rankOf(self, asked);
      if (!mine) return found;
      for (const key of keys)
        for (const other of recordedBy.get(key)) {
          const theirs = entries.get(other);
          if (other !== self && theirs && !theirs.deleting && yields(theirs, mine))
            found.set(other, [...(found.get(other) ?? []), key]);
        }
      return found;
    },
    mentioning(ids, self, { created = false } = {}) {
      const concerned = (other: string) => {
        const entry = entries.get(other);
        return !created || entry?.waitingForDependency === true || (entry?.records.length ?? 0) > 0;
      };
      const found = new Set<string>();
      for (const id of ids)
        for (const other of mentionedBy.get(id.toLowerCase()))
          if (other !== self && concerned(other)) found.add(entries.get(other)?.pushedBy ?? other);
      // The workflow pushing `self` pushes its siblings too, in rounds until none waits: it is not told of itself.
      found.delete(entries.get(self)?.pushedBy ?? self);
      return [...found];
    },
    digest(object) {
      const { name, namespace, uid, resourceVersion } = object.metadata ?? {};
      const metadata = { name, namespace, uid, resourceVersion };
      for (const field of DIGEST_FIELDS) metadata[field] = shared(metadata[field]);
      return { metadata, entry: entryOf(object, fieldManager) };
    },
    recordOf: (self) => entries.get(self)?.records ?? [],
    recordedByOthers(key, self) {
      const mine = entries.get(self);
      return [...recordedBy.get(key)].some((other) => {
        const theirs = entries.get(other);
        return other !== self && !(mine && theirs && yields(theirs, mine));
      });
    },
    provenanceOf(self) {
      const entry = entries.get(self);
      return entry && { foreign: entry.foreign, translated: entry.translated, takeover: entry.takeover };
    },
    seenReady: ({ namespace, name }) => entries.get(workflowIdOf({ metadata: { namespace, name } }))?.ready === true,
  };
}
