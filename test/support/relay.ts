// A backend as the worker reaches it: a socket relay the test can cut and restore, so "the backend is down" is seen by
// Steward alone (the backend stays up for everything else: the test, the starter, the other processes).
import * as k8s from '@kubernetes/client-node';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type NetConnectOpts, type Server, type Socket } from 'node:net';

export class SocketRelay {
  private server?: Server;
  private readonly open = new Set<Socket>();
  constructor(
    /** A Unix socket path, or a TCP port on 127.0.0.1 (0: a free one outside the ephemeral range, kept across a cut). */
    private listenOn: string | number,
    private readonly upstream: NetConnectOpts,
  ) {}

  /** The TCP port it listens on (once started). */
  get port(): number {
    if (typeof this.listenOn !== 'number') throw new Error('a Unix-socket relay has no port');
    return this.listenOn;
  }

  /** Listens (again, after a cut): the backend is reachable. */
  async start(): Promise<void> {
    if (typeof this.listenOn === 'string') rmSync(this.listenOn, { force: true });
    const server = createServer((socket) => {
      const upstream = connect(this.upstream);
      for (const s of [socket, upstream]) {
        this.open.add(s);
        s.on('close', () => this.open.delete(s));
        s.on('error', () => undefined);
      }
      socket.pipe(upstream).pipe(socket);
    });
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

  /** Cuts every connection and refuses new ones: the backend is unreachable. */
  async stop(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}

/**
 * A port the kernel never hands out by itself: below its ephemeral range (Linux's, 32768 up unless set otherwise). An
 * ephemeral port freed by a cut can be taken meanwhile by the local end of any connection on the machine (the relay's
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
export function apiServerRelay(kubeconfig: string): SocketRelay {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const server = new URL(kc.getCurrentCluster()!.server);
  return new SocketRelay(0, { host: server.hostname, port: Number(server.port) });
}

/** A copy of the kubeconfig whose cluster is reached through `relay`; its path. */
export function relayedKubeconfig(kubeconfig: string, relay: SocketRelay): string {
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
