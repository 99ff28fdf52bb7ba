// The emulator's write journal in the chaos diagnosis: for a resource found missing from MidoNet (or left there), which writes
// created, changed or removed it (or its parent, or its next-hop port) and when, relative to the run's start. A
// write the emulator carried out after its client had given up (the 'midonet-timeout' fault) shows as such.
import { mentions, UUIDS, uuidsIn, type JournalEntry } from '../../deploy/local/midonet/journal';
import { expectedTranslations, type Snapshot, type Violation } from './invariants';

/** One id to look up in the journal, and why. */
export interface JournalSubject {
  id: string;
  /** What it is to the missing resource, e.g. `Route, missing`, `parent`, `nextHopPort`. */
  role: string;
  /** Only the writes about the object itself (its id, or a cascade taking it), not those of its children. */
  itself: boolean;
}

const short = (text: string) => text.replace(UUIDS, (u) => `${u.slice(0, 8).toLowerCase()}…`);
const seconds = (ms: number, startedAt: number) => `+${((ms - startedAt) / 1000).toFixed(1)}s`;

/**
 * The ids to look up for the 'midonet' violations that report something missing (`missing from MidoNet: <Kind>
 * <key>`, see checkMidonet): the resource's own id with its parent and next-hop port as the expected Translations
 * name them; for kinds without an id (links, bindings, table entries) each id in the key. And for what is left behind
 * (`orphaned in MidoNet: <Kind> <key>, …`), its own ids.
 */
export function journalSubjects(violations: Violation[], snapshot: Snapshot): JournalSubject[] {
  const expected = new Map<string, { parent: string; nextHopPort?: string }>();
  for (const { translations } of expectedTranslations(snapshot)) {
    for (const r of translations.flatMap((t) => t.resources)) {
      const body = JSON.parse(r.body) as { id?: unknown; nextHopPort?: unknown };
      if (typeof body.id === 'string')
        expected.set(body.id.toLowerCase(), {
          parent: r.parent,
          ...(typeof body.nextHopPort === 'string' ? { nextHopPort: body.nextHopPort } : {}),
        });
    }
  }
  const out = new Map<string, JournalSubject>();
  const add = (subject: JournalSubject) => {
    if (!out.has(subject.id)) out.set(subject.id, subject);
  };
  for (const v of violations) {
    // Left behind: who created it, and whether a deletion ever reached it (a write landing after it, a lost DELETE).
    const orphaned = v.invariant === 'midonet' ? /orphaned in MidoNet: (\S+) (\S+?),/.exec(v.detail) : null;
    if (orphaned) {
      for (const id of uuidsIn(orphaned[2]!)) add({ id, role: `${orphaned[1]!}, orphaned`, itself: false });
      continue;
    }
    const missing = v.invariant === 'midonet' ? /missing from MidoNet: (\S+) (\S+)/.exec(v.detail) : null;
    if (!missing) continue;
    const [, kind, key] = missing as unknown as [string, string, string];
    const ids = uuidsIn(key);
    if (ids.length !== 1 || ids[0] !== key.toLowerCase()) {
      for (const id of ids) add({ id, role: `in ${kind}, missing`, itself: true });
      continue;
    }
    const id = ids[0];
    add({ id, role: `${kind}, missing`, itself: false });
    const known = expected.get(id);
    if (known?.parent) add({ id: known.parent.toLowerCase(), role: `parent of ${short(id)}`, itself: true });
    if (known?.nextHopPort)
      add({ id: known.nextHopPort.toLowerCase(), role: `nextHopPort of ${short(id)}`, itself: true });
  }
  return [...out.values()];
}

/** `+198.3s DELETE /routes/337d304f… 204 (received +186.3s, delayed 12000 ms, client gone)`; UUIDs shortened. */
export function formatJournalEntry(entry: JournalEntry, id: string, startedAt: number): string {
  const notes: string[] = [];
  if (entry.answeredAt - entry.receivedAt >= 1_000) notes.push(`received ${seconds(entry.receivedAt, startedAt)}`);
  if (entry.delayMs) notes.push(`delayed ${entry.delayMs} ms`);
  if (entry.clientGone) notes.push('client gone');
  // Of what a DELETE cascaded, the keys naming the id; the rest only counted.
  const cascaded = entry.cascaded ?? [];
  const naming = cascaded.filter((k) => k.toLowerCase().includes(id.toLowerCase()));
  const others = cascaded.length - naming.length;
  const rest = others ? [naming.length ? `${others} more` : `${others} record${others > 1 ? 's' : ''}`] : [];
  const cascade = cascaded.length ? ` cascaded ${[...naming.map(short), ...rest].join(', ')}` : '';
  const status = entry.status === 0 ? 'dropped unanswered' : String(entry.status);
  return `${seconds(entry.answeredAt, startedAt)} ${entry.method} ${short(entry.path)} ${status}${cascade}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}

/** The diagnosis lines for one subject: its last `max` writes, one line each, or a line saying there are none. */
export function journalLines(subject: JournalSubject, entries: JournalEntry[], startedAt: number, max = 12): string[] {
  const id = subject.id.toLowerCase();
  const about = entries.filter(
    (e) =>
      mentions(e, id) &&
      (!subject.itself || e.id === id || (e.cascaded ?? []).some((k) => k.toLowerCase().includes(id))),
  );
  const head = `journal ${short(id)} (${subject.role}):`;
  if (!about.length) return [`${head} no write names it`];
  const shown = about.slice(-max);
  return [
    ...(about.length > shown.length ? [`${head} … ${about.length - shown.length} earlier writes`] : []),
    ...shown.map((e) => `${head} ${formatJournalEntry(e, id, startedAt)}`),
  ];
}
