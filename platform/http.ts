import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { z } from 'zod';
import { whole, type Setting } from './settings';

/**
 * The HTTP endpoints of Steward's processes (the worker and the starter): `/healthz` (liveness: the process and its
 * loop are alive; a restart would help), `/readyz` (readiness: it can do its work now, else the problems) and
 * `/metrics` (Prometheus text). node:http is enough for three routes.
 */
export interface HttpHandlers {
  /** Liveness: empty while the process can still do its work, else why not. */
  liveness(): string[];
  /** Readiness: empty when it can take work now, else the problems. */
  readiness(): Promise<string[]>;
  metrics(): Promise<string>;
}

/**
 * The server's two settings for a process whose variables start with `envPrefix`: the worker's and the starter's
 * differ, since `steward up` runs both in one process.
 */
export const httpSettings = (envPrefix: string, port: number) =>
  ({
    httpHost: {
      env: `${envPrefix}_HTTP_HOST`,
      arg: 'address',
      default: '0.0.0.0',
      description: 'address of the health and metrics server',
    },
    httpPort: {
      env: `${envPrefix}_HTTP_PORT`,
      arg: 'port',
      default: String(port),
      description: 'port of /healthz, /readyz and /metrics (0: any free port)',
    },
  }) satisfies Record<string, Setting>;

/** What `httpSettings` accept. */
export const httpShape = { httpHost: z.string().min(1), httpPort: whole(0, 65535) };

/** A readiness check: resolves when what it checks answers, else throws an Error saying what does not. */
export type Check = () => Promise<unknown>;

/** The messages of the checks that fail, run side by side, in the checks' order. */
export async function failedChecks(checks: readonly Check[]): Promise<string[]> {
  const results = await Promise.allSettled(checks.map((check) => check()));
  return results.flatMap((result) =>
    result.status === 'rejected'
      ? [result.reason instanceof Error ? result.reason.message : String(result.reason)]
      : [],
  );
}

const probe = (res: ServerResponse, key: 'ok' | 'ready', problems: string[]) =>
  send(
    res,
    problems.length ? 503 : 200,
    'application/json',
    JSON.stringify({ [key]: problems.length === 0, problems }),
  );

export interface HttpServer {
  port: number;
  close(): Promise<void>;
}

const send = (res: ServerResponse, status: number, contentType: string, body: string) => {
  res.writeHead(status, { 'content-type': contentType }).end(body);
};

export async function startHttpServer(
  host: string,
  port: number,
  handlers: HttpHandlers,
  log: Logger,
): Promise<HttpServer> {
  const server = createServer((req, res) => {
    const route = async () => {
      switch (req.url?.split('?')[0]) {
        case '/healthz':
          return probe(res, 'ok', handlers.liveness());
        case '/readyz':
          return probe(res, 'ready', await handlers.readiness());
        case '/metrics':
          return send(res, 200, 'text/plain; version=0.0.4; charset=utf-8', await handlers.metrics());
        default:
          return send(res, 404, 'text/plain', 'not found: try /healthz, /readyz or /metrics\n');
      }
    };
    route().catch((error: unknown) => {
      log.error({ err: error, url: req.url }, 'HTTP handler failed');
      if (!res.headersSent) send(res, 500, 'text/plain', 'internal error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
