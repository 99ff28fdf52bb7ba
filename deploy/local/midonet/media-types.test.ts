// Ref §1.2 (media-type check, error bodies) and §1.3 (media types); checklist §4.2.
import { id, T } from './testing/conformance';
import { emulatorForFile } from './testing/emulator';

const h = emulatorForFile();
beforeAll(async () => {
  await h.admin.seedHost({ id: id(900), name: 'node-1' });
  await h.api.create('/tunnel_zones', T.tunnelZone, { id: id(800), name: 'zone', type: 'vxlan' });
  await h.api.create('/bridges', T.bridge, { id: id(1) });
  await h.api.create(`/bridges/${id(1)}/ports`, T.port, { id: id(2), type: 'Bridge' });
  await h.api.create(`/bridges/${id(1)}/ports`, T.port, { id: id(3), type: 'Bridge' });
});

const vnd = (n: string): string => `application/vnd.org.midonet.${n}+json`;

describe('§1.2/§1.3 GET Accept negotiation', () => {
  test.each([
    ['the item type is accepted for an item', `/bridges/${'$1'}`, T.bridge, 200],
    ['the v5 item type is accepted too', `/bridges/${'$1'}`, vnd('Bridge-v5'), 200],
    ['plain application/json is always accepted by MidonetResource', `/bridges/${'$1'}`, 'application/json', 200],
    ['matching is case-insensitive', `/bridges/${'$1'}`, T.bridge.toUpperCase(), 200],
    ['a wildcard is compatible', `/bridges/${'$1'}`, '*/*', 200],
    ['another kind’s type → 406', `/bridges/${'$1'}`, T.router, 406],
    ['the collection type on an item → 406', `/bridges/${'$1'}`, T.bridges, 406],
    ['the item type on a collection → 406', '/bridges', T.bridge, 406],
    ['a missing Accept on MidonetResource → 406', '/bridges', null, 406],
    ['a missing Accept on a Jersey @Produces resource means any', `/hosts/${'$900'}/ports`, null, 200],
    ['the item type on a Jersey collection → 406', `/hosts/${'$900'}/ports`, T.hostPort, 406],
  ])('%s', async (_what, path, accept, status) => {
    const res = await h.api.request('GET', path.replace('$1', id(1)).replace('$900', id(900)), { accept });
    expect(res.status).toBe(status);
    if (status === 406) expect(res.text).toBe(''); // Jersey-generated statuses have empty bodies (§1.2)
  });

  test('the answer carries the negotiated type', async () => {
    const vendor = await h.api.get(`/bridges/${id(1)}`, T.bridge);
    expect(vendor.headers.get('content-type')).toContain(T.bridge);
    const json = await h.api.get(`/bridges/${id(1)}`, 'application/json');
    expect(json.headers.get('content-type')).toContain('application/json');
  });
});

describe('§1.2 POST/PUT Content-Type', () => {
  test.each([
    ['MidonetResource: wrong type → 406 (not 415)', '/bridges', T.router, { id: id(10) }, 406],
    ['MidonetResource: missing type → 406', '/bridges', null, { id: id(11) }, 406],
    ['MidonetResource: application/json accepted', '/bridges', 'application/json', { id: id(12) }, 201],
    [
      'TunnelZoneHost refuses application/json → 415',
      `/tunnel_zones/${'$800'}/hosts`,
      'application/json',
      { hostId: id(900), ipAddress: '10.0.0.1' },
      415,
    ],
    [
      'TunnelZoneHost accepts GreTunnelZoneHost-v1',
      `/tunnel_zones/${'$800'}/hosts`,
      vnd('GreTunnelZoneHost-v1'),
      { hostId: id(900), ipAddress: '10.0.0.1' },
      201,
    ],
    [
      'ARP table needs exactly IP4Mac-v1 → 415 for JSON',
      `/bridges/${'$1'}/arp_table`,
      'application/json',
      { ip: '10.0.0.9', mac: '02:00:00:00:00:09' },
      415,
    ],
    [
      'MAC table accepts midonet-kubernetes’ MACPort spelling',
      `/bridges/${'$1'}/mac_table`,
      T.macPort,
      { macAddr: '02:00:00:00:00:02', portId: id(2) },
      201,
    ],
    ['link with a wrong type → 415', `/ports/${'$2'}/link`, T.port, { peerId: id(3) }, 415],
  ])('%s', async (_what, path, type, body, status) => {
    const p = path.replace('$1', id(1)).replace('$2', id(2)).replace('$800', id(800));
    const res = await h.api.request('POST', p, { type, body });
    expect(res.status).toBe(status);
  });
});

describe('§1.2 error bodies', () => {
  test('a storage error is an Error-v1 body with message and code', async () => {
    const res = await h.api.get(`/bridges/${id(404)}`, T.bridge);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain(T.error);
    expect(res.json).toEqual({ message: `There is no Network with ID ${id(404)}.`, code: 404 });
  });

  test('bean validation is a 400 with "Validation error(s) found" and violations naming the property', async () => {
    const res = await h.api.post('/bridges', T.bridge, { name: 'x'.repeat(256) });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      message: 'Validation error(s) found',
      code: 400,
      violations: [{ property: 'name' }],
    });
  });

  test('a body that is not JSON is a 400 Error body (JSON mapping error)', async () => {
    const res = await h.api.post('/bridges', T.bridge, '{not json');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: 400 });
  });

  test('unknown fields are ignored (FAIL_ON_UNKNOWN_PROPERTIES=false)', async () => {
    const res = await h.api.post('/bridges', T.bridge, { id: id(20), somethingNew: 1 });
    expect(res.status).toBe(201);
  });

  test('an unknown path is a 404 and a malformed id in a path is a 404, not a 400', async () => {
    expect((await h.api.get('/nothing_here', T.bridge)).status).toBe(404);
    expect((await h.api.get('/bridges/not-a-uuid', T.bridge)).status).toBe(404);
  });
});
