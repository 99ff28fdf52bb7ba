import type { JournalEntry } from '../deploy/local/midonet/journal';
import { indexJournal, landedAt } from './journal-latency';

const id = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const write = (receivedAt: number, method: string, path: string, more: Partial<JournalEntry> = {}): JournalEntry => ({
  receivedAt,
  answeredAt: receivedAt + 2,
  method,
  path,
  status: method === 'DELETE' ? 204 : 201,
  clientGone: false,
  ...more,
});

const journal = [
  // An older incarnation's port, deleted before the change.
  write(900, 'DELETE', `/ports/${id(2)}`, { id: id(2) }),
  write(1_010, 'POST', `/bridges/${id(1)}/ports`, { id: id(2) }),
  write(1_020, 'PUT', `/hosts/${id(9)}/ports/${id(2)}`, { id: id(2) }),
  write(1_030, 'POST', `/bridges/${id(1)}/ports`, { id: id(3), status: 409 }),
  write(1_040, 'DELETE', `/ports/${id(4)}`, { id: id(4), cascaded: [`Route ${id(5)}`] }),
];
const index = indexJournal(journal);

describe('landedAt (a change reached MidoNet when the last of its writes arrived)', () => {
  it('is the latest of the first writes since the change that made each key true', () => {
    const change = { at: 1_000, present: [`Port:${id(2)}`, `HostInterfacePort:${id(9)}/${id(2)}/eth0`], absent: [] };
    expect(landedAt(index, change)).toBe(1_020);
  });

  it('counts a key as gone at its DELETE, or at the DELETE that cascaded it away', () => {
    expect(landedAt(index, { at: 1_000, present: [], absent: [`Port:${id(4)}`, `Route:${id(5)}`] })).toBe(1_040);
  });

  it('ignores writes before the change, and refused ones', () => {
    expect(landedAt(index, { at: 1_000, present: [], absent: [`Port:${id(2)}`] })).toBeUndefined();
    expect(landedAt(index, { at: 1_000, present: [`Port:${id(3)}`], absent: [] })).toBeUndefined();
  });

  it('says nothing of a key the journal cannot name (no UUID) or of a change with no key', () => {
    expect(landedAt(index, { at: 0, present: ['IpAddrGroupAddr:10.0.0.1'], absent: [] })).toBeUndefined();
    expect(landedAt(index, { at: 0, present: [], absent: [] })).toBeUndefined();
  });
});
