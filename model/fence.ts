// The late-write fence, whole: a push attempt run as a local activity inside its workflow's task may be lost with
// its worker while its MidoNet writes are still on the way; the workflow does not wait for it (it waits for a regular
// activity's heartbeat timeout, never for a local one's). So each such attempt writes, before its first MidoNet write,
// an entry in its Translation's `status.unsettledWrites` saying until when its writes may land, removes it when it
// ends, and a deletion waits until every entry has passed: a write landing after the deletion would leave a resource
// nobody records. Its window is derived here from the three timeouts it counts on, which are defined here too and
// used from here (workflows/activities.ts, activities/midonet/http.ts): fence.test.ts reads them where they are used.
// Pure: the caller gives the time and the attempt's ID.

/** The startToClose timeout of an object's sync or finalization, a local activity (workflows/activities.ts). */
export const LOCAL_SYNC_TIMEOUT_MS = 20_000;

/** The MidoNet transport's timeout per HTTP exchange (activities/midonet/http.ts). */
export const MIDONET_EXCHANGE_TIMEOUT_MS = 10_000;

/**
 * How long after it was sent a write that got no answer may still be carried out by MidoNet (a request it had read,
 * then served late), for a transport timing out after `timeoutMs`: the transport reports it in its failure, and the
 * client waits it out before failing.
 */
export const lateWriteWindow = (timeoutMs: number) => 2 * timeoutMs;

export const MIDONET_LATE_WRITE_MS = lateWriteWindow(MIDONET_EXCHANGE_TIMEOUT_MS);

/**
 * How long a local attempt's MidoNet writes may land after it starts: it runs at most `LOCAL_SYNC_TIMEOUT_MS`, a
 * request it sent last is answered or abandoned within the transport's timeout, and MidoNet may carry out an
 * unanswered write up to `MIDONET_LATE_WRITE_MS` after it was sent.
 */
export const ATTEMPT_SETTLE_MS = LOCAL_SYNC_TIMEOUT_MS + MIDONET_EXCHANGE_TIMEOUT_MS + MIDONET_LATE_WRITE_MS;

/**
 * The longest wait for a lost attempt's writes a local activity does itself (its workflow task lasts 10 s); a longer
 * one is waited by the workflow, with a timer.
 */
export const LOCAL_WAIT_MS = 6_000;

/** A push attempt whose MidoNet writes may land until `until` (an entry of `status.unsettledWrites`). */
export interface UnsettledWrite {
  attempt: string;
  /** RFC 3339. */
  until: string;
}

/** An attempt's entry in `status.unsettledWrites`: added before its first write, removed when it ends. */
export type FenceChange = { add: UnsettledWrite } | { remove: string };

/** The entry a local attempt starting at `now` adds. */
export function openFence(attempt: string, now: number): UnsettledWrite {
  return { attempt, until: new Date(now + ATTEMPT_SETTLE_MS).toISOString() };
}

/** The entries still in the future after `change` (past ones are dropped: their writes have landed). */
export function nextFence(current: UnsettledWrite[] | undefined, change: FenceChange | undefined, now: Date) {
  const live = (current ?? []).filter((w) => Date.parse(w.until) > now.getTime());
  if (!change) return live;
  if ('remove' in change) return live.filter((w) => w.attempt !== change.remove);
  return [...live.filter((w) => w.attempt !== change.add.attempt), change.add];
}

/** The latest `until` still in the future, if any. */
export function unsettledUntil(writes: UnsettledWrite[] | undefined, now: Date): string | undefined {
  const latest = Math.max(0, ...(writes ?? []).map((w) => Date.parse(w.until)));
  return latest > now.getTime() ? new Date(latest).toISOString() : undefined;
}

/** Writes may land until `until`: longer than a local activity should wait before deleting. */
export const settlesLater = (until: string | undefined, now: number) =>
  !!until && Date.parse(until) - now > LOCAL_WAIT_MS;
