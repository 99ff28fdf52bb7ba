/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.4 TunnelZone/TunnelZoneHost; checklist §4.11.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.admin.seedHost({ id: id(900), name: 'node-1' });
  await h.api.create('/tunnel_zones', T.tunnelZone, { id: id(800), name: 'DefaultTunnelZone', type: 'vxlan' });
});

describe('§1.4 TunnelZone', () => {
  test('another zone with a used name → 409 "Tunnel zone name already exists."', async () => {
    const res = await h.api.post('/tunnel_zones', T.tunnelZone, {
      id: id(801),
      name: 'DefaultTunnelZone',
      type: 'gre',
    });
    expect(res.status).toBe(409);
    expect(res.json.message).toBe('Tunnel zone name already exists.');
  });

  test('MNA-1293: a PUT that keeps the zone’s own name → 409; a new name → 204', async () => {
    expect(
      (await h.api.put(`/tunnel_zones/${id(800)}`, T.tunnelZone, { name: 'DefaultTunnelZone', type: 'vxlan' })).status,
    ).toBe(409);
    expect((await h.api.put(`/tunnel_zones/${id(800)}`, T.tunnelZone, { name: 'Renamed', type: 'gre' })).status).toBe(
      204,
    );
    expect((await h.api.get(`/tunnel_zones/${id(800)}`, T.tunnelZone)).json).toMatchObject({
      name: 'Renamed',
      type: 'gre',
    });
  });

  test.each([
    ['a missing name', { type: 'vxlan' }],
    ['an empty name', { name: '', type: 'vxlan' }],
    ['a missing type', { name: 'z2' }],
    ['an unknown type', { name: 'z2', type: 'ipsec' }],
  ])('%s → 400 with violations', async (_w, body) => {
    const res = await h.api.post('/tunnel_zones', T.tunnelZone, body);
    expect(res.status).toBe(400);
    expect(res.json.violations.length).toBeGreaterThan(0);
  });
});

describe('§1.4 TunnelZoneHost', () => {
  const members = `/tunnel_zones/${id(800)}/hosts`;

  test('adding a host: 201; list and item GET show tunnelZoneId, hostId, ipAddress', async () => {
    const res = await h.api.post(members, T.tunnelZoneHost, { hostId: id(900), ipAddress: '192.0.2.10' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${h.emulator.url}${members}/${id(900)}`);
    const expected = { tunnelZoneId: id(800), hostId: id(900), ipAddress: '192.0.2.10' };
    expect((await h.api.get(members, T.tunnelZoneHosts)).json).toEqual([expect.objectContaining(expected)]);
    expect((await h.api.get(`${members}/${id(900)}`, T.tunnelZoneHost)).json).toMatchObject(expected);
  });

  test('the same host again, even with another IP → 409 with an empty body', async () => {
    await h.api.create(members, T.tunnelZoneHost, { hostId: id(900), ipAddress: '192.0.2.10' });
    const res = await h.api.post(members, T.tunnelZoneHost, { hostId: id(900), ipAddress: '192.0.2.99' });
    expect(res.status).toBe(409);
    expect(res.text).toBe('');
  });

  test.each([
    ['a missing zone → 404', `/tunnel_zones/${id(899)}/hosts`, { hostId: id(900), ipAddress: '192.0.2.10' }, 404],
    ['an unknown host → 404', members, { hostId: id(999), ipAddress: '192.0.2.10' }, 404],
    ['a missing ipAddress → 400', members, { hostId: id(900) }, 400],
    ['a missing hostId → 400', members, { ipAddress: '192.0.2.10' }, 400],
  ])('%s', async (_w, path, body, status) => {
    expect((await h.api.post(path, T.tunnelZoneHost, body)).status).toBe(status);
  });

  test('DELETE of a member → 204; of a host not in the zone → 404 with an empty body', async () => {
    await h.api.create(members, T.tunnelZoneHost, { hostId: id(900), ipAddress: '192.0.2.10' });
    expect((await h.api.delete(`${members}/${id(900)}`)).status).toBe(204);
    const again = await h.api.delete(`${members}/${id(900)}`);
    expect(again.status).toBe(404);
    expect(again.text).toBe('');
  });
});
