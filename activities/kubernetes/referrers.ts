// Back-references (seed 003): a dependency (the Node of a Pod, the Service of Endpoints) lists the objects that
// depend on it in one annotation, so a change of the dependency can reach them. The list is kept sorted and free of
// duplicates, so adding twice is harmless and two writers produce the same text.
import * as k8s from '@kubernetes/client-node';
import { z } from 'zod';
import { describeRef, LIFECYCLE_KINDS, type ObjectRef } from '../../model/naming';
import { REFERRERS_FINALIZER } from '../../model/vocabulary';
import { kubernetesFailure } from './errors';
import { type KubeObject, type Objects, update } from './objects';
import type { ReferrerInput } from '../../model/kubernetes-calls';

export type { ReferrerInput };

export const REFERRERS_ANNOTATION = 'steward.midonet.org/referrers';

const referrer = z.object({ kind: z.enum(LIFECYCLE_KINDS), namespace: z.string().optional(), name: z.string() });

export interface ReferrersResult {
  /** The dependency exists (a removal from a missing dependency is a no-op). */
  found: boolean;
  /** The referrers after the call, sorted. */
  referrers: ObjectRef[];
  /** The annotation was written by this call. */
  changed: boolean;
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
  const text = object.metadata.annotations?.[REFERRERS_ANNOTATION];
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

export function createReferrerActivities(objects: Objects) {
  /** Rewrites the list with `change`; a patch carries the resourceVersion it was computed from, so no concurrent change is lost. */
  const edit = (dependency: ObjectRef, change: (refs: ObjectRef[]) => ObjectRef[], missing: () => ReferrersResult) =>
    update<ReferrersResult>(objects.accessor(dependency), (current) => {
      if (!current) return { done: missing() };
      const after = normalizeReferrers(change(readReferrers(current)));
      const text = after.length ? JSON.stringify(after) : undefined;
      const finalizers = current.metadata.finalizers ?? [];
      const held = finalizers.includes(REFERRERS_FINALIZER);
      // No finalizer may be added to an object being deleted; one no longer needed goes with the last referrer.
      const wantHeld = after.length > 0 && (held || !current.metadata.deletionTimestamp);
      if (current.metadata.annotations?.[REFERRERS_ANNOTATION] === text && held === wantHeld)
        return { done: { found: true, referrers: after, changed: false } };
      return {
        patch: {
          metadata: {
            resourceVersion: current.metadata.resourceVersion,
            // An empty list removes the annotation (null deletes a key in a merge patch).
            annotations: { [REFERRERS_ANNOTATION]: text ?? null },
            finalizers: wantHeld
              ? [...finalizers.filter((f) => f !== REFERRERS_FINALIZER), REFERRERS_FINALIZER]
              : finalizers.filter((f) => f !== REFERRERS_FINALIZER),
          },
        },
        strategy: k8s.PatchStrategy.MergePatch,
        then: () => ({ found: true, referrers: after, changed: true }),
      };
    });

  return {
    addReferrer: ({ dependency, referrer }: ReferrerInput): Promise<ReferrersResult> =>
      edit(
        dependency,
        (refs) => [...refs, referrer],
        () => {
          throw kubernetesFailure(
            'DependencyNotFound',
            `${describeRef(dependency)} does not exist, so ${describeRef(referrer)} cannot depend on it`,
          );
        },
      ),
    removeReferrer: ({ dependency, referrer }: ReferrerInput): Promise<ReferrersResult> =>
      edit(
        dependency,
        (refs) => refs.filter((ref) => key(ref) !== key(referrer)),
        () => ({ found: false, referrers: [], changed: false }),
      ),
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
