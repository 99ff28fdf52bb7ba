import { join } from 'node:path';
import { freePort } from '../../worker/ports';
import { retryWhenPortTaken } from './ports';
import { ManagedProcess, waitUntil } from './process';

/** The MidoNet API emulator (./midonet) as a process of the stack, so tests can stop it like a real backend. */
export interface MidonetServer {
  url: string;
  adminUrl: string;
  process: ManagedProcess;
}

export function startMidonet(options: { stateDir: string; port: number }): Promise<MidonetServer> {
  const logFile = join(options.stateDir, 'logs', 'midonet-emulator.log');
  return retryWhenPortTaken(logFile, async () => {
    const port = await freePort(options.port);
    const origin = `http://127.0.0.1:${port}`;
    const server = ManagedProcess.start(
      'midonet-emulator',
      process.execPath,
      [
        '--import',
        'tsx',
        join(__dirname, 'midonet', 'main.ts'),
        '--port',
        String(port),
        '--data-file',
        join(options.stateDir, 'midonet', 'state.json'),
      ],
      { logFile },
    );
    const adminUrl = `${origin}/_emulator`;
    // Generous: a fresh machine compiles the emulator with tsx while the other servers start, and took 33 s once;
    // a process that dies fails the wait at once.
    await waitUntil('MidoNet emulator ready', async () => (await fetch(`${adminUrl}/health`)).ok, {
      timeoutMs: 90_000,
      process: server,
    });
    return { url: `${origin}/midonet-api`, adminUrl, process: server };
  });
}
