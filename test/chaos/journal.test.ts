// The journal lines of the chaos diagnosis: which ids a 'midonet' violation leads to, and how a write reads.
import type { JournalEntry } from '../../deploy/local/midonet/journal';
import type { Snapshot, Violation } from './invariants';
import { formatJournalEntry, journalLines, journalSubjects } from './journal';
import { HAND_WRITTEN_LABEL } from './ops';

const route = '337d304f-0000-4000-8000-000000000001';
const port = '8511aaaa-0000-4000-8000-000000000002';
const router = 'aa00bbbb-0000-4000-8000-000000000003';
const chain = '1754e202-0000-4000-8000-000000000004';
const started = 1_000_000;

const entry = (e: Partial<JournalEntry> & Pick<JournalEntry, 'method' | 'path'>): JournalEntry => ({
  receivedAt: started + 198_300,
  answeredAt: started + 198_300,
  status: 204,
  clientGone: false,
  ...e,
});

/** A snapshot whose only expected resource outside the globals is a hand-written Translation's route. */
function snapshotWithRoute(): Snapshot {
  const body = JSON.stringify({
    id: route,
    type: 'Normal',
    dstNetworkAddr: '10.0.0.0',
    dstNetworkLength: 24,
    nextHopPort: port,
  });
  return {
    tenant: 'tenant',
    hosts: [],
    peerPodRuntimeClasses: [],
    nodes: [],
    pods: [],
    services: [],
    endpoints: [],
    translations: [
      {
        metadata: { name: 'hw', namespace: 'default', labels: { [HAND_WRITTEN_LABEL]: 'true' } },
        resources: [{ kind: 'Route', parent: router, body }],
      },
    ],
    peerPods: [],
    emulator: {} as Snapshot['emulator'],
    runningWorkflows: [],
  };
}

describe('chaos journal lines', () => {
  test('a missing route leads to its own id, its parent router and its next-hop port; a resource left behind to its own id; other violations to nothing', () => {
    const violations: Violation[] = [
      { invariant: 'midonet', object: 'Node node-0', detail: `missing from MidoNet: Route ${route}` },
      {
        invariant: 'midonet',
        object: `Chain ${chain}`,
        detail: `orphaned in MidoNet: Chain ${chain}, listed by no Translation`,
      },
      { invariant: 'status', object: 'Node node-0', detail: `missing from MidoNet: Route ${router}` },
    ];
    expect(journalSubjects(violations, snapshotWithRoute())).toEqual([
      { id: route, role: 'Route, missing', itself: false },
      { id: router, role: 'parent of 337d304f…', itself: true },
      { id: port, role: 'nextHopPort of 337d304f…', itself: true },
      { id: chain, role: 'Chain, orphaned', itself: false },
    ]);
  });

  test('a missing entry without an id (a link) leads to each id of its key', () => {
    const violations: Violation[] = [
      { invariant: 'midonet', object: 'Node node-0', detail: `missing from MidoNet: PortLink ${port}↔${route}` },
    ];
    expect(journalSubjects(violations, snapshotWithRoute()).map((s) => [s.id, s.role])).toEqual([
      [port, 'in PortLink, missing'],
      [route, 'in PortLink, missing'],
    ]);
  });

  test.each([
    [
      'a DELETE delayed past its client’s deadline',
      entry({
        method: 'DELETE',
        path: `/routes/${route}`,
        receivedAt: started + 186_300,
        delayMs: 12_000,
        clientGone: true,
      }),
      '+198.3s DELETE /routes/337d304f… 204 (received +186.3s, delayed 12000 ms, client gone)',
    ],
    [
      'a port DELETE that took the route with it',
      entry({
        method: 'DELETE',
        path: `/ports/${port}`,
        receivedAt: started + 201_000,
        answeredAt: started + 201_000,
        cascaded: [`Route ${route}`, `Route ${router}`],
      }),
      '+201.0s DELETE /ports/8511aaaa… 204 cascaded Route 337d304f…, 1 more',
    ],
    [
      'a write a fault dropped',
      entry({ method: 'POST', path: `/routers/${router}/routes`, status: 0 }),
      '+198.3s POST /routers/aa00bbbb…/routes dropped unanswered',
    ],
  ])('%s reads as one line', (_what, e, line) => {
    expect(formatJournalEntry(e, route, started)).toBe(line);
  });

  test('for a parent, only the writes about the parent itself, the last ones first cut; none is said so', () => {
    const entries = [
      entry({ method: 'POST', path: '/routers', id: router }),
      entry({ method: 'POST', path: `/routers/${router}/routes`, id: route }),
      entry({ method: 'DELETE', path: `/routers/${router}`, id: router, cascaded: [`Route ${route}`] }),
    ];
    const subject = { id: router, role: 'parent of 337d304f…', itself: true };
    expect(journalLines(subject, entries, started)).toEqual([
      'journal aa00bbbb… (parent of 337d304f…): +198.3s POST /routers 204',
      'journal aa00bbbb… (parent of 337d304f…): +198.3s DELETE /routers/aa00bbbb… 204 cascaded 1 record',
    ]);
    expect(journalLines(subject, entries, started, 1)).toEqual([
      'journal aa00bbbb… (parent of 337d304f…): … 1 earlier writes',
      'journal aa00bbbb… (parent of 337d304f…): +198.3s DELETE /routers/aa00bbbb… 204 cascaded 1 record',
    ]);
    expect(journalLines({ id: port, role: 'nextHopPort of 337d304f…', itself: true }, entries, started)).toEqual([
      'journal 8511aaaa… (nextHopPort of 337d304f…): no write names it',
    ]);
  });
});
