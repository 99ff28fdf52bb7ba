/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.4 Port (polymorphic type, router-port side effects, PUT keeps binding and peer); checklist §4.9.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/routers', T.router, { id: id(1) });
  await h.api.create('/bridges', T.bridge, { id: id(2) });
});

describe('§1.4 Port type', () => {
  test.each<[string, string, Record<string, unknown>, number]>([
    ['a router port POSTed to a bridge → 400 "Not a bridge port."', `/bridges/${id(2)}/ports`, { type: 'Router' }, 400],
    ['a bridge port POSTed to a router → 400', `/routers/${id(1)}/ports`, { type: 'Bridge' }, 400],
    ['a missing type → 400', `/bridges/${id(2)}/ports`, {}, 400],
    ['an unknown type → 400', `/bridges/${id(2)}/ports`, { type: 'Tunnel' }, 400],
    ['the legacy InteriorBridge name is a bridge port', `/bridges/${id(2)}/ports`, { type: 'InteriorBridge' }, 201],
    ['the legacy ExteriorRouter name is a router port', `/routers/${id(1)}/ports`, { type: 'ExteriorRouter' }, 201],
  ])('%s', async (_w, path, body, status) => {
    const res = await h.api.post(path, T.port, body);
    expect(res.status).toBe(status);
    if (path.includes('bridges') && body.type === 'Router') expect(res.json.message).toBe('Not a bridge port.');
  });

  test('a bridge port reports its bridge, vlanId 0 and a server-assigned tunnel key', async () => {
    await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(3), type: 'Bridge', tunnelKey: 999 });
    const port = (await h.api.get(`/ports/${id(3)}`, T.port)).json;
    expect(port).toMatchObject({
      type: 'Bridge',
      deviceId: id(2),
      bridgeId: id(2),
      vlanId: 0,
      adminStateUp: true,
      peerId: null,
    });
    expect(port.tunnelKey).not.toBe(999);
    expect(port.device).toBe(`${h.emulator.url}/bridges/${id(2)}`);
  });

  test('GET /bridges/{id}/ports lists only that bridge’s ports, GET /ports lists all', async () => {
    await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(3), type: 'Bridge' });
    await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(4), type: 'Router' });
    expect(((await h.api.get(`/bridges/${id(2)}/ports`, T.ports)).json as { id: string }[]).map((p) => p.id)).toEqual([
      id(3),
    ]);
    expect(((await h.api.get('/ports', T.ports)).json as unknown[]).length).toBe(2);
  });
});

describe('§1.4 router-port POST side effects', () => {
  test('creates a Local /32 route to the port address with the port as next hop, and a random portMac', async () => {
    await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(4), type: 'Router', portSubnet: ['10.1.2.1/24'] });
    const port = (await h.api.get(`/ports/${id(4)}`, T.port)).json;
    expect(port.portMac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    expect(port).toMatchObject({
      portAddress: '10.1.2.1',
      networkAddress: '10.1.2.0',
      networkLength: 24,
      routerId: id(1),
    });
    const routes = (await h.api.get(`/routers/${id(1)}/routes`, T.routes)).json;
    expect(routes).toEqual([
      expect.objectContaining({
        type: 'Local',
        srcNetworkAddr: '0.0.0.0',
        srcNetworkLength: 0,
        dstNetworkAddr: '10.1.2.1',
        dstNetworkLength: 32,
        nextHopPort: id(4),
      }),
    ]);
  });

  test('a portMac in the body is kept', async () => {
    await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(4), type: 'Router', portMac: 'AC:CA:BA:CA:12:F3' });
    expect((await h.api.get(`/ports/${id(4)}`, T.port)).json.portMac).toBe('ac:ca:ba:ca:12:f3');
  });
});

describe('§1.4 Port PUT', () => {
  test('PUT without portMac clears it (MNA-1251), and portSubnet comes from the body', async () => {
    await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(4), type: 'Router', portSubnet: ['10.1.2.1/24'] });
    expect((await h.api.put(`/ports/${id(4)}`, T.port, { type: 'Router' })).status).toBe(204);
    const port = (await h.api.get(`/ports/${id(4)}`, T.port)).json;
    expect(port.portMac).toBeNull();
    expect(port.portSubnet).toEqual([]);
  });

  test('PUT never unbinds or unlinks: hostId, interfaceName and peerId survive a body without them', async () => {
    await h.admin.seedHost({ id: id(900), name: 'n' });
    await h.api.create('/tunnel_zones', T.tunnelZone, { id: id(800), name: 'z', type: 'vxlan' });
    await h.api.create(`/tunnel_zones/${id(800)}/hosts`, T.tunnelZoneHost, { hostId: id(900), ipAddress: '10.0.0.1' });
    await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(3), type: 'Bridge' });
    await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(5), type: 'Bridge' });
    await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(4), type: 'Router' });
    await h.api.create(`/ports/${id(3)}/link`, T.link, { peerId: id(4) });
    await h.api.create(`/hosts/${id(900)}/ports`, T.hostPort, { portId: id(5), interfaceName: 'veth0' });
    const tunnelKey = (await h.api.get(`/ports/${id(3)}`, T.port)).json.tunnelKey;

    expect((await h.api.put(`/ports/${id(3)}`, T.port, { type: 'Bridge', adminStateUp: false })).status).toBe(204);
    expect(
      (await h.api.put(`/ports/${id(5)}`, T.port, { type: 'Bridge', hostId: null, interfaceName: null })).status,
    ).toBe(204);
    expect((await h.api.get(`/ports/${id(3)}`, T.port)).json).toMatchObject({
      peerId: id(4),
      adminStateUp: false,
      tunnelKey,
    });
    expect((await h.api.get(`/ports/${id(5)}`, T.port)).json).toMatchObject({
      hostId: id(900),
      interfaceName: 'veth0',
    });
  });

  test('PUT cannot move a port to the other device type (the ref is silent; 400)', async () => {
    await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(3), type: 'Bridge' });
    expect((await h.api.put(`/ports/${id(3)}`, T.port, { type: 'Router' })).status).toBe(400);
  });
});
