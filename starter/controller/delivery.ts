import { createHash } from 'node:crypto';
import type { Observation } from '../../model/messages';
import { workflowId } from '../../model/naming';

/**
 * The delivery table: what was delivered to whom and when, one row per workflow and incarnation (workflow id + uid).
 * The only memory of the starter's sends: the change predicate (`isNews`), the repair (`delivered`) and the leadership
 * changes (`afterTakeover`) are pure functions over it. What waits to be sent is the queue's (queue.ts), not here.
 */
export interface Delivery {
  workflowId: string;
  uid: string;
  /** Hash of the Observation delivered (`GONE` for a gone one): what the workflow read last. */
  hash: string;
  /** When it was delivered (ms since the epoch). */
  at: number;
  /** The run it went to, when the call said (a start, a signal-with-start). */
  runId?: string;
}

export type DeliveryTable = Map<string, Delivery>;

/** The predicate's key, without the cluster's prefix (the repair maps it, see `withoutEnded`). */
export const deliveryKey = (obs: Observation): string => `${workflowId(obs.ref)}#${obs.uid}`;

/** SHA-256 of the JSON with object keys sorted, so key order never looks like a change. */
export function stableHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value, sortKeys)).digest('hex');
}

function sortKeys(_key: string, value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Every `gone` of an incarnation is the same news, whatever projection the watch or a repair gave it. */
export const GONE = 'gone';
export const hashOf = (obs: Observation): string => (obs.gone ? GONE : stableHash(obs));

/** The row of `obs` when it is what was delivered (same incarnation, same content). */
export function delivered(table: ReadonlyMap<string, Delivery>, obs: Observation): Delivery | undefined {
  const row = table.get(deliveryKey(obs));
  return row?.hash === hashOf(obs) ? row : undefined;
}

/**
 * The change predicate: `obs` is news unless its workflow got this very Observation already. Status writes,
 * resourceVersion bumps and unrelated annotations never reach the projection, so they are no news.
 */
export const isNews = (table: ReadonlyMap<string, Delivery>, obs: Observation): boolean => !delivered(table, obs);

/** `obs` was delivered at `at` (to run `runId`, when known). */
export function recordDelivery(table: DeliveryTable, obs: Observation, at: number, runId?: string): void {
  const key = deliveryKey(obs);
  table.set(key, { workflowId: workflowId(obs.ref), uid: obs.uid, hash: hashOf(obs), at, ...(runId ? { runId } : {}) });
}

/**
 * What a new leader keeps of the table of an earlier term: after a lapse of its own (`continued`) all of it (nobody
 * else sent anything); after another starter's term only the delivered `gone`s (a workflow told its object is gone
 * stays told, whoever leads), so every live object is sent once again.
 */
export function afterTakeover(table: ReadonlyMap<string, Delivery>, continued: boolean): DeliveryTable {
  return new Map([...table].filter(([, row]) => continued || row.hash === GONE));
}

/**
 * The table without the `gone`s of workflows that no longer run (`running`, by id without the cluster's prefix): they
 * are kept only so that a check of the running workflows does not tell a finishing one again.
 */
export function withoutEnded(table: ReadonlyMap<string, Delivery>, running: (id: string) => boolean): DeliveryTable {
  return new Map([...table].filter(([, row]) => row.hash !== GONE || running(row.workflowId)));
}
