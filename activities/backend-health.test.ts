import pino from 'pino';
import { EmulatorAdmin, startMidonetEmulator, type MidonetEmulator } from '../deploy/local/midonet';
import { createMidonetClient } from './midonet/client';
import { watchBackendHealth, type BackendHealth } from './backend-health';

let emulator: MidonetEmulator;
let admin: EmulatorAdmin;
beforeAll(async () => {
  emulator = await startMidonetEmulator({ port: 0 });
  admin = new EmulatorAdmin(emulator.adminUrl);
});
afterAll(() => emulator.close());

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
};

describe("MidoNet's health as the worker's calls see it", () => {
  it.each(['unavailable', 'drop'] as const)(
    'down (%s): asked again until it answers, then the stuck lifecycles are woken, and twice more as it settles; a 500 is an answer',
    async (mode) => {
      let probes = 0;
      let wakes = 0;
      const health: BackendHealth = watchBackendHealth({
        backend: 'MidoNet',
        probe: () => (probes++, client.listHosts()),
        wake: () => (wakes++, Promise.resolve()),
        log: pino({ level: 'silent' }),
        probeMs: 20,
        settleMs: 50,
        settleWakes: 2,
      });
      const client = createMidonetClient(
        { baseUrl: emulator.url, username: 'admin', password: 'secret', timeoutMs: 1_000 },
        (answered) => health.observe(answered),
      );
      try {
        await client.listHosts();
        await admin.setDown(true, mode);
        await expect(client.listHosts()).rejects.toThrow();
        await until('probes while down', () => probes >= 2);
        expect(wakes).toBe(0);
        await admin.setDown(false);
        await until('the wake', () => wakes === 1);
        const probed = probes;
        await until('the wakes as it settles', () => wakes === 3);
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect([probes, wakes]).toEqual([probed, 3]);
        // An answer of its own, even an error, is MidoNet up.
        await admin.injectFault({ path: '/hosts', action: 'error', status: 500, times: 1 });
        await expect(client.listHosts()).rejects.toThrow();
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect([probes, wakes]).toEqual([probed, 3]);
      } finally {
        health.stop();
        await admin.reset();
      }
    },
  );
});
