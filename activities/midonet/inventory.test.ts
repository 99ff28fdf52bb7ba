// The sweeper's MidoNet activities against the real emulator: a tenant's top-level resources only, and batch
// deletes that cascade and count what was already gone.
import { EmulatorAdmin, startMidonetEmulator, type MidonetEmulator } from '../../deploy/local/midonet';
import { backendResource, createMidonetClient } from './client';
import { createMidonetInventoryActivities } from './inventory';

const id = (n: number) => `b0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

let emulator: MidonetEmulator;
let admin: EmulatorAdmin;
let acts: ReturnType<typeof createMidonetInventoryActivities>;
let client: ReturnType<typeof createMidonetClient>;

beforeAll(async () => {
  emulator = await startMidonetEmulator({ port: 0 });
  admin = new EmulatorAdmin(emulator.adminUrl);
  client = createMidonetClient({ baseUrl: emulator.url, username: 'admin', password: 'secret' });
  acts = createMidonetInventoryActivities(client);
});
afterAll(() => emulator.close());
beforeEach(() => admin.reset());

it("lists the tenant's routers, bridges and chains, and nothing of another tenant or without one", async () => {
  await client.ensure(backendResource('Router', '', { id: id(1), name: 'ClusterRouter', tenantId: 'mine' }));
  await client.ensure(backendResource('Bridge', '', { id: id(2), name: 'node1', tenantId: 'mine' }));
  await client.ensure(backendResource('Chain', '', { id: id(3), tenantId: 'mine' }));
  await client.ensure(backendResource('Bridge', '', { id: id(4), name: 'theirs', tenantId: 'other' }));
  await client.ensure(backendResource('Bridge', '', { id: id(5), name: 'nobody' }));
  await client.ensure(backendResource('Port', id(2), { id: id(6), type: 'Bridge' }));
  const { resources } = await acts.midonetListTenantResources({ tenant: 'mine' });
  expect(resources).toEqual([
    { kind: 'Router', id: id(1), name: 'ClusterRouter' },
    { kind: 'Bridge', id: id(2), name: 'node1' },
    { kind: 'Chain', id: id(3) },
  ]);
});

it('deletes a batch (a bridge takes its ports along) and counts the ones already gone as absent', async () => {
  await client.ensure(backendResource('Bridge', '', { id: id(2), tenantId: 'mine' }));
  await client.ensure(backendResource('Port', id(2), { id: id(6), type: 'Bridge' }));
  await client.ensure(backendResource('Chain', '', { id: id(3), tenantId: 'mine' }));
  const batch = {
    resources: [
      { kind: 'Bridge' as const, id: id(2) },
      { kind: 'Chain' as const, id: id(3) },
      { kind: 'Bridge' as const, id: id(9) },
    ],
  };
  await expect(acts.midonetDeleteResources(batch)).resolves.toEqual({ deleted: 2, absent: 1 });
  const state = await admin.dump();
  expect([state.Bridge, state.Chain, state.Port]).toEqual([[], [], []]);
  await expect(acts.midonetDeleteResources(batch)).resolves.toEqual({ deleted: 0, absent: 3 });
});
