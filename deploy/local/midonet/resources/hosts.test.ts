/* eslint-disable @typescript-eslint/no-unsafe-assignment -- tests read response JSON loosely */
// Ref §1.4 Host and §3 (hosts are seeded through a backdoor); checklist §4.13.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.admin.seedHost({
    id: id(900),
    name: 'node-1',
    addresses: ['192.0.2.10'],
    interfaces: [{ name: 'eth0', mac: '02:00:00:00:00:01', addresses: ['192.0.2.10'] }],
  });
});

const weights = { floodingProxyWeight: 2, containerWeight: 3, containerLimit: 4, enforceContainerLimit: true };

describe('§1.4 Host', () => {
  test('GET /hosts lists seeded hosts with id, name, alive, addresses, hostInterfaces', async () => {
    const list = (await h.api.get('/hosts', T.hosts)).json;
    expect(list).toEqual([
      expect.objectContaining({
        id: id(900),
        name: 'node-1',
        alive: true,
        addresses: ['192.0.2.10'],
        hostInterfaces: [expect.objectContaining({ hostId: id(900), name: 'eth0', mac: '02:00:00:00:00:01' })],
        uri: `${h.emulator.url}/hosts/${id(900)}`,
      }),
    ]);
  });

  test('PUT changes the four weight fields and answers 200', async () => {
    const res = await h.api.put(`/hosts/${id(900)}`, T.host, weights);
    expect(res.status).toBe(200);
    expect((await h.api.get(`/hosts/${id(900)}`, T.host)).json).toMatchObject({ ...weights, name: 'node-1' });
  });

  test('PUT without all four fields → 400', async () => {
    expect((await h.api.put(`/hosts/${id(900)}`, T.host, { floodingProxyWeight: 2 })).status).toBe(400);
  });

  test('DELETE of an alive host → 403; of a dead host with a binding → 403; else 200', async () => {
    expect((await h.api.delete(`/hosts/${id(900)}`)).status).toBe(403);
    await h.admin.seedHost({ id: id(900), name: 'node-1', alive: false });
    await h.api.create('/tunnel_zones', T.tunnelZone, { id: id(800), name: 'z', type: 'vxlan' });
    await h.api.create(`/tunnel_zones/${id(800)}/hosts`, T.tunnelZoneHost, { hostId: id(900), ipAddress: '10.0.0.1' });
    await h.api.create('/bridges', T.bridge, { id: id(1) });
    await h.api.create(`/bridges/${id(1)}/ports`, T.port, { id: id(2), type: 'Bridge' });
    await h.api.create(`/hosts/${id(900)}/ports`, T.hostPort, { portId: id(2), interfaceName: 'veth0' });
    expect((await h.api.delete(`/hosts/${id(900)}`)).status).toBe(403);
    await h.api.delete(`/hosts/${id(900)}/ports/${id(2)}`);
    expect((await h.api.delete(`/hosts/${id(900)}`)).status).toBe(200);
    expect((await h.api.get(`/hosts/${id(900)}`, T.host)).status).toBe(404);
  });
});
