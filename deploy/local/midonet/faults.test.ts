/* eslint-disable @typescript-eslint/no-unsafe-assignment -- tests read response JSON loosely */
// Fault injection and the backend-down switch (admin endpoint; not part of MidoNet, see README).
import { id, T } from './testing/conformance';
import { useEmulator } from './testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/bridges', T.bridge, { id: id(1) });
});

const getBridge = () => h.api.get(`/bridges/${id(1)}`, T.bridge);
const dropped = (p: Promise<unknown>) =>
  expect(p).rejects.toMatchObject({ code: expect.stringMatching(/ECONNRESET|EPIPE/) });

describe('error faults', () => {
  test('rate 1.0 always fails matching calls with the chosen status and an Error body; others pass', async () => {
    await h.admin.injectFault({ action: 'error', method: 'GET', path: '/bridges/*', status: 502, rate: 1 });
    for (let i = 0; i < 5; i++) {
      const res = await getBridge();
      expect(res.status).toBe(502);
      expect(res.json).toMatchObject({ code: 502, message: expect.any(String) });
    }
    expect((await h.api.get('/bridges', T.bridges)).status).toBe(200); // path does not match
    expect((await h.api.delete(`/bridges/${id(1)}`)).status).toBe(204); // method does not match
  });

  test('rate 0 never fails', async () => {
    await h.admin.injectFault({ action: 'error', rate: 0 });
    for (let i = 0; i < 5; i++) expect((await getBridge()).status).toBe(200);
  });

  test('a rate in between fails a reproducible share of calls for a given seed', async () => {
    const run = async (): Promise<number[]> => {
      await h.admin.clearFaults();
      await h.admin.injectFault({ action: 'error', path: '/bridges/*', rate: 0.5, seed: 42 });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await getBridge()).status);
      return statuses;
    };
    const first = await run();
    expect(await run()).toEqual(first);
    const failures = first.filter((s) => s === 503).length;
    expect(failures).toBeGreaterThan(5);
    expect(failures).toBeLessThan(35);
  });

  test('"fail the next N": exactly N matching calls fail, then the fault retires', async () => {
    await h.admin.injectFault({ action: 'error', method: 'POST', path: '/bridges', status: 500, times: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.api.post('/bridges', T.bridge, { name: `b${i}` })).status);
    expect(statuses).toEqual([500, 500, 500, 201, 201]);
    expect(await h.admin.faults()).toEqual([]);
  });

  test('** matches any depth and faults never touch the admin endpoint', async () => {
    await h.admin.injectFault({ action: 'error', path: '/**', status: 503 });
    expect((await h.api.get(`/bridges/${id(1)}/ports`, T.ports)).status).toBe(503);
    expect((await h.admin.dump()).Bridge.length).toBe(1);
  });
});

describe('latency and dropped connections', () => {
  test('latency delays the answer by at least the given time and the call succeeds', async () => {
    await h.admin.injectFault({ action: 'latency', path: '/bridges/*', latencyMs: 300 });
    const started = Date.now();
    expect((await getBridge()).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  test('drop destroys the connection without any response', async () => {
    await h.admin.injectFault({ action: 'drop', path: '/bridges/*', times: 1 });
    await dropped(getBridge());
    expect((await getBridge()).status).toBe(200);
  });
});

describe('misdirect: the answer is about another resource', () => {
  beforeEach(async () => {
    await h.api.create('/bridges', T.bridge, { id: id(2), name: 'other' });
  });

  test('a GET of an item gets another resource’s body; a list is answered as it is', async () => {
    await h.admin.injectFault({ action: 'misdirect', method: 'GET' });
    const res = await getBridge();
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: id(2), name: 'other', uri: `${h.emulator.url}/bridges/${id(2)}` });
    const listed = await h.api.get('/bridges', T.bridges);
    expect((listed.json as { id: string }[]).map((b) => b.id)).toEqual([id(1), id(2)]);
    expect((await h.admin.counters()).faults.misdirected).toBe(2);
  });

  test('a PUT is carried out and answered 200 with another resource’s body', async () => {
    await h.admin.injectFault({ action: 'misdirect', method: 'PUT', times: 1 });
    const res = await h.api.put(`/bridges/${id(1)}`, T.bridge, { name: 'renamed' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(T.bridge);
    expect(res.json).toMatchObject({ id: id(2), name: 'other' });
    expect((await getBridge()).json).toMatchObject({ id: id(1), name: 'renamed' });
  });

  test('a POST is carried out and answered with another resource’s Location', async () => {
    await h.admin.injectFault({ action: 'misdirect', method: 'POST', times: 1 });
    const res = await h.api.post('/bridges', T.bridge, { id: id(3), name: 'new' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${h.emulator.url}/bridges/${id(1)}`);
    expect((await h.api.get(`/bridges/${id(3)}`, T.bridge)).json).toMatchObject({ id: id(3), name: 'new' });
  });

  test('with no other resource of the kind, and on an error, the answer stays as it was', async () => {
    await h.api.delete(`/bridges/${id(2)}`);
    await h.admin.injectFault({ action: 'misdirect', method: 'GET' });
    expect((await getBridge()).json).toMatchObject({ id: id(1) });
    expect((await h.api.get(`/bridges/${id(9)}`, T.bridge)).status).toBe(404);
  });
});

describe('backend down', () => {
  test('unavailable: every API call, login included, gets 503 until the switch is off', async () => {
    await h.admin.setDown(true);
    expect((await getBridge()).status).toBe(503);
    expect(
      (await h.api.request('POST', '/login', { token: null, headers: { authorization: 'Basic YTpi' } })).status,
    ).toBe(503);
    await h.admin.setDown(false);
    expect((await getBridge()).status).toBe(200);
  });

  test('drop: every API call loses its connection', async () => {
    await h.admin.setDown(true, 'drop');
    await dropped(getBridge());
    await h.admin.setDown(false);
    expect((await getBridge()).status).toBe(200);
  });
});

describe('counters', () => {
  test('count API requests per method, per kind and method, per status, and injected faults', async () => {
    await h.admin.resetCounters();
    await getBridge();
    await h.api.get(`/bridges/${id(99)}`, T.bridge);
    await h.api.post('/chains', T.chain, {});
    await h.admin.injectFault({ action: 'error', path: '/chains', times: 1 });
    await h.api.post('/chains', T.chain, {});
    const c = await h.admin.counters();
    expect(c.total).toBe(4);
    expect(c.byMethod).toEqual({ GET: 2, POST: 2 });
    expect(c.byKind).toEqual({ Bridge: { GET: 2 }, Chain: { POST: 2 } });
    expect(c.byStatus).toEqual({ 200: 1, 404: 1, 201: 1, 503: 1 });
    expect(c.faults.errors).toBe(1);
  });
});
