// Ref §1.4 PortLink; checklist §4.8.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/routers', T.router, { id: id(1) });
  await h.api.create('/bridges', T.bridge, { id: id(2) });
  for (const n of [3, 5]) await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(n), type: 'Bridge' });
  for (const n of [4, 6]) await h.api.create(`/routers/${id(1)}/ports`, T.port, { id: id(n), type: 'Router' });
});

const peerOf = async (port: number): Promise<string | null> =>
  ((await h.api.get(`/ports/${id(port)}`, T.port)).json as { peerId: string | null }).peerId;

describe('§1.4 PortLink', () => {
  test('a link is symmetric: both ports name each other; Location is built from portId', async () => {
    const res = await h.api.post(`/ports/${id(3)}/link`, T.link, { portId: id(3), peerId: id(4) });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`${h.emulator.url}/ports/${id(3)}/link`);
    expect(await peerOf(3)).toBe(id(4));
    expect(await peerOf(4)).toBe(id(3));
  });

  test('without portId (midonet-kubernetes sends "portId": null, MNA-1249) the link works and has no Location', async () => {
    const res = await h.api.post(`/ports/${id(3)}/link`, T.link, { portId: null, peerId: id(4) });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBeNull();
  });

  test.each([
    ['linking the same pair again', 3, 4],
    ['linking the linked port to another port', 3, 6],
    ['linking another port to the linked peer', 5, 4],
    ['linking from the peer’s side', 4, 3],
  ])('%s → 409 "Ports are not linkable."', async (_w, from, to) => {
    await h.api.create(`/ports/${id(3)}/link`, T.link, { peerId: id(4) });
    const res = await h.api.post(`/ports/${id(from)}/link`, T.link, { peerId: id(to) });
    expect(res.status).toBe(409);
    expect(res.json).toEqual({ message: 'Ports are not linkable.', code: 409 });
  });

  test.each([
    ['the port in the path', 99, 4],
    ['the peer', 3, 99],
  ])('a link where %s is missing → 404', async (_w, from, to) => {
    expect((await h.api.post(`/ports/${id(from)}/link`, T.link, { peerId: id(to) })).status).toBe(404);
  });

  test('unlink clears both sides (204) and is idempotent (204 again); then the ports can link anew', async () => {
    await h.api.create(`/ports/${id(3)}/link`, T.link, { peerId: id(4) });
    expect((await h.api.delete(`/ports/${id(4)}/link`)).status).toBe(204);
    expect(await peerOf(3)).toBeNull();
    expect(await peerOf(4)).toBeNull();
    expect((await h.api.delete(`/ports/${id(4)}/link`)).status).toBe(204);
    expect((await h.api.post(`/ports/${id(3)}/link`, T.link, { peerId: id(6) })).status).toBe(201);
  });

  test('peer_ports lists the ports linked to a device', async () => {
    await h.api.create(`/ports/${id(3)}/link`, T.link, { peerId: id(4) });
    const peers = (await h.api.get(`/bridges/${id(2)}/peer_ports`, T.ports)).json as { id: string }[];
    expect(peers.map((p) => p.id)).toEqual([id(4)]);
  });
});
