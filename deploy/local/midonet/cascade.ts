// Deletes a record and follows the bindings declared in kinds.ts, the way ZOOM does in one transaction.
import { KINDS, type KindName } from './kinds';
import type { State } from './state';

type Row = Record<string, unknown>;

export function rows(state: State, kind: KindName): Record<string, Row> {
  return state[KINDS[kind].table] as unknown as Record<string, Row>;
}

/** Returns what went with the record, as `<Kind> <key>`, for the write journal. */
export function deleteRecord(state: State, kind: KindName, key: string): string[] {
  const decl = KINDS[kind];
  const table = rows(state, kind);
  const record = table[key];
  if (!record) return [];
  delete table[key];
  const cascaded: string[] = [];
  for (const { kind: child, via } of decl.cascade) {
    for (const [childKey, row] of Object.entries(rows(state, child))) {
      // A row an earlier cascade of this delete already took is listed once, by that cascade.
      if (row[via] === key && rows(state, child)[childKey])
        cascaded.push(`${child} ${childKey}`, ...deleteRecord(state, child, childKey));
    }
  }
  for (const { kind: other, field, alsoClear = [] } of decl.clear) {
    for (const row of Object.values(rows(state, other))) {
      if (row[field] !== key) continue;
      row[field] = null;
      for (const extra of alsoClear) row[extra] = null;
    }
  }
  for (const { kind: owner, via, list } of decl.detach) {
    const ownerRow = rows(state, owner)[record[via] as string];
    if (ownerRow) ownerRow[list] = (ownerRow[list] as string[]).filter((id) => id !== key);
  }
  return cascaded;
}
