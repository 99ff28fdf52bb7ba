// Back-references (seed 003): a dependency (the Node of a Pod, the Service of Endpoints) lists the objects that
// depend on it in one annotation, so a change of the dependency can reach them. The list is kept sorted and free of
// duplicates, so adding twice is harmless and two writers produce the same text.
import * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { LIFECYCLE_KINDS, type ObjectRef } from '../../model/naming';
import { finalizerNames, LEGACY_REFERRERS, REFERRERS_ANNOTATION, REFERRERS_FINALIZER } from '../../model/vocabulary';
import { type Accessor, type Decision, type KubeObject, type Objects, update } from './objects';
import type { ReferrerInput } from '../../model/kubernetes-calls';

export type { ReferrerInput };

/** The referrers finalizer under its current and older names. */
const REFERRERS_FINALIZERS = finalizerNames(REFERRERS_FINALIZER);
const isReferrersFinalizer = (f: string) => REFERRERS_FINALIZERS.includes(f);

export { REFERRERS_ANNOTATION };

const referrer = z.object({ kind: z.enum(LIFECYCLE_KINDS), namespace: z.string().optional(), name: z.string() });

export interface ReferrersResult {
  /** The dependency exists (a removal from a missing dependency is a no-op). */
  found: boolean;
  /** The referrers after the call, sorted. */
  referrers: ObjectRef[];
  /** The annotation was written by this call. */
  changed: boolean;
  /** The dependency is being deleted: nothing is added to it (no finalizer may be, and it is going). */
  deleting?: true;
  /** The dependency as this call's write answered or its fresh read found it: what a referrer translates with. */
  object?: KubeObject;
}

const key = (ref: ObjectRef) => `${ref.kind}\u0000${ref.namespace ?? ''}\u0000${ref.name}`;
const canonical = ({ kind, namespace, name }: ObjectRef): ObjectRef =>
  namespace ? { kind, namespace, name } : { kind, name };

/** Sorted by kind, namespace, name; one entry per object. */
export function normalizeReferrers(refs: ObjectRef[]): ObjectRef[] {
  const unique = new Map(refs.map((ref) => [key(ref), canonical(ref)]));
  return [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, ref]) => ref);
}

/**
 * The referrers an object lists. Entries that do not parse are dropped: the annotation is Steward's own, and a
 * damaged one is better repaired by the next write than left to block every write.
 */
export function readReferrers(object: KubeObject): ObjectRef[] {
  const annotations = object.metadata.annotations;
  const text = annotations?.[REFERRERS_ANNOTATION] ?? annotations?.[LEGACY_REFERRERS];
  if (!text) return [];
  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(entries)) return [];
  return normalizeReferrers(
    entries.flatMap((entry) => {
      const parsed = referrer.safeParse(entry);
      return parsed.success ? [parsed.data] : [];
    }),
  );
}

/**
 * The finalizers after a write, or undefined when they stay as they are. The held finalizer takes its current name
 * (an earlier Steward's is renamed), except on an object being deleted, where no finalizer may be added: there the
 * old name is kept until it is released.
 */
export function referrersFinalizers(finalizers: string[], deleting: boolean, hold: boolean): string[] | undefined {
  const others = finalizers.filter((f) => !isReferrersFinalizer(f));
  const keptAs = finalizers.includes(REFERRERS_FINALIZER) || !deleting ? REFERRERS_FINALIZER : LEGACY_REFERRERS;
  const wanted = hold ? [keptAs] : [];
  const current = finalizers.filter(isReferrersFinalizer);
  return current.length === wanted.length && current.every((f, i) => f === wanted[i])
    ? undefined
    : [...others, ...wanted];
}

/** One caller's change to a dependency's list, and how it learns the outcome. */
interface Edit {
  change: (refs: ObjectRef[], dependency: KubeObject) => ObjectRef[];
  resolve: (result: ReferrersResult) => void;
  reject: (error: unknown) => void;
}

type Outcome = { result: ReferrersResult } | { error: unknown };

/** Every edit's answer when the dependency does not exist: there is no list to add to or remove from. */
const MISSING: ReferrersResult = { found: false, referrers: [], changed: false };

const sameRefs = (a: ObjectRef[], b: ObjectRef[]) =>
  a.length === b.length && a.every((ref, i) => key(ref) === key(b[i]!));

/** The list after every edit of `batch`, in order, as one patch carrying the resourceVersion it was computed from. */
function decideEdits(current: KubeObject | undefined, batch: Edit[]): Decision<Outcome[]> {
  if (!current) return { done: batch.map((): Outcome => ({ result: MISSING })) };
  let refs = readReferrers(current);
  const stepChanged = batch.map((edit) => {
    const before = refs;
    refs = normalizeReferrers(edit.change(refs, current));
    return !sameRefs(before, refs);
  });
  const after = refs;
  const text = after.length ? JSON.stringify(after) : undefined;
  const finalizers = current.metadata.finalizers ?? [];
  const deleting = Boolean(current.metadata.deletionTimestamp);
  const held = finalizers.some(isReferrersFinalizer);
  // No finalizer may be added to an object being deleted; one no longer needed goes with the last referrer.
  const nextFinalizers = referrersFinalizers(finalizers, deleting, after.length > 0 && (held || !deleting));
  const annotations = current.metadata.annotations ?? {};
  const legacyAnnotation = annotations[LEGACY_REFERRERS] !== undefined;
  const outcomes = (written: boolean, object: KubeObject) =>
    // A write that only renames (the annotation, the finalizer) is every edit's.
    stepChanged.map(
      (own): Outcome => ({
        result: {
          found: true,
          referrers: after,
          changed: written && (own || !stepChanged.includes(true)),
          ...(deleting ? { deleting: true } : {}),
          object,
        },
      }),
    );
  if (!legacyAnnotation && annotations[REFERRERS_ANNOTATION] === text && !nextFinalizers)
    return { done: outcomes(false, current) };
  return {
    patch: {
      metadata: {
        resourceVersion: current.metadata.resourceVersion,
        // An empty list removes the annotation (null deletes a key in a merge patch), and the old name goes.
        annotations: {
          [REFERRERS_ANNOTATION]: text ?? null,
          ...(legacyAnnotation ? { [LEGACY_REFERRERS]: null } : {}),
        },
        finalizers: nextFinalizers ?? finalizers,
      },
    },
    strategy: k8s.PatchStrategy.MergePatch,
    then: (patched) => outcomes(true, patched),
  };
}

