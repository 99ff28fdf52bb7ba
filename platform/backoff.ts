/** Exponential backoff shared by the source (informer restarts), the handler (Temporal retries) and the lease. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** Delay before retry number `attempt` (0-based): initial, doubled each time, capped. */
export const backoffDelay = (backoff: Backoff, attempt: number): number =>
  Math.min(backoff.maxMs, backoff.initialMs * 2 ** attempt);

/** Resolves after `ms`, or at once when `signal` aborts (the caller checks `signal.aborted`). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
