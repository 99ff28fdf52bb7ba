/* eslint-disable @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Persistence: state survives a restart (the requirement; not a MidoNet API fact).
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMidonetEmulator } from './index';
import { Api, id, T } from './testing/conformance';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'midonet-emulator-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('persistence', () => {
  test('resources, links, bindings, rule order and tokens survive close() and a restart on the same file', async () => {
    const dataFile = join(dir, 'state', 'midonet.json');
    const first = await startMidonetEmulator({ port: 0, dataFile });
    const api = new Api(first.url);
    const token = await api.login();
    await api.create('/bridges', T.bridge, { id: id(1), name: 'kept' });
    await api.create(`/bridges/${id(1)}/ports`, T.port, { id: id(2), type: 'Bridge' });
    await api.create('/routers', T.router, { id: id(3) });
    await api.create(`/routers/${id(3)}/ports`, T.port, { id: id(4), type: 'Router', portSubnet: ['10.0.0.1/24'] });
    await api.create(`/ports/${id(2)}/link`, T.link, { peerId: id(4) });
    await api.create('/chains', T.chain, { id: id(5) });
    for (const n of [6, 7]) await api.create(`/chains/${id(5)}/rules`, T.rule, { id: id(n), type: 'accept' });
    await first.close();
    expect((await readdir(join(dir, 'state'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    const second = await startMidonetEmulator({ port: 0, dataFile });
    try {
      const again = new Api(second.url);
      again.token = token; // the token issued before the restart still works
      expect((await again.get(`/bridges/${id(1)}`, T.bridge)).json.name).toBe('kept');
      expect((await again.get(`/ports/${id(2)}`, T.port)).json.peerId).toBe(id(4));
      expect(((await again.get(`/routers/${id(3)}/routes`, T.routes)).json as unknown[]).length).toBe(1);
      const rules = (await again.get(`/chains/${id(5)}/rules`, T.rules)).json as { id: string }[];
      expect(rules.map((r) => r.id)).toEqual([id(7), id(6)]);
      // Tunnel keys continue from where they were, not from 1.
      await again.create(`/bridges/${id(1)}/ports`, T.port, { id: id(8), type: 'Bridge' });
      const keys = await Promise.all(
        [2, 4, 8].map(async (n) => (await again.get(`/ports/${id(n)}`, T.port)).json.tunnelKey as number),
      );
      expect(new Set(keys).size).toBe(3);
    } finally {
      await second.close();
    }
  });

  test('writes are debounced but reach the file without close()', async () => {
    const dataFile = join(dir, 'debounced.json');
    const emulator = await startMidonetEmulator({ port: 0, dataFile, auth: 'mock' });
    try {
      await new Api(emulator.url).create('/chains', T.chain, { id: id(1) });
      await new Promise((r) => setTimeout(r, 300));
      expect(JSON.parse(await readFile(dataFile, 'utf8'))).toMatchObject({ chains: { [id(1)]: { id: id(1) } } });
    } finally {
      await emulator.close();
    }
  });

  test('a file that is not emulator state is refused rather than overwritten', async () => {
    const dataFile = join(dir, 'foreign.json');
    await writeFile(dataFile, '{"hello":"world"}');
    await expect(startMidonetEmulator({ port: 0, dataFile })).rejects.toThrow(/not MidoNet emulator state/);
    expect(await readFile(dataFile, 'utf8')).toBe('{"hello":"world"}');
  });

  test('without a dataFile nothing is kept across a restart', async () => {
    const first = await startMidonetEmulator({ port: 0, auth: 'mock' });
    await new Api(first.url).create('/chains', T.chain, { id: id(1) });
    await first.close();
    const second = await startMidonetEmulator({ port: 0, auth: 'mock' });
    try {
      expect((await new Api(second.url).get('/chains', T.chains)).json).toEqual([]);
    } finally {
      await second.close();
    }
  });
});
