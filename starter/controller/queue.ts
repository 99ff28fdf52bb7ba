import { setMaxListeners } from 'node:events';
import type { Observation } from '../../model/messages';

/**
 * The work queue between source and handler, as controller-runtime's: it holds object keys, not objects. A key waits
 * at most once per workflow id (a burst of changes to one object is one entry), and its Observations are read from
 * the informer's cache (`resolve`) only when the window closes, so what goes out is the newest. A key offered while
 * its workflow's work runs is read at once into that work (a retry then sends the newest, never an outdated one).
 *
 * An Observation with no object left to read (a `gone`: the deleted object, as a delete event carries it; or one a
 * repair must send whatever was sent before) is told as it is, and waits in order before what the keys read: a new
 * incarnation never overwrites the `gone` of the old one.
 *
 * A group's first entry opens a window of `debounceMs`; it is not extended by later offers, so a steady stream of
 * updates still goes out every window. One group runs at a time per workflow id (signals to one workflow stay in
 * order); different ids run in parallel.
 *
 * A group that `hold.awaits` more when its window closes waits another window, up to `hold.ms` in all: what is sure
 * to follow (a peer pod's PeerPod, deleted by the garbage collector after its Pod) then goes in the same signal.
 */
export interface WorkQueue {
  /** The object `key` changed: its workflow `id` is sent what `resolve` reads of it when the window closes. */
  offer(id: string, key: string): void;
  /** Sends `obs` as it is (see above). */
  tell(id: string, obs: Observation): void;
  /** Drop everything pending and abort the work in flight. */
  clear(): void;
  /** `clear()`, refuse further offers, and wait until the work in flight has returned. */
  stop(): Promise<void>;
  /** Keys and Observations waiting or in flight. */
  size(): number;
}

/** Processes a group until its map (by uid) is empty or `signal` aborts; removes what it is done with. Must not reject. */
export type Work = (pending: Map<string, Observation>, signal: AbortSignal) => Promise<void>;

export interface WorkQueueOptions {
  debounceMs: number;
  /** What workflow `id` is sent of object `key` now, read from the cache (none when it is gone from it). */
  resolve: (id: string, key: string) => Observation[];
  /** The change predicate: what its workflow has already is not sent, unless it replaces what waits to be. */
  isNews: (obs: Observation) => boolean;
  work: Work;
  /** Called when a key was offered again while it waited: one send instead of two. */
  onCoalesced?: () => void;
  /** A group whose pending `awaits` a change sure to follow waits for it, at most `ms`; then it is sent as it is. */
  hold?: { awaits: (pending: ReadonlyMap<string, Observation>) => boolean; ms: number };
}

interface Group {
  keys: Set<string>;
  pending: Map<string, Observation>;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  /** When its first window closed awaiting more: the hold's start. */
  heldSince?: number;
}

/** One controller aborts every call in flight: each adds a listener, many more than the default warning's 10. */
function abortController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const { debounceMs, resolve, isNews, work, onCoalesced, hold } = options;
  const groups = new Map<string, Group>();
  let controller = abortController();
  let stopped = false;

  const read = (id: string, group: Group) => {
    for (const key of group.keys)
      for (const obs of resolve(id, key))
        if (group.pending.has(obs.uid) || isNews(obs)) group.pending.set(obs.uid, obs);
    group.keys.clear();
  };
  const schedule = (id: string, group: Group) => {
    group.timer = setTimeout(() => run(id, group), debounceMs);
  };
  const holds = (group: Group) => {
    if (!hold?.awaits(group.pending)) return false;
    group.heldSince ??= Date.now();
    return Date.now() - group.heldSince < hold.ms;
  };
  const run = (id: string, group: Group) => {
    group.timer = undefined;
    read(id, group);
    if (holds(group)) return schedule(id, group);
    group.heldSince = undefined;
    const { signal } = controller;
    group.running = work(group.pending, signal).finally(() => {
      group.running = undefined;
      if (signal.aborted || groups.get(id) !== group) return;
      // What was told after the work's last look waits for its own window.
      if (group.pending.size + group.keys.size > 0) schedule(id, group);
      else groups.delete(id);
    });
  };
  const groupOf = (id: string) => {
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { keys: new Set(), pending: new Map() }));
    return group;
  };
  const wake = (id: string, group: Group) => {
    if (!group.timer && !group.running) schedule(id, group);
  };
  const clear = () => {
    controller.abort();
    controller = abortController();
    for (const group of groups.values()) clearTimeout(group.timer);
    groups.clear();
  };

  return {
    offer(id, key) {
      if (stopped) return;
      const group = groupOf(id);
      if (group.keys.has(key)) onCoalesced?.();
      group.keys.add(key);
      // The work in flight reads its map before every attempt: it sends the newest.
      if (group.running) read(id, group);
      wake(id, group);
    },
    tell(id, obs) {
      if (stopped) return;
      const group = groupOf(id);
      group.pending.set(obs.uid, obs);
      wake(id, group);
    },
    clear,
    async stop() {
      stopped = true;
      const running = [...groups.values()].flatMap((group) => (group.running ? [group.running] : []));
      clear();
      await Promise.allSettled(running);
    },
    size: () => [...groups.values()].reduce((sum, group) => sum + group.pending.size + group.keys.size, 0),
  };
}
