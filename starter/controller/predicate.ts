import { createHash } from 'node:crypto';
import type { Observation } from '../../workflows/messages';
import { workflowId } from '../../workflows/naming';

/**
 * The change predicate: lets an Observation through only when it differs from the last one let through for the same
 * object incarnation (workflow id + uid). A `gone` Observation always passes and ends the incarnation's record.
 * Status writes, resourceVersion bumps and unrelated annotations never reach the projection, so they stop here.
 */
export interface ChangePredicate {
  /** True (and remembered) when `obs` should be sent. */
  accept(obs: Observation): boolean;
  /** Forget one incarnation, so its next Observation passes (after a send that failed for good). */
  forget(obs: Observation): void;
  /** Forget everything (leadership changed hands: what was sent before is not known to be current). */
  reset(): void;
  size(): number;
}

export const predicateKey = (obs: Observation): string => `${workflowId(obs.ref)}#${obs.uid}`;

/** SHA-256 of the JSON with object keys sorted, so key order never looks like a change. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value, sortKeys)).digest('hex');
}

function sortKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function createChangePredicate(): ChangePredicate {
  const hashes = new Map<string, string>();
  return {
    accept(obs) {
      const key = predicateKey(obs);
      if (obs.gone) {
        hashes.delete(key);
        return true;
      }
      const hash = stableHash(obs);
      if (hashes.get(key) === hash) return false;
      hashes.set(key, hash);
      return true;
    },
    forget: (obs) => void hashes.delete(predicateKey(obs)),
    reset: () => hashes.clear(),
    size: () => hashes.size,
  };
}
