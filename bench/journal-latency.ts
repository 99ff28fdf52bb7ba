// When a change reached MidoNet, read from the emulator's write journal (the arrival time of each write, in ms) rather
// than from polls of its state: the harness then resolves milliseconds on both sides, however slowly it polls.
import { mentions, uuidsIn, type JournalEntry } from '../deploy/local/midonet/journal';

/** A change as the churn waits for it: written at `at`, landed once the `present` keys are there and `absent` not. */
export interface LandingChange {
  at: number;
  /** Emulator state keys, `<Kind>:<id or identifying fields>` (bench/objects.ts emulatorState). */
  present: Iterable<string>;
  absent: Iterable<string>;
}

const succeeded = (entry: JournalEntry) => entry.status >= 200 && entry.status < 300;
const removes = (entry: JournalEntry, id: string) =>
  entry.method === 'DELETE' || (entry.cascaded ?? []).some((key) => key.toLowerCase().includes(id));

/** The writes of a journal, indexed by every UUID they mention, each list oldest first. */
export function indexJournal(journal: JournalEntry[]): Map<string, JournalEntry[]> {
  const index = new Map<string, JournalEntry[]>();
  for (const entry of journal.filter(succeeded)) {
    const ids = new Set(uuidsIn([entry.path, entry.id ?? '', ...(entry.cascaded ?? [])].join(' ')));
    for (const id of ids) (index.get(id) ?? index.set(id, []).get(id)!).push(entry);
  }
  return index;
}

/**
 * The arrival time of the first write since `at` that made `key` true (`present`: written, `absent`: deleted or
 * cascaded away), found as the first write naming every UUID of the key; undefined when the journal has none.
 */
function firstWrite(index: Map<string, JournalEntry[]>, key: string, at: number, present: boolean) {
  const ids = uuidsIn(key.slice(key.indexOf(':') + 1));
  if (ids.length === 0) return undefined;
  const [first, ...rest] = ids as [string, ...string[]];
  return index
    .get(first)
    ?.find(
      (entry) =>
        entry.receivedAt >= at &&
        rest.every((id) => mentions(entry, id)) &&
        (present ? entry.method !== 'DELETE' : removes(entry, first)),
    )?.receivedAt;
}

/**
 * When the last of a change's writes arrived: the latest, over its keys, of the first write since the change that made
 * each key true. Undefined when one of them is not in the journal (a key of no UUID, or a journal that dropped it).
 */
export function landedAt(index: Map<string, JournalEntry[]>, change: LandingChange): number | undefined {
  const times = [
    ...[...change.present].map((key) => firstWrite(index, key, change.at, true)),
    ...[...change.absent].map((key) => firstWrite(index, key, change.at, false)),
  ];
  if (times.length === 0 || times.some((t) => t === undefined)) return undefined;
  return Math.max(...(times as number[]));
}
