import { createServer, type Server } from 'node:net';

/** Resolves `preferred` when it is free on 127.0.0.1, else (or when preferred is 0) a port the kernel picks. */
export async function freePort(preferred = 0): Promise<number> {
  if (preferred !== 0 && (await canListen(preferred))) return preferred;
  return (await freePorts(1))[0]!;
}

/**
 * `count` distinct ports the kernel picks, each held until all are picked: ports picked one after the other can come
 * back the same (a port closed at once is free again; 3 in 2,000 triples here), and a server given two equal ports
 * fails to bind (a stack's etcd and kube-apiserver both on 45417).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (typeof address === 'object' && address) resolve(address.port);
            else reject(new Error('no port'));
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
