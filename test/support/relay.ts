// A backend as the code under test reaches it: a socket relay the test can freeze, cut and take down, so "the backend
// is down" is seen by that code alone (the backend stays up for everything else: the test, the starter, the other
// processes).
import * as k8s from '@kubernetes/client-node';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type NetConnectOpts, type Server, type Socket } from 'node:net';

/**
 * `pass`; `freeze`: every connection stalls (bytes wait in the kernel, calls hang until their deadline, and the stream
 * resumes intact on `pass`); `cut`: every connection is reset, and new ones are reset as they come.
 */
export type RelayMode = 'pass' | 'freeze' | 'cut';

export class Relay {
  private server?: Server;
  private readonly pairs = new Set<Pair>();
  private mode: RelayMode = 'pass';
  constructor(
    /** A Unix socket path, or a TCP port on 127.0.0.1 (0: a free one outside the ephemeral range, kept across a stop). */
    private listenOn: string | number,
    private readonly upstream: NetConnectOpts,
  ) {}

  /** The TCP port it listens on (once started). */
  get port(): number {
    if (typeof this.listenOn !== 'number') throw new Error('a Unix-socket relay has no port');
    return this.listenOn;
  }

  /** `127.0.0.1:<port>` (once started). */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Listens (again, after a stop, on the same address): the backend is reachable. */
  async start(): Promise<void> {
    if (typeof this.listenOn === 'string') rmSync(this.listenOn, { force: true });
    const server = createServer((client) => this.accept(client));
    const listen = (on: string | number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        if (typeof on === 'string') server.listen(on, resolve);
        else server.listen(on, '127.0.0.1', resolve);
      });
    if (this.listenOn !== 0) await listen(this.listenOn);
    else {
      for (let tries = 1; ; tries++) {
        const port = unassignedPort();
        try {
          await listen(port);
          this.listenOn = port;
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries === 20) throw error;
        }
      }
    }
    this.server = server;
  }

  set(mode: RelayMode): void {
    this.mode = mode;
    for (const pair of this.pairs) {
      if (mode === 'cut') this.reset(pair);
      else flow(pair, mode === 'pass');
    }
  }

  /** Ends every connection and listens no more, so new ones are refused: the backend is unreachable. */
  async stop(): Promise<void> {
    for (const { client, upstream } of this.pairs) [client, upstream].forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  private accept(client: Socket): void {
    // Cut: reset at once, with no connection to the backend made only to be reset.
    if (this.mode === 'cut') {
      endAbruptly(client, typeof this.listenOn === 'number');
      return;
    }
    const upstream = connect(this.upstream);
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

  /** Each end by its own kind: the listener's and the backend's may differ. */
  private reset({ client, upstream }: Pair): void {
    endAbruptly(client, typeof this.listenOn === 'number');
    endAbruptly(upstream, !('path' in this.upstream));
  }
}

/** A TCP reset; a Unix socket has none (Node throws on it), it is closed. */
function endAbruptly(socket: Socket, tcp: boolean): void {
  if (tcp) socket.resetAndDestroy();
  else socket.destroy();
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

/**
 * A port the kernel never hands out by itself: below its ephemeral range (Linux's, 32768 up unless set otherwise). An
 * ephemeral port freed by a stop can be taken meanwhile by the local end of any connection on the machine (the relay's
 * own to its upstream included), and the relay then cannot listen again (EADDRINUSE).
 */
function unassignedPort(): number {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: its default.
  }
  const from = Math.min(10_000, low - 1_000);
  return from + Math.floor(Math.random() * (low - from));
}

/** The API server behind a relay on 127.0.0.1 (its certificate names that address). */
export function apiServerRelay(kubeconfig: string): Relay {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const server = new URL(kc.getCurrentCluster()!.server);
  return new Relay(0, { host: server.hostname, port: Number(server.port) });
}

/** A copy of the kubeconfig whose cluster is reached through `relay`; its path. */
export function relayedKubeconfig(kubeconfig: string, relay: Relay): string {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const cluster = kc.getCurrentCluster()!;
  const server = new URL(cluster.server);
  server.port = String(relay.port);
  const relayed = new k8s.KubeConfig();
  relayed.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: server.origin } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  const path = `${kubeconfig}.relayed-${relay.port}`;
  writeFileSync(path, relayed.exportConfig());
  return path;
}
