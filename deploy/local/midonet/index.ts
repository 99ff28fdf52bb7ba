// The MidoNet v5 REST API emulator: Steward's one stand-in for a backend, faithful to
// ../../../shared/ref/midonet-api.md, persisted to a JSON file, with an admin endpoint for seeding hosts,
// dumping state, counters and fault injection. README.md lists every fidelity decision.
import type { AddressInfo } from 'node:net';
import { buildServer } from './server';
import { Store } from './store';
import { API_PREFIX } from './http';
import { ADMIN_PREFIX } from './admin';
import { journalFile } from './journal';

export { EmulatorAdmin } from './admin-client';
export type { ConfigPatch, EmulatorConfig, HostSeed, JournalEntry, StateDump } from './admin-types';
export type { CountersSnapshot } from './counters';
export type { DownState, FaultInfo, FaultSpec } from './faults';

export interface MidonetEmulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8181 (MidoNet's); 0 = any free port. */
  port?: number;
  /** Where state is persisted; absent: in memory only. */
  dataFile?: string;
  /** `token` (default) requires a token from POST /login; `mock` accepts anything, as MidoNet's MockAuthService. */
  auth?: 'token' | 'mock';
}

export interface MidonetEmulator {
  /** e.g. http://127.0.0.1:8181/midonet-api */
  url: string;
  /** e.g. http://127.0.0.1:8181/_emulator */
  adminUrl: string;
  port: number;
  /** Stops listening and writes pending state (and the write journal, next to it). */
  close(): Promise<void>;
}

export async function startMidonetEmulator(options: MidonetEmulatorOptions = {}): Promise<MidonetEmulator> {
  const host = options.host ?? '127.0.0.1';
  const store = await Store.open(options.dataFile);
  const { app, journal } = buildServer(store, options.auth ? { auth: options.auth } : {});
  if (options.dataFile) await journal.load(journalFile(options.dataFile));
  await app.listen({ host, port: options.port ?? 8181 });
  const port = (app.server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url: origin + API_PREFIX,
    adminUrl: origin + ADMIN_PREFIX,
    port,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await store.flush();
        if (options.dataFile) await journal.save(journalFile(options.dataFile));
      })()),
  };
}