/** How many dependencies a process remembers its last write of (their referrers and finalizers only). */
const KNOWN_DEPENDENCIES = 2048;

/**
 * Each dependency as this process's last write of it left it, reduced to what `decideEdits` reads: the next edit
 * (a Pod's deletion after its creation, the next Pod on that Node) starts from it, without a read (`update`'s known).
 */
function lastWrites() {
  const known = new Map<string, KubeObject>();
  return {
    take(dependency: ObjectRef): KubeObject | undefined {
      const object = known.get(key(dependency));
      known.delete(key(dependency));
      return object;
    },
    keep(dependency: ObjectRef, { metadata }: KubeObject): void {
      const { name, uid, resourceVersion, deletionTimestamp, finalizers, annotations = {} } = metadata;
      const kept = [REFERRERS_ANNOTATION, LEGACY_REFERRERS].filter((a) => annotations[a] !== undefined);
      known.set(key(dependency), {
        metadata: {
          name,
          uid,
          resourceVersion,
          ...(deletionTimestamp ? { deletionTimestamp } : {}),
          ...(finalizers ? { finalizers } : {}),
          annotations: Object.fromEntries(kept.map((a) => [a, annotations[a]!])),
        },
      });
      if (known.size > KNOWN_DEPENDENCIES) known.delete(known.keys().next().value!);
    },
  };
}

/** Rewrites the list with every edit of `batch` in one patch: from this process's last write when it has one. */
async function writeEdits(
  objects: Objects,
  written: ReturnType<typeof lastWrites>,
  dependency: ObjectRef,
  batch: Edit[],
): Promise<Outcome[]> {
  const accessor = objects.accessor(dependency);
  const writing: Accessor = {
    ...accessor,
    patch: async (body, strategy) => {
      const patched = await accessor.patch(body, strategy);
      written.keep(dependency, patched);
      return patched;
    },
  };
  return update(writing, (current) => decideEdits(current, batch), written.take(dependency));
}

/**
 * Edits of one dependency that arrive while its list is being written wait, and then go together in the next write:
 * a burst of Pods on one Node makes a patch per round, not one each (and most of them a conflict, a fresh read and a
 * retry). Later rounds, like the next caller's edit, start from the object as the last write left it (`lastWrites`).
 */
function coalescedEdits(write: (dependency: ObjectRef, batch: Edit[]) => Promise<Outcome[]>) {
  const waiting = new Map<string, Edit[]>();
  const writeRounds = async (dependency: ObjectRef, first: Edit[]) => {
    const at = key(dependency);
    for (let batch = first; batch.length > 0; ) {
      try {
        const outcomes = await write(dependency, batch);
        batch.forEach((edit, i) => {
          const outcome = outcomes[i]!;
          if ('result' in outcome) edit.resolve(outcome.result);
          else edit.reject(outcome.error);
        });
      } catch (error) {
        for (const edit of batch) edit.reject(error);
      }
      batch = waiting.get(at) ?? [];
      waiting.set(at, []);
    }
    waiting.delete(at);
  };
  return (dependency: ObjectRef, change: Edit['change']) =>
    new Promise<ReferrersResult>((resolve, reject) => {
      const queued = waiting.get(key(dependency));
      if (queued) {
        queued.push({ change, resolve, reject });
        return;
      }
      waiting.set(key(dependency), []);
      void writeRounds(dependency, [{ change, resolve, reject }]);
    });
}

export function createReferrerActivities(objects: Objects) {
  const written = lastWrites();
  const edit = coalescedEdits((dependency, batch) => writeEdits(objects, written, dependency, batch));
  return {
    /** Registers `referrer` on its dependency, unless that is missing or being deleted; answers the dependency too. */
    addReferrer: ({ dependency, referrer }: ReferrerInput): Promise<ReferrersResult> =>
      edit(dependency, (refs, current) => (current.metadata.deletionTimestamp ? refs : [...refs, referrer])),
    removeReferrer: ({ dependency, referrer }: ReferrerInput): Promise<ReferrersResult> =>
      edit(dependency, (refs) => refs.filter((ref) => key(ref) !== key(referrer))),
    listReferrers: async ({
      dependency,
    }: {
      dependency: ObjectRef;
    }): Promise<{ found: boolean; referrers: ObjectRef[] }> => {
      const current = await objects.accessor(dependency).read();
      return current ? { found: true, referrers: readReferrers(current) } : { found: false, referrers: [] };
    },
  };
}
