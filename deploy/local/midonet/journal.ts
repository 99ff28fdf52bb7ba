// The write journal: every API write (POST, PUT, DELETE below /midonet-api, login excluded) with when it arrived,
// when it was answered, what it touched and what its DELETE cascaded away, so that a test finding a resource gone
// can ask who removed it and when. A request delayed by a fault past its client's deadline is still carried out;
// `clientGone` shows that the write landed after its client had given up.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One API write as the emulator carried it out (or dropped it). Plain JSON; bodies are left out (the id is what a reader looks for, and 50,000 bodies would weigh). */
export interface JournalEntry {
  /** Epoch ms when the request arrived, before any injected delay. */
  receivedAt: number;
  /** Epoch ms when it was answered (or dropped). */
  answeredAt: number;
  method: string;
  /** Below /midonet-api, query included. */
  path: string;
  /** The answer's status; 0 when a fault dropped the connection unanswered. */
  status: number;
  /** Injected latency, when a fault added some. */
  delayMs?: number;
  /** The client's connection was already closed when the emulator answered: nobody saw the outcome. */
  clientGone: boolean;
  /** The created or affected resource: a POST body's `id` (or the created Location's), else the path's last UUID. */
  id?: string;
  /** What a DELETE took with it, as `<Kind> <key>` (e.g. `Route 337d…`). */
  cascaded?: string[];
}

/** Global: every UUID in a text. */
export const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** The UUIDs in a text, in order, lower case. */
export const uuidsIn = (text: string): string[] => (text.match(UUIDS) ?? []).map((u) => u.toLowerCase());

/** Whether an entry's path, id or cascaded keys name `id` (case-insensitive). */
export function mentions(entry: JournalEntry, id: string): boolean {
  const wanted = id.toLowerCase();
  return [entry.path, entry.id ?? '', ...(entry.cascaded ?? [])].some((text) => text.toLowerCase().includes(wanted));
}

/** The resource a write is about, from what the request and its answer show. */
export function affectedId(
  method: string,
  path: string,
  body: unknown,
  location: string | undefined,
): string | undefined {
  if (method === 'POST') {
    let id: unknown;
    try {
      id = typeof body === 'string' && body ? (JSON.parse(body) as { id?: unknown }).id : undefined;
    } catch {
      id = undefined;
    }
    if (typeof id === 'string' && id) return id.toLowerCase();
    return location ? uuidsIn(location).pop() : undefined;
  }
  return uuidsIn(path).pop();
}

// 50,000 entries (a few MB) outlast the writes of a long chaos run; past that the oldest are dropped, so a
// journal that does not mention an id only proves nothing when it is full.
export const JOURNAL_LIMIT = 50_000;

/** A bounded ring of entries, oldest dropped first. */
export class Journal {
  private entries: JournalEntry[] = [];
  /** Where the oldest entry sits once the ring is full. */
  private head = 0;

  constructor(private readonly limit = JOURNAL_LIMIT) {}

  add(entry: JournalEntry): void {
    if (this.entries.length < this.limit) {
      this.entries.push(entry);
      return;
    }
    this.entries[this.head] = entry;
    this.head = (this.head + 1) % this.limit;
  }

  /** Oldest first; only the entries mentioning `id` when given. */
  list(id?: string): JournalEntry[] {
    const ordered = [...this.entries.slice(this.head), ...this.entries.slice(0, this.head)];
    return id === undefined ? ordered : ordered.filter((e) => mentions(e, id));
  }

  clear(): void {
    this.entries = [];
    this.head = 0;
  }

  /**
   * Kept across a clean restart (close() saves, start-up loads) so that what happened before a restart can still be
   * asked about after it. Written whole at close only: a killed emulator loses the entries since its last start.
   */
  async save(file: string): Promise<void> {
    const tmp = `${file}.${process.pid}.tmp`;
    await mkdir(dirname(file), { recursive: true });
    await writeFile(tmp, JSON.stringify(this.list()));
    await rename(tmp, file);
  }

  /** Adds the entries saved in `file`; a missing or unreadable file adds none (the journal only informs). */
  async load(file: string): Promise<void> {
    let saved: unknown;
    try {
      saved = JSON.parse(await readFile(file, 'utf8'));
    } catch {
      return;
    }
    if (Array.isArray(saved)) for (const entry of saved as JournalEntry[]) this.add(entry);
  }
}

/** Where the journal of an emulator persisting to `dataFile` is kept. */
export const journalFile = (dataFile: string): string => `${dataFile}.journal.json`;
