/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.2 (generic CRUD), §1.5 (missing-object DELETE), §1.6 (status cheat sheet); checklist §4.3–4.5.
import { id, T } from './testing/conformance';
import { useEmulator } from './testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/routers', T.router, { id: id(1) });
  await h.api.create('/bridges', T.bridge, { id: id(2) });
  await h.api.create('/chains', T.chain, { id: id(3) });
  await h.api.create('/tunnel_zones', T.tunnelZone, { id: id(4), name: 'zone', type: 'gre' });
});

/** [what it checks, collection path, media type, body with a client id, item path, ZOOM class name] */
const creatable: [string, string, string, Record<string, unknown>, string, string][] = [
  ['a bridge', '/bridges', T.bridge, { id: id(10) }, `/bridges/${id(10)}`, 'Network'],
  ['a router', '/routers', T.router, { id: id(10) }, `/routers/${id(10)}`, 'Router'],
  ['a chain', '/chains', T.chain, { id: id(10) }, `/chains/${id(10)}`, 'Chain'],
  [
    'a tunnel zone',
    '/tunnel_zones',
    T.tunnelZone,
    { id: id(10), name: 'other', type: 'vxlan' },
    `/tunnel_zones/${id(10)}`,
    'TunnelZone',
  ],
  ['a bridge port', `/bridges/${id(2)}/ports`, T.port, { id: id(10), type: 'Bridge' }, `/ports/${id(10)}`, 'Port'],
  ['a rule', `/chains/${id(3)}/rules`, T.rule, { id: id(10), type: 'accept' }, `/rules/${id(10)}`, 'Rule'],
  [
    'a route',
    `/routers/${id(1)}/routes`,
    T.route,
    { id: id(10), type: 'BlackHole', srcNetworkAddr: '0.0.0.0', dstNetworkAddr: '10.0.0.0', dstNetworkLength: 8 },
    `/routes/${id(10)}`,
    'Route',
  ],
];

describe('§1.2 POST', () => {
  test.each(creatable)(
    'creating %s honours the client id: 201, Location of the new item, no body',
    async (_w, coll, type, body, item) => {
      const res = await h.api.post(coll, type, body);
      expect(res.status).toBe(201);
      expect(res.text).toBe('');
      expect(res.headers.get('location')).toBe(h.emulator.url + item);
    },
  );

  test.each(creatable)(
    'POSTing %s again with the same id → 409 with the ZOOM message',
    async (_w, coll, type, body, _item, cls) => {
      expect((await h.api.post(coll, type, body)).status).toBe(201);
      const again = await h.api.post(coll, type, body);
      expect(again.status).toBe(409);
      expect(again.json).toEqual({ message: `A(n) ${cls} with ID ${id(10)} already exists.`, code: 409 });
    },
  );

  test('without an id the server generates one and Location names it', async () => {
    const res = await h.api.post('/bridges', T.bridge, { name: 'anonymous' });
    expect(res.status).toBe(201);
    const location = res.headers.get('location')!;
    expect(location).toMatch(/\/bridges\/[0-9a-f-]{36}$/);
    const path = location.slice(h.emulator.url.length);
    expect((await h.api.get(path, T.bridge)).json).toMatchObject({ name: 'anonymous', adminStateUp: true });
  });

  test('an upper-case client id is stored and reported in lower case, as Java prints UUIDs', async () => {
    const res = await h.api.post('/chains', T.chain, { id: 'ABCDEF00-0000-4000-8000-000000000001' });
    expect(res.headers.get('location')).toMatch(/abcdef00-0000-4000-8000-000000000001$/);
  });
});

describe('§1.2 references must exist (404)', () => {
  test.each([
    [
      'a bridge whose inboundFilterId is not a chain',
      '/bridges',
      T.bridge,
      { inboundFilterId: id(99) },
      `There is no Chain with ID ${id(99)}.`,
    ],
    [
      'a port on a missing bridge',
      `/bridges/${id(99)}/ports`,
      T.port,
      { type: 'Bridge' },
      `There is no Network with ID ${id(99)}.`,
    ],
    [
      'a port on a missing router',
      `/routers/${id(99)}/ports`,
      T.port,
      { type: 'Router' },
      `There is no Router with ID ${id(99)}.`,
    ],
    [
      'a rule in a missing chain',
      `/chains/${id(99)}/rules`,
      T.rule,
      { type: 'accept' },
      `There is no Chain with ID ${id(99)}.`,
    ],
    [
      'a jump rule to a missing chain',
      `/chains/${id(3)}/rules`,
      T.rule,
      { type: 'jump', jumpChainId: id(99) },
      `There is no Chain with ID ${id(99)}.`,
    ],
    [
      'a router with a load balancer (none exist here)',
      '/routers',
      T.router,
      { loadBalancerId: id(99) },
      `There is no LoadBalancer with ID ${id(99)}.`,
    ],
  ])('%s', async (_w, path, type, body, message) => {
    const res = await h.api.post(path, type, body);
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ message, code: 404 });
  });

  test('PUT with a missing reference is a 404 too and leaves the object unchanged', async () => {
    const res = await h.api.put(`/bridges/${id(2)}`, T.bridge, { name: 'x', outboundFilterId: id(99) });
    expect(res.status).toBe(404);
    expect((await h.api.get(`/bridges/${id(2)}`, T.bridge)).json.name).toBeNull();
  });
});

