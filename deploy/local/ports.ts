import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Resolves `preferred` when it is free on 127.0.0.1, else (or when preferred is 0) a port the kernel picks. */
export async function freePort(preferred = 0): Promise<number> {
  if (preferred !== 0 && (await canListen(preferred))) return preferred;
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Runs `start` on a free port, and again on another one when the server could not bind it: a free port is only free
 * when picked, and another process (a parallel test stack) may take it before the server binds it.
 */
export async function onFreePort(logFile: string, start: (port: number) => Promise<void>, attempts = 3): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      const taken = existsSync(logFile) && readFileSync(logFile, 'utf8').includes('address already in use');
      if (!taken || attempt >= attempts) throw error;
    }
  }
}
