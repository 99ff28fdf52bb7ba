// The write journal (admin GET /journal): who wrote what and when, what a DELETE cascaded away, and a write the
// emulator carried out after its client had given up.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmulatorAdmin, startMidonetEmulator } from './index';
import { Journal, type JournalEntry } from './journal';
import { Api, id, T, topology } from './testing/conformance';
import { useEmulator } from './testing/emulator';

const h = useEmulator(topology);

describe('write journal', () => {
  test('a port DELETE lists the routes it cascaded, and the route’s journal names it', async () => {
    expect((await h.api.delete(`/ports/${id(4)}`)).status).toBe(204);
    // Upper case: the query is case-insensitive, as ids are.
    const entries = await h.admin.journal(id(5).toUpperCase());
    expect(entries.map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([
      `POST /routers/${id(1)}/routes 201`,
      `DELETE /ports/${id(4)} 204`,
    ]);
    const deletion = entries[1]!;
    expect(deletion).toMatchObject({ id: id(4), clientGone: false });
    expect(deletion.cascaded).toContain(`Route ${id(5)}`);
    // The router port's Local route went too.
    expect(deletion.cascaded!.filter((k) => k.startsWith('Route ')).length).toBe(2);
    expect(deletion.answeredAt).toBeGreaterThanOrEqual(deletion.receivedAt);
  });

  const bridgeName = async (n: number): Promise<unknown> =>
    ((await h.api.get(`/bridges/${id(n)}`, T.bridge)).json as { name?: unknown } | undefined)?.name;
  /** [method, path, body (JSON), id the write is about, what shows it was carried out] */
  const lateWrites: [string, string, Record<string, unknown> | undefined, string, () => Promise<unknown>][] = [
    ['DELETE', `/routes/${id(5)}`, undefined, id(5), async () => (await h.api.get(`/routes/${id(5)}`, T.route)).status],
    ['POST', '/bridges', { id: id(7), name: 'late' }, id(7), () => bridgeName(7)],
    ['PUT', `/bridges/${id(2)}`, { name: 'renamed' }, id(2), () => bridgeName(2)],
  ];

  test.each(lateWrites)(
    'a %s delayed past its client’s deadline is carried out, and journaled as answered after the client left',
    async (method, path, body, about, outcome) => {
      const was = await outcome();
      // The client leaves after 500 ms (time for its request to reach a busy emulator), the answer comes at 1.5 s.
      await h.admin.injectFault({ action: 'latency', method, path, latencyMs: 1_500 });
      const gaveUp = await fetch(`${h.emulator.url}${path}`, {
        method,
        headers: { 'x-auth-token': h.api.token!, ...(body ? { 'content-type': T.bridge } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(500),
      }).then(
        () => false,
        () => true,
      );
      expect(gaveUp).toBe(true);
      let late: JournalEntry | undefined;
      for (let waited = 0; !late && waited < 5_000; waited += 50) {
        late = (await h.admin.journal(about)).find((e) => e.method === method && e.path === path);
        if (!late) await sleep(50);
      }
      const status = { DELETE: 204, POST: 201, PUT: 204 }[method];
      expect(late).toMatchObject({ path, status, delayMs: 1_500, clientGone: true, id: about });
      expect(late!.answeredAt - late!.receivedAt).toBeGreaterThanOrEqual(1_500);
      expect(await outcome()).not.toEqual(was);
    },
  );

  test('a dropped write is journaled unanswered (status 0), the client still there when it was dropped', async () => {
    await h.admin.injectFault({ action: 'drop', method: 'DELETE', path: '/bridges/*', times: 1 });
    await h.api.delete(`/bridges/${id(2)}`).catch(() => undefined);
    expect(await h.admin.journal(id(2))).toContainEqual(
      expect.objectContaining({ method: 'DELETE', status: 0, clientGone: false }),
    );
  });

  test('a POST without an id in its body is journaled with the id it was given; reads and logins are not journaled', async () => {
    const location = await h.api.create('/bridges', T.bridge, { name: 'anonymous' });
    const created = location.split('/').pop()!;
    await h.api.get(`/bridges/${created}`, T.bridge);
    await h.api.login();
    const all = await h.admin.journal();
    expect(all.at(-1)).toMatchObject({ method: 'POST', path: '/bridges', status: 201, id: created });
    expect(all.filter((e) => e.method === 'GET' || e.path === '/login')).toEqual([]);
  });

  test('reset empties the journal; a query id that is not a UUID is a 400', async () => {
    await h.admin.reset();
    expect(await h.admin.journal()).toEqual([]);
    await expect(h.admin.journal('nope')).rejects.toThrow(/400/);
  });
});

describe('journal across a restart', () => {
  test('an emulator persisting its state keeps the journal over close() and a start on the same file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'midonet-journal-'));
    try {
      const dataFile = join(dir, 'midonet.json');
      const first = await startMidonetEmulator({ port: 0, dataFile, auth: 'mock' });
      await new Api(first.url).create('/bridges', T.bridge, { id: id(7), name: 'b' });
      await first.close();
      const second = await startMidonetEmulator({ port: 0, dataFile, auth: 'mock' });
      try {
        expect(await new EmulatorAdmin(second.adminUrl).journal(id(7))).toEqual([
          expect.objectContaining({ method: 'POST', path: '/bridges', id: id(7) }),
        ]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Journal ring', () => {
  const entry = (n: number): JournalEntry => ({
    receivedAt: n,
    answeredAt: n,
    method: 'DELETE',
    path: `/routes/${id(n)}`,
    status: 204,
    clientGone: false,
  });

  test('past its limit the oldest entries are dropped, and the rest listed oldest first', () => {
    const ring = new Journal(3);
    for (let n = 1; n <= 5; n++) ring.add(entry(n));
    expect(ring.list().map((e) => e.receivedAt)).toEqual([3, 4, 5]);
    expect(ring.list(id(4)).map((e) => e.receivedAt)).toEqual([4]);
    expect(ring.list(id(1))).toEqual([]);
  });
});
