/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call -- tests read response JSON loosely */
// Ref §1.4 Route (validation, storage on the next-hop port); checklist §4.5.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/routers', T.router, { id: id(1) });
  await h.api.create('/routers', T.router, { id: id(2) });
  await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(3), type: 'Router' });
  await h.api.create(`/routers/${id(2)}/ports`, T.port, { id: id(4), type: 'Router' });
});

const route = (extra: Record<string, unknown>) => ({
  srcNetworkAddr: '0.0.0.0',
  srcNetworkLength: 0,
  dstNetworkAddr: '10.1.2.0',
  dstNetworkLength: 24,
  type: 'Normal',
  ...extra,
});

const NEXT_HOP = 'This type of route requires a next hop port that is a port on the same router.';

describe('§1.4 Route POST validation', () => {
  test.each([
    ['a Normal route without nextHopPort', route({}), 400, NEXT_HOP],
    ['a Normal route via another router’s port', route({ nextHopPort: id(4) }), 400, NEXT_HOP],
    ['a Normal route via a port that does not exist (400, not 404)', route({ nextHopPort: id(99) }), 400, NEXT_HOP],
    ['an unknown route type', route({ type: 'Magic', nextHopPort: id(3) }), 400, 'This type of route is invalid.'],
  ])('%s → 400', async (_w, body, status, message) => {
    const res = await h.api.post(`/routers/${id(1)}/routes`, T.route, body);
    expect(res.status).toBe(status);
    expect(res.json.violations.map((v: { message: string }) => v.message)).toContain(message);
  });

  test('a route on a missing router → 404', async () => {
    expect((await h.api.post(`/routers/${id(99)}/routes`, T.route, route({ type: 'BlackHole' }))).status).toBe(404);
  });

  test('a missing dstNetworkAddr → 400', async () => {
    expect(
      (await h.api.post(`/routers/${id(1)}/routes`, T.route, { srcNetworkAddr: '0.0.0.0', type: 'BlackHole' })).status,
    ).toBe(400);
  });
});

describe('§1.4 Route storage', () => {
  test('a Normal route is stored on its next-hop port: GET shows routerId null; the router’s list includes it', async () => {
    await h.api.create(
      `/routers/${id(1)}/routes`,
      T.route,
      route({ id: id(10), nextHopPort: id(3), nextHopGateway: '10.1.2.2' }),
    );
    const got = (await h.api.get(`/routes/${id(10)}`, T.route)).json;
    expect(got).toMatchObject({
      id: id(10),
      nextHopPort: id(3),
      nextHopGateway: '10.1.2.2',
      routerId: null,
      learned: false,
    });
    expect(((await h.api.get(`/routers/${id(1)}/routes`, T.routes)).json as { id: string }[]).map((r) => r.id)).toEqual(
      [id(10)],
    );
    expect((await h.api.get(`/routers/${id(2)}/routes`, T.routes)).json).toEqual([]);
  });

  test('a BlackHole route is attached to the router and reports it', async () => {
    await h.api.create(`/routers/${id(1)}/routes`, T.route, route({ id: id(11), type: 'BlackHole' }));
    expect((await h.api.get(`/routes/${id(11)}`, T.route)).json).toMatchObject({ routerId: id(1), type: 'BlackHole' });
  });
});
