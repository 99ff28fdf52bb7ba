/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.5 (cascades) and §1.4 per-kind DELETE notes; checklist §4.7.
import { id, T, topology } from './testing/conformance';
import { useEmulator } from './testing/emulator';

const h = useEmulator(topology);

const status = async (path: string, accept: string): Promise<number> => (await h.api.get(path, accept)).status;

describe('§1.5 cascades', () => {
  test('deleting a bridge deletes its ports; their links and bindings go with them', async () => {
    await h.api.create(`/bridges/${id(2)}/mac_table`, T.macPort, { macAddr: '02:00:00:00:00:06', portId: id(6) });
    await h.api.create(`/bridges/${id(2)}/arp_table`, T.arp, { ip: '10.1.2.2', mac: '02:00:00:00:00:06' });
    expect((await h.api.delete(`/bridges/${id(2)}`)).status).toBe(204);
    expect(await status(`/ports/${id(3)}`, T.port)).toBe(404);
    expect(await status(`/ports/${id(6)}`, T.port)).toBe(404);
    // The router-side peer is unlinked, and the host has no binding left.
    expect((await h.api.get(`/ports/${id(4)}`, T.port)).json.peerId).toBeNull();
    expect((await h.api.get(`/hosts/${id(900)}/ports`, T.hostPorts)).json).toEqual([]);
    const dump = await h.admin.dump();
    expect(dump.MACPort).toEqual([]);
    expect(dump.IPv4MACPair).toEqual([]);
    expect(dump.PortLink).toEqual([]);
  });

  test('deleting a router deletes its ports and routes (the Local route included); the bridge side is unlinked', async () => {
    const before = (await h.api.get(`/routers/${id(1)}/routes`, T.routes)).json as { id: string }[];
    expect(before.length).toBe(2); // the Normal route and the router port's Local route
    expect((await h.api.delete(`/routers/${id(1)}`)).status).toBe(204);
    expect(await status(`/ports/${id(4)}`, T.port)).toBe(404);
    for (const route of before) expect(await status(`/routes/${route.id}`, T.route)).toBe(404);
    expect((await h.api.get(`/ports/${id(3)}`, T.port)).json.peerId).toBeNull();
  });

  test('deleting a port deletes the routes whose next hop it is and clears the peer', async () => {
    expect((await h.api.delete(`/ports/${id(4)}`)).status).toBe(204);
    expect(await status(`/routes/${id(5)}`, T.route)).toBe(404);
    expect((await h.api.get(`/routers/${id(1)}/routes`, T.routes)).json).toEqual([]);
    expect((await h.api.get(`/ports/${id(3)}`, T.port)).json.peerId).toBeNull();
  });

  test('deleting a bound port removes its binding from the host', async () => {
    expect((await h.api.delete(`/ports/${id(6)}`)).status).toBe(204);
    expect((await h.api.get(`/hosts/${id(900)}/ports`, T.hostPorts)).json).toEqual([]);
  });

  test('deleting a chain deletes its rules and the jump rules targeting it, and clears filter ids; other rules stay', async () => {
    await h.api.create('/chains', T.chain, { id: id(20) });
    await h.api.create('/chains', T.chain, { id: id(21) });
    await h.api.create(`/chains/${id(20)}/rules`, T.rule, { id: id(30), type: 'accept' });
    await h.api.create(`/chains/${id(21)}/rules`, T.rule, { id: id(31), type: 'jump', jumpChainId: id(20) });
    await h.api.create(`/chains/${id(21)}/rules`, T.rule, { id: id(32), type: 'drop' });
    await h.api.put(`/bridges/${id(2)}`, T.bridge, { inboundFilterId: id(20) });
    await h.api.put(`/ports/${id(6)}`, T.port, { type: 'Bridge', outboundFilterId: id(20) });
    await h.api.put(`/routers/${id(1)}`, T.router, { inboundFilterId: id(20) });

    expect((await h.api.delete(`/chains/${id(20)}`)).status).toBe(204);
    expect(await status(`/rules/${id(30)}`, T.rule)).toBe(404);
    expect(await status(`/rules/${id(31)}`, T.rule)).toBe(404);
    expect((await h.api.get(`/rules/${id(32)}`, T.rule)).json.position).toBe(1);
    expect((await h.api.get(`/bridges/${id(2)}`, T.bridge)).json.inboundFilterId).toBeNull();
    expect((await h.api.get(`/ports/${id(6)}`, T.port)).json.outboundFilterId).toBeNull();
    expect((await h.api.get(`/routers/${id(1)}`, T.router)).json.inboundFilterId).toBeNull();
  });

  test('deleting a rule removes it from its chain and renumbers the positions', async () => {
    await h.api.create('/chains', T.chain, { id: id(20) });
    for (const n of [40, 41, 42]) await h.api.create(`/chains/${id(20)}/rules`, T.rule, { id: id(n), type: 'accept' });
    expect((await h.api.delete(`/rules/${id(41)}`)).status).toBe(204);
    const list = (await h.api.get(`/chains/${id(20)}/rules`, T.rules)).json as { id: string; position: number }[];
    expect(list.map((r) => [r.id, r.position])).toEqual([
      [id(42), 1],
      [id(40), 2],
    ]);
  });

  test('deleting a tunnel zone clears its memberships; the host stays', async () => {
    expect((await h.api.delete(`/tunnel_zones/${id(800)}`)).status).toBe(204);
    expect((await h.admin.dump()).TunnelZoneHost).toEqual([]);
    expect(await status(`/hosts/${id(900)}`, T.host)).toBe(200);
  });

  test('a host going away (admin) clears hostId on its ports and leaves its tunnel zones', async () => {
    await h.admin.removeHost(id(900));
    const port = (await h.api.get(`/ports/${id(6)}`, T.port)).json;
    expect(port).toMatchObject({ hostId: null, interfaceName: null });
    expect((await h.api.get(`/tunnel_zones/${id(800)}/hosts`, T.tunnelZoneHosts)).json).toEqual([]);
  });
});
