// The direct reconciler's work queue, as client-go's workqueue with its default per-item rate limiter: a key waits
// in the queue at most once, no two workers hold the same key (a key added while it is being reconciled runs again
// afterwards), and a failed key comes back after its own exponential delay, 5 ms doubled up to 1,000 s.
import { backoffDelay, type Backoff } from '../../platform/backoff';

export const CLIENT_GO_BACKOFF: Backoff = { initialMs: 5, maxMs: 1_000_000 };

export interface KeyQueue {
  add(key: string): void;
  /** Nothing queued, in flight or waiting for a retry. */
  idle(): boolean;
  stats(): { reconciles: number; retries: number; failures: Record<string, number> };
  stop(): Promise<void>;
}

export function createKeyQueue(
  workers: number,
  reconcile: (key: string) => Promise<void>,
  backoff = CLIENT_GO_BACKOFF,
): KeyQueue {
  const queue: string[] = [];
  const dirty = new Set<string>();
  const processing = new Set<string>();
  const attempts = new Map<string, number>();
  const retries = new Set<NodeJS.Timeout>();
  const stats = { reconciles: 0, retries: 0, failures: {} as Record<string, number> };
  let idleWorkers: (() => void)[] = [];
  let stopped = false;

  const enqueue = (key: string) => {
    queue.push(key);
    idleWorkers.shift()?.();
  };
  function add(key: string): void {
    if (stopped || dirty.has(key)) return;
    dirty.add(key);
    if (!processing.has(key)) enqueue(key);
  }
  function retry(key: string, error: unknown): void {
    const attempt = attempts.get(key) ?? 0;
    attempts.set(key, attempt + 1);
    stats.retries++;
    const type = (error as { type?: string }).type ?? (error instanceof Error ? error.name : 'Unknown');
    stats.failures[type] = (stats.failures[type] ?? 0) + 1;
    const timer = setTimeout(
      () => {
        retries.delete(timer);
        add(key);
      },
      backoffDelay(backoff, attempt),
    );
    retries.add(timer);
  }
  async function worker(): Promise<void> {
    while (!stopped) {
      const key = queue.shift();
      if (key === undefined) {
        await new Promise<void>((resolve) => idleWorkers.push(resolve));
        continue;
      }
      dirty.delete(key);
      processing.add(key);
      try {
        await reconcile(key);
        attempts.delete(key);
      } catch (error) {
        retry(key, error);
      } finally {
        stats.reconciles++;
        processing.delete(key);
        if (dirty.has(key)) enqueue(key);
      }
    }
  }
  const running = Array.from({ length: workers }, worker);
  return {
    add,
    idle: () => queue.length === 0 && processing.size === 0 && retries.size === 0,
    stats: () => ({ ...stats, failures: { ...stats.failures } }),
    async stop() {
      stopped = true;
      retries.forEach(clearTimeout);
      idleWorkers.forEach((wake) => wake());
      idleWorkers = [];
      await Promise.all(running);
    },
  };
}