describe('§1.2 PUT', () => {
  test('PUT replaces the user fields (absent → default), answers 204; the path id wins over the body id', async () => {
    await h.api.put(`/bridges/${id(2)}`, T.bridge, { name: 'renamed', tenantId: 't', inboundFilterId: id(3) });
    const res = await h.api.put(`/bridges/${id(2)}`, T.bridge, { id: id(77), name: 'again' });
    expect(res.status).toBe(204);
    const got = (await h.api.get(`/bridges/${id(2)}`, T.bridge)).json;
    expect(got).toMatchObject({ id: id(2), name: 'again', tenantId: null, inboundFilterId: null, adminStateUp: true });
    expect((await h.api.get(`/bridges/${id(77)}`, T.bridge)).status).toBe(404);
  });

  test('PUT on a missing object → 404', async () => {
    expect((await h.api.put(`/routers/${id(99)}`, T.router, { name: 'x' })).status).toBe(404);
  });
});

describe('§1.2 405 where the real API has no such operation', () => {
  test.each([
    ['PUT on a chain', 'PUT', `/chains/${id(3)}`, T.chain],
    ['PUT on a rule', 'PUT', `/rules/${id(3)}`, T.rule],
    ['PUT on a route', 'PUT', `/routes/${id(3)}`, T.route],
    ['PUT on a tunnel-zone host', 'PUT', `/tunnel_zones/${id(4)}/hosts/${id(5)}`, T.tunnelZoneHost],
    ['POST on /ports (ports are created under a device)', 'POST', '/ports', T.port],
    ['GET on a port link', 'GET', `/ports/${id(3)}/link`, T.link],
    ['PUT on a port link', 'PUT', `/ports/${id(3)}/link`, T.link],
    ['a top-level route list', 'GET', '/routes', T.routes],
    ['a top-level rule list', 'GET', '/rules', T.rules],
    ['POST /hosts (hosts come from agents; seeded through the admin endpoint)', 'POST', '/hosts', T.host],
  ])('%s → 405 with Allow', async (_w, method, path, type) => {
    const res = await h.api.request(method, path, { type, accept: type, body: method === 'GET' ? undefined : {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toEqual(expect.any(String));
    expect(res.headers.get('allow')).not.toContain(method);
  });
});

describe('§1.5 DELETE of a missing object', () => {
  test.each([
    ['Router → 204 (idempotent default delete)', `/routers/${id(99)}`, 204],
    ['Route → 204', `/routes/${id(99)}`, 204],
    ['TunnelZone → 204', `/tunnel_zones/${id(99)}`, 204],
    ['Bridge → 404', `/bridges/${id(99)}`, 404],
    ['Port → 404', `/ports/${id(99)}`, 404],
    ['Chain → 404', `/chains/${id(99)}`, 404],
    ['Rule → 404', `/rules/${id(99)}`, 404],
    ['TunnelZoneHost (host not in the zone) → 404', `/tunnel_zones/${id(4)}/hosts/${id(99)}`, 404],
    ['HostInterfacePort with a missing port → 404', `/hosts/${id(98)}/ports/${id(99)}`, 404],
    ['Link on a missing port → 404', `/ports/${id(99)}/link`, 404],
    ['MAC entry on a missing bridge → 404', `/bridges/${id(99)}/mac_table/02-00-00-00-00-01_${id(98)}`, 404],
  ])('%s', async (_w, path, status) => {
    expect((await h.api.delete(path)).status).toBe(status);
  });

  test('DELETE of an existing object → 204, then GET → 404', async () => {
    expect((await h.api.delete(`/bridges/${id(2)}`)).status).toBe(204);
    expect((await h.api.get(`/bridges/${id(2)}`, T.bridge)).status).toBe(404);
  });
});

describe('§1.2 lists', () => {
  test('?tenant_id= filters bridges, routers and chains', async () => {
    await h.api.create('/bridges', T.bridge, { id: id(20), tenantId: 'a' });
    await h.api.create('/bridges', T.bridge, { id: id(21), tenantId: 'b' });
    const list = (await h.api.get('/bridges?tenant_id=a', T.bridges)).json as { id: string }[];
    expect(list.map((b) => b.id)).toEqual([id(20)]);
    expect(((await h.api.get('/bridges', T.bridges)).json as unknown[]).length).toBe(3);
  });
});
