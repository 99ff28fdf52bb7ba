import type { ObjectRef } from './naming';
import type { KubernetesKind, Translation } from './translation/types';

/**
 * The Kubernetes activities' inputs and results that the apply steps (apply-object.ts) are written against: the
 * contract between the steps and the activities that carry them out.
 */

/** `T`: the object as the API server sent it (the activities type it; the steps only project it). */
export type ReadObjectResult<T extends object = object> =
  | { found: false }
  | {
      found: true;
      uid: string;
      /** `metadata.generation`, 0 for kinds without one (Nodes). */
      generation: number;
      deleting: boolean;
      finalizers: string[];
      /** The object as the API server sent it; the workflow projects it. */
      object: T;
    };

/**
 * Whose Translations these are. An object owns its Translations through an ownerReference and the
 * `midonet.org/owner-uid` label. The global Translations (shared chains and rules) have no owner object: they are
 * expressed as `{ kind: 'Global' }` and found by the presence of the `midonet.org/global` label, as upstream does.
 */
export type TranslationOwner =
  | { kind: KubernetesKind; namespace?: string; name: string; uid: string }
  | { kind: 'Global' };

export interface ApplyTranslationsInput {
  owner: TranslationOwner;
  /** Every Translation the owner has now; any other Translation of the owner is stale and deleted. */
  translations: Translation[];
}

/** One Translation as the API server holds it after an apply. */
export interface WrittenTranslation {
  /** `<namespace>/<name>`. */
  key: string;
  uid: string;
  generation: number;
  /** A push attempt lost with its worker may still have writes landing in MidoNet until then. */
  unsettledUntil?: string;
  /** Its deletion was asked (a `deletionTimestamp`): its finalizer holds it until its resources are deleted. */
  deleting?: true;
}

export interface ApplyTranslationsResult {
  /** `<namespace>/<name>` of each applied Translation, in input order. */
  applied: string[];
  /** The same Translations with their UID and generation, in input order. */
  written: WrittenTranslation[];
  /** `<namespace>/<name>` of each stale Translation: deletion requested now or earlier (its finalizer holds it until the pusher releases it). */
  deleted: string[];
  /** The same stale Translations with their UID: what the owner's workflow finalizes. */
  stale: WrittenTranslation[];
  /**
   * Applied Translations that are being deleted (someone deleted them, or a previous incarnation's is still being
   * finalized): apply again once they are gone, or the owner is left without them.
   */
  terminating: string[];
}

export interface ReferrerInput {
  dependency: ObjectRef;
  referrer: ObjectRef;
}
