import { setMaxListeners } from 'node:events';
import type { Observation } from '../../model/messages';
import { workflowId } from '../../model/naming';

/**
 * The work queue between predicate and handler. Observations are grouped by workflow id and, inside that, kept one
 * per uid: a newer Observation of the same incarnation replaces the older in place (latest wins, position kept), and
 * a new incarnation queues behind the old one, so a `gone` is never overwritten by the next object of that name.
 * A group's first Observation opens a window of `debounceMs`; at its end the group's work runs with whatever is
 * latest. The window is not extended by later events, so a steady stream of updates still goes out every window.
 * One group runs at a time per workflow id (signals to one workflow stay in order); different ids run in parallel.
 */
export interface WorkQueue {
  offer(obs: Observation): void;
  /** Drop everything pending and abort the work in flight. */
  clear(): void;
  /** `clear()`, refuse further offers, and wait until the work in flight has returned. */
  stop(): Promise<void>;
  /** Observations waiting or in flight. */
  size(): number;
}

/** Processes a group until its map is empty or `signal` aborts; removes what it is done with. Must not reject. */
export type Work = (pending: Map<string, Observation>, signal: AbortSignal) => Promise<void>;

export interface WorkQueueOptions {
  debounceMs: number;
  work: Work;
  /** Called when an Observation replaced a pending one of the same incarnation. */
  onCoalesced?: () => void;
}

interface Group {
  pending: Map<string, Observation>;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
}

/** One controller aborts every call in flight: each adds a listener, many more than the default warning's 10. */
function abortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export function createWorkQueue({ debounceMs, work, onCoalesced }: WorkQueueOptions): WorkQueue {
  const groups = new Map<string, Group>();
  let controller = abortController();
  let stopped = false;

  const schedule = (id: string, group: Group) => {
    group.timer = setTimeout(() => run(id, group), debounceMs);
  };

  const run = (id: string, group: Group) => {
    group.timer = undefined;
    const { signal } = controller;
    group.running = work(group.pending, signal).finally(() => {
      group.running = undefined;
      if (signal.aborted || groups.get(id) !== group) return;
      // Observations that arrived after the work's last look wait for their own window.
      if (group.pending.size > 0) schedule(id, group);
      else groups.delete(id);
    });
  };

  const clear = () => {
    controller.abort();
    controller = abortController();
    for (const group of groups.values()) clearTimeout(group.timer);
    groups.clear();
  };

  return {
    offer(obs) {
      if (stopped) return;
      const id = workflowId(obs.ref);
      let group = groups.get(id);
      if (!group) groups.set(id, (group = { pending: new Map() }));
      if (group.pending.has(obs.uid)) onCoalesced?.();
      group.pending.set(obs.uid, obs);
      if (!group.timer && !group.running) schedule(id, group);
    },
    clear,
    async stop() {
      stopped = true;
      const running = [...groups.values()].flatMap((group) => (group.running ? [group.running] : []));
      clear();
      await Promise.allSettled(running);
    },
    size: () => [...groups.values()].reduce((sum, group) => sum + group.pending.size, 0),
  };
}
