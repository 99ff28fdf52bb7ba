import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type RelayMode = 'pass' | 'freeze' | 'cut';

/**
 * A TCP relay in front of a server (Temporal's frontend in the starter's fault tests) that a test switches between
 * `pass`, `freeze` (every connection stalls: bytes wait in the kernel, calls hang until their deadline, and the stream
 * resumes intact on `pass`) and `cut` (every connection is reset and new ones are refused at once).
 */
export class TcpRelay {
  private server?: Server;
  private readonly pairs = new Set<Pair>();
  private mode: RelayMode = 'pass';

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<string> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  set(mode: RelayMode): void {
    this.mode = mode;
    for (const pair of this.pairs) {
      if (mode === 'cut') [pair.client, pair.upstream].forEach((socket) => socket.resetAndDestroy());
      else flow(pair, mode === 'pass');
    }
  }

  async stop(): Promise<void> {
    this.set('cut');
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: Socket): void {
    if (this.mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(this.target);
    const pair: Pair = { client, upstream, flowing: false };
    this.pairs.add(pair);
    const close = () => {
      this.pairs.delete(pair);
      [client, upstream].forEach((socket) => socket.destroy());
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    flow(pair, this.mode === 'pass');
  }
}

interface Pair {
  client: Socket;
  upstream: Socket;
  flowing: boolean;
}

/** Unpiped and paused, a socket reads nothing more (a pipe would resume it on its destination's next drain). */
function flow(pair: Pair, on: boolean): void {
  if (pair.flowing === on) return;
  pair.flowing = on;
  const { client, upstream } = pair;
  if (on) {
    client.pipe(upstream);
    upstream.pipe(client);
  } else {
    client.unpipe(upstream).pause();
    upstream.unpipe(client).pause();
  }
}
