import type { KubernetesObject } from '@kubernetes/client-node';
import type { Observation } from '../../workflows/messages';
import type { ObjectRef } from '../../workflows/naming';
import type { TranslationFailure } from '../../workflows/translation/errors';
import { toProjection, type BackendResource, type KubernetesProjection } from '../../workflows/translation/types';
import type { WatchedKind } from './kinds';

/**
 * What a Translation workflow needs: its resources and the deletion inputs. `generation` and `finalizers` repeat
 * the Observation's envelope so the projection alone is the whole desired state the pusher compares against.
 */
export interface TranslationProjection {
  resources: BackendResource[];
  generation: number;
  finalizers: string[];
  deletionTimestamp?: string;
}

/**
 * An object the translation schemas reject (the API server validated it, so this means a schema of ours is stricter
 * than Kubernetes). It is still forwarded, so the workflow shows the error naming the object and the field instead
 * of the object silently never being managed.
 */
export interface InvalidProjection {
  invalid: TranslationFailure;
}

export type ObservedProjection = KubernetesProjection | TranslationProjection | InvalidProjection;

/** A Translation as the API server returns it; the CRD's schema has validated `resources` already. */
interface TranslationObject extends KubernetesObject {
  resources?: { kind: string; parent?: string; body: string }[];
}

/** The trimmed projection of one object: only the fields its workflow reads, so unrelated churn changes nothing. */
export function project(kind: WatchedKind, object: KubernetesObject): ObservedProjection {
  const metadata = object.metadata ?? {};
  if (kind === 'Translation') {
    const resources = ((object as TranslationObject).resources ?? []).map(({ kind, parent, body }) => ({ kind, parent: parent ?? '', body }));
    return {
      resources: resources as BackendResource[],
      generation: metadata.generation ?? 0,
      finalizers: metadata.finalizers ?? [],
      ...(metadata.deletionTimestamp ? { deletionTimestamp: timestamp(metadata.deletionTimestamp) } : {}),
    };
  }
  // List items come without `kind`; the informer's kind is authoritative anyway.
  const result = toProjection({ ...object, kind });
  return result.ok ? result.projection : { invalid: result };
}

/** The signal payload for one watch event; `gone` for a DELETED event (or an object a re-list no longer finds). */
export function observe(kind: WatchedKind, object: KubernetesObject, gone = false): Observation<ObservedProjection> {
  const metadata = object.metadata ?? {};
  const ref: ObjectRef = kind === 'Node' ? { kind, name: metadata.name ?? '' } : { kind, namespace: metadata.namespace ?? '', name: metadata.name ?? '' };
  return {
    ref,
    uid: metadata.uid ?? '',
    generation: metadata.generation ?? 0,
    deleting: metadata.deletionTimestamp !== undefined && metadata.deletionTimestamp !== null,
    gone,
    finalizers: metadata.finalizers ?? [],
    projection: project(kind, object),
  };
}

/** Typed as a `Date`, though custom objects carry the raw string: one form either way, so the hash is stable. */
const timestamp = (value: Date | string): string => new Date(value).toISOString();
