/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.4 HostInterfacePort (the five POST checks in order, DELETE semantics); checklist §4.10.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.admin.seedHost({ id: id(900), name: 'in-zone' });
  await h.admin.seedHost({ id: id(901), name: 'no-zone' });
  await h.api.create('/tunnel_zones', T.tunnelZone, { id: id(800), name: 'z', type: 'vxlan' });
  await h.api.create(`/tunnel_zones/${id(800)}/hosts`, T.tunnelZoneHost, { hostId: id(900), ipAddress: '10.0.0.1' });
  await h.api.create('/bridges', T.bridge, { id: id(2) });
  for (const n of [3, 4]) await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(n), type: 'Bridge' });
});

const bind = (host: number, port: number, interfaceName: string) =>
  h.api.post(`/hosts/${id(host)}/ports`, T.hostPort, { portId: id(port), interfaceName });

describe('§1.4 HostInterfacePort POST', () => {
  test('binding sets hostId and interfaceName on the port; 201 with Location; GET shows the binding', async () => {
    const res = await bind(900, 3, 'veth0');
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${h.emulator.url}/hosts/${id(900)}/ports/${id(3)}`);
    expect((await h.api.get(`/ports/${id(3)}`, T.port)).json).toMatchObject({
      hostId: id(900),
      interfaceName: 'veth0',
    });
    expect((await h.api.get(`/hosts/${id(900)}/ports/${id(3)}`, T.hostPort)).json).toMatchObject({
      portId: id(3),
      hostId: id(900),
      interfaceName: 'veth0',
    });
  });

  test.each([
    ['a missing host → 404', 999, 3, 'veth0', 404, `There is no Host with ID ${id(999)}.`],
    [
      'a host in no tunnel zone → 409 (checked before the port)',
      901,
      999,
      'veth0',
      409,
      'The specified host is not in any tunnel zone.',
    ],
    ['a missing port → 404', 900, 999, 'veth0', 404, `There is no Port with ID ${id(999)}.`],
  ])('%s', async (_w, host, port, ifname, status, message) => {
    const res = await bind(host, port, ifname);
    expect(res.status).toBe(status);
    expect(res.json.message).toBe(message);
  });

  test('a port already bound → 409, even for the same host and interface', async () => {
    await bind(900, 3, 'veth0');
    const res = await bind(900, 3, 'veth0');
    expect(res.status).toBe(409);
    expect(res.json.message).toBe(`Port ${id(3)} is already bound to an interface`);
  });

  test('an interface name already used by another port on the host → 409', async () => {
    await bind(900, 3, 'veth0');
    const res = await bind(900, 4, 'veth0');
    expect(res.status).toBe(409);
    expect(res.json.message).toBe('Interface veth0 is already bound to a port.');
  });
});

describe('§1.4 HostInterfacePort GET/DELETE', () => {
  test('GET of a port not bound to that host → 404 "Host interface port not found"', async () => {
    const res = await h.api.get(`/hosts/${id(900)}/ports/${id(3)}`, T.hostPort);
    expect(res.status).toBe(404);
    expect(res.json.message).toBe('Host interface port not found');
  });

  test('DELETE clears hostId and interfaceName (204), and answers 204 again when not bound', async () => {
    await bind(900, 3, 'veth0');
    expect((await h.api.delete(`/hosts/${id(900)}/ports/${id(3)}`)).status).toBe(204);
    expect((await h.api.get(`/ports/${id(3)}`, T.port)).json).toMatchObject({ hostId: null, interfaceName: null });
    expect((await h.api.delete(`/hosts/${id(900)}/ports/${id(3)}`)).status).toBe(204);
  });

  test('the host in the DELETE path is not checked', async () => {
    await bind(900, 3, 'veth0');
    expect((await h.api.delete(`/hosts/${id(999)}/ports/${id(3)}`)).status).toBe(204);
    expect((await h.api.get(`/ports/${id(3)}`, T.port)).json.hostId).toBeNull();
  });
});
