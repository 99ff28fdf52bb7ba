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
    'asked at start, its first answer wakes what a predecessor left stuck; down (%s): asked again until it answers, then the stuck lifecycles are woken, and twice more as it settles; a 500 is an answer',
    async (mode) => {
      let probes = 0;
      const wakes: string[] = [];
      const health: BackendHealth = watchBackendHealth({
        backend: 'MidoNet',
        probe: () => (probes++, client.listHosts()),
        wake: (by) => (wakes.push(by), Promise.resolve()),
        log: pino({ level: 'silent' }),
        probeMs: 20,
        settleMs: 50,
        settleWakes: 2,
      });
      const client = createMidonetClient(
        { baseUrl: emulator.url, username: 'admin', password: 'secret', timeoutMs: 1_000 },
        (answered) => health.observe(answered),
      );
      const started = 'MidoNet answers a worker just started';
      const again = 'MidoNet answers again';
      try {
        // Nobody called it yet: it asks once by itself, and wakes once.
        await until('the wake at start', () => wakes.length === 1);
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(probes).toBe(1);
        expect(wakes).toEqual([started]);
        await client.listHosts();
        await admin.setDown(true, mode);
        await expect(client.listHosts()).rejects.toThrow();
        await until('probes while down', () => probes >= 3);
        expect(wakes).toHaveLength(1);
        await admin.setDown(false);
        await until('the wake', () => wakes.length === 2);
        const probed = probes;
        await until('the wakes as it settles', () => wakes.length === 4);
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(probes).toBe(probed);
        expect(wakes.slice(1)).toEqual([again, again, again]);
        // An answer of its own, even an error, is MidoNet up.
        await admin.injectFault({ path: '/hosts', action: 'error', status: 500, times: 1 });
        await expect(client.listHosts()).rejects.toThrow();
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect([probes, wakes.length]).toEqual([probed, 4]);
      } finally {
        health.stop();
        await admin.reset();
      }
    },
  );
});
