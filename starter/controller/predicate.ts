import { createHash } from 'node:crypto';
import type { Observation } from '../../model/messages';
import { workflowId } from '../../model/naming';

/**
 * The change predicate: lets an Observation through only when it differs from the last one let through for the same
 * object incarnation (workflow id + uid). A `gone` Observation always passes and replaces the incarnation's record;
 * once delivered it is kept until its workflow has ended, so a check of the running workflows does not tell a
 * workflow again what it already heard (at 5,000 Pods that doubled the signals of a mass deletion).
 * Status writes, resourceVersion bumps and unrelated annotations never reach the projection, so they stop here.
 *
 * What it lets through stays unconfirmed until the handler delivered it. `forgetUnconfirmed` (at every re-list) lets
 * those through again, so an Observation that was let through but never delivered, for whatever reason, is sent by
 * the next re-list instead of being suppressed as "unchanged" for ever.
 */
export interface ChangePredicate {
  /** True (and remembered, unconfirmed) when `obs` should be sent. */
  accept(obs: Observation): boolean;
  /** `obs` was delivered: while the object does not change, it is not sent again. */
  confirm(obs: Observation): void;
  /** When `obs` is the one remembered and was confirmed: the time it was. */
  confirmedAt(obs: Observation): number | undefined;
  /** Forget one incarnation, so its next Observation passes (after a send that failed for good). */
  forget(obs: Observation): void;
  /** Forget what was let through but not delivered. */
  forgetUnconfirmed(): void;
  /** Forget the `gone` Observations of workflows that no longer run. */
  forgetEnded(running: (workflowId: string) => boolean): void;
  /**
   * Forget everything (leadership changed hands: what was sent before is not known to be current) but the delivered
   * `gone`s: a workflow told its object is gone stays told, whoever leads.
   */
  reset(): void;
  size(): number;
  unconfirmed(): number;
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

/** Every `gone` of an incarnation is the same news, whatever projection the watch or a re-check gave it. */
const GONE = 'gone';
const hashOf = (obs: Observation) => (obs.gone ? GONE : stableHash(obs));

export function createChangePredicate(now: () => number = Date.now): ChangePredicate {
  const sent = new Map<string, { hash: string; confirmedAt?: number }>();
  const remembered = (obs: Observation) => {
    const entry = sent.get(predicateKey(obs));
    return entry?.hash === hashOf(obs) ? entry : undefined;
  };
  return {
    accept(obs) {
      const key = predicateKey(obs);
      const hash = hashOf(obs);
      if (!obs.gone && sent.get(key)?.hash === hash) return false;
      sent.set(key, { hash });
      return true;
    },
    confirm(obs) {
      const entry = remembered(obs);
      if (entry) entry.confirmedAt = now();
    },
    confirmedAt: (obs) => remembered(obs)?.confirmedAt,
    forget: (obs) => void sent.delete(predicateKey(obs)),
    forgetUnconfirmed() {
      for (const [key, entry] of sent) if (entry.confirmedAt === undefined) sent.delete(key);
    },
    forgetEnded(running) {
      for (const [key, entry] of sent)
        if (entry.hash === GONE && !running(key.slice(0, key.lastIndexOf('#')))) sent.delete(key);
    },
    reset() {
      for (const [key, entry] of sent) if (entry.hash !== GONE || entry.confirmedAt === undefined) sent.delete(key);
    },
    size: () => sent.size,
    unconfirmed: () => [...sent.values()].filter((entry) => entry.confirmedAt === undefined).length,
  };
}
