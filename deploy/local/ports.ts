import { existsSync, readFileSync, statSync } from 'node:fs';
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
 * Runs `start`, which picks its ports with `freePort` and starts a server logging to `logFile`, again when the server
 * could not bind one of them (what this attempt wrote to the log says so): a free port is only free when picked, and
 * another process (another stack starting, a server of the previous one still closing) may take it meanwhile.
 */
export async function retryWhenPortTaken<T>(logFile: string, start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const logged = existsSync(logFile) ? statSync(logFile).size : 0;
    try {
      return await start();
    } catch (error) {
      const taken = existsSync(logFile) && readFileSync(logFile).subarray(logged).toString('utf8').includes('address already in use');
      if (!taken || attempt >= attempts) throw error;
    }
  }
}
