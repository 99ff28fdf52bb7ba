/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// The admin endpoint: host seeding (ref §3 TopologyBackdoor), dump, reset, configuration.
import { id, T, topology } from './testing/conformance';
import { useEmulator } from './testing/emulator';

const h = useEmulator();

describe('admin endpoint', () => {
  test('dump lists every resource per kind as GET renders it, with links and bindings on their own', async () => {
    await topology(h);
    const dump = await h.admin.dump();
    const ids = (kind: keyof typeof dump) => dump[kind].map((r) => r.id).sort();
    expect(ids('Bridge')).toEqual([id(2)]);
    expect(ids('Router')).toEqual([id(1)]);
    expect(ids('Port')).toEqual([id(3), id(4), id(6)]);
    expect(dump.Route.length).toBe(2); // the Normal route and the Local one
    expect(dump.TunnelZone.map((z) => z.name)).toEqual(['zone']);
    expect(dump.TunnelZoneHost).toEqual([expect.objectContaining({ hostId: id(900), ipAddress: '192.0.2.1' })]);
    expect(dump.PortLink).toEqual([{ portId: id(3), peerId: id(4) }]);
    expect(dump.HostInterfacePort).toEqual([
      expect.objectContaining({ portId: id(6), interfaceName: 'midokube-mido' }),
    ]);
    expect(dump.Host).toEqual([expect.objectContaining({ id: id(900), name: 'node-1' })]);
  });

  test('seeding the same host id again replaces it and keeps its bindings', async () => {
    await topology(h);
    await h.admin.seedHost({ id: id(900), name: 'node-1-renamed', alive: false });
    expect((await h.api.get(`/hosts/${id(900)}`, T.host)).json).toMatchObject({ name: 'node-1-renamed', alive: false });
    expect((await h.api.get(`/hosts/${id(900)}/ports`, T.hostPorts)).json.length).toBe(1);
  });

  test('a seeded host without an id gets one', async () => {
    const host = await h.admin.seedHost({ name: 'anonymous' });
    expect((await h.api.get(`/hosts/${host.id}`, T.host)).json.name).toBe('anonymous');
  });

  test('a bad seed is a 400 from the admin endpoint', async () => {
    await expect(h.admin.seedHost({ name: '' })).rejects.toThrow(/400/);
  });

  test('reset empties everything, tokens included', async () => {
    await topology(h);
    await h.admin.reset();
    const dump = await h.admin.dump();
    for (const list of Object.values(dump)) expect(list).toEqual([]);
    expect((await h.api.get('/bridges', T.bridges)).status).toBe(401);
  });

  test('reset also restores the configuration given at start', async () => {
    await h.admin.configure({ auth: 'mock', duplicateTableEntryStatus: 409 });
    await h.admin.reset();
    expect(await h.admin.configure({})).toEqual({ auth: 'token', credentials: null, duplicateTableEntryStatus: 500 });
  });
});
