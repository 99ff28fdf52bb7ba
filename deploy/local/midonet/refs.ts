// "Referenced objects must exist" (ref §1.2): a reference to a missing object is a 404 naming it.
import { rows } from './cascade';
import { notFound } from './errors';
import { KINDS, type KindName } from './kinds';
import type { State } from './state';

export function requireRef(state: State, kind: KindName, id: string | null | undefined): void {
  if (id != null && !rows(state, kind)[id]) throw notFound(KINDS[kind].storageClass, id);
}

/**
 * Mirrors, QoS policies, load balancers and service insertions are not emulated, so none exists and any
 * reference to one is the 404 the real server gives for a missing object.
 */
export function requireNone(storageClass: string, ids: readonly string[] | string | null | undefined): void {
  const list = ids == null ? [] : typeof ids === 'string' ? [ids] : ids;
  if (list[0] !== undefined) throw notFound(storageClass, list[0]);
}
