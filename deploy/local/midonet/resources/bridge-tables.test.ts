// Ref §1.4 Bridge MAC table and ARP table (keys, MNA-1315); checklist §4.12.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/bridges', T.bridge, { id: id(1) });
  await h.api.create('/bridges', T.bridge, { id: id(2) });
  await h.api.create(`/bridges/${id(1)}/ports`, T.port, { id: id(3), type: 'Bridge' });
  await h.api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(4), type: 'Bridge' });
});

const mac = { macAddr: 'ac:ca:ba:ca:12:f3', portId: id(3) };
const macPath = `/bridges/${id(1)}/mac_table/ac-ca-ba-ca-12-f3_${id(3)}`;
const arp = { ip: '10.1.2.2', mac: 'ac:ca:ba:ca:12:f3' };
const arpPath = `/bridges/${id(1)}/arp_table/10.1.2.2_ac-ca-ba-ca-12-f3`;

/** POSTs an entry to bridge 1's `table` and checks it answers 201 at `itemPath`, where GET shows it. */
async function postEntry(table: string, type: string, entry: object, itemPath: string): Promise<void> {
  const res = await h.api.post(`/bridges/${id(1)}/${table}`, type, entry);
  expect(res.status).toBe(201);
  expect(res.headers.get('location')).toBe(h.emulator.url + itemPath);
  expect((await h.api.get(itemPath, type)).json).toMatchObject(entry);
}

describe('§1.4 MAC table', () => {
  test('an entry is addressed as {mac-with-dashes}_{portId}: 201 with that Location, GET, DELETE', async () => {
    await postEntry('mac_table', T.macPort, mac, macPath);
    expect((await h.api.get(`/bridges/${id(1)}/mac_table`, T.macPorts)).json).toEqual([expect.objectContaining(mac)]);
    expect((await h.api.delete(macPath)).status).toBe(204);
    expect((await h.api.get(macPath, T.macPort)).status).toBe(404);
  });

  test('a duplicate POST → 500 as upstream (MNA-1315); configured, → 409', async () => {
    await h.api.create(`/bridges/${id(1)}/mac_table`, T.macPort, mac);
    expect((await h.api.post(`/bridges/${id(1)}/mac_table`, T.macPort, mac)).status).toBe(500);
    await h.admin.configure({ duplicateTableEntryStatus: 409 });
    expect((await h.api.post(`/bridges/${id(1)}/mac_table`, T.macPort, mac)).status).toBe(409);
  });

  test.each([
    ['a port of another bridge → 400', { macAddr: 'ac:ca:ba:00:00:01', portId: id(4) }, 400],
    ['an unknown port → 404', { macAddr: 'ac:ca:ba:00:00:01', portId: id(99) }, 404],
    ['a malformed MAC → 400', { macAddr: 'not-a-mac', portId: id(3) }, 400],
  ])('%s', async (_w, body, status) => {
    expect((await h.api.post(`/bridges/${id(1)}/mac_table`, T.macPort, body)).status).toBe(status);
  });
});

describe('§1.4 ARP table', () => {
  test('an entry is addressed as {ip}_{mac-with-dashes}: 201 with that Location, GET, DELETE', async () => {
    await postEntry('arp_table', T.arp, arp, arpPath);
    expect((await h.api.delete(arpPath)).status).toBe(204);
  });

  test('a duplicate POST → 500 (MNA-1315)', async () => {
    await h.api.create(`/bridges/${id(1)}/arp_table`, T.arp, arp);
    expect((await h.api.post(`/bridges/${id(1)}/arp_table`, T.arp, arp)).status).toBe(500);
  });

  test('an entry on a missing bridge → 404', async () => {
    expect((await h.api.post(`/bridges/${id(99)}/arp_table`, T.arp, arp)).status).toBe(404);
  });
});
