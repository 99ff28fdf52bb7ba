import { createServer } from 'node:net';

/** Resolves `preferred` when it is free on 127.0.0.1, else (or when preferred is 0) a port the kernel picks. */
export async function freePort(preferred = 0): Promise<number> {
  if (preferred !== 0 && (await canListen(preferred))) return preferred;
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
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
