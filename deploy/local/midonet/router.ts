// Registers API routes on fastify and, for every path, answers 405 with Allow to the methods it lacks,
// as Jersey does for a matched path (ref §1.2). Each route carries its kind for the request counters.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { emptyStatus } from './errors';
import { API_PREFIX } from './http';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>;

export interface RouteConfig {
  /** Resource kind for counters; also marks a request as API traffic. */
  kind: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    kind?: string;
    admin?: boolean;
  }
}

const ALL: readonly Method[] = ['GET', 'POST', 'PUT', 'DELETE'];

export class ApiRouter {
  private readonly paths = new Map<string, { kind: string; methods: Set<Method> }>();

  constructor(private readonly app: FastifyInstance) {}

  add(method: Method, path: string, kind: string, handler: Handler): void {
    const entry = this.paths.get(path) ?? { kind, methods: new Set<Method>() };
    if (entry.methods.has(method)) throw new Error(`${method} ${path} registered twice`);
    entry.methods.add(method);
    this.paths.set(path, entry);
    this.app.route({ method, url: API_PREFIX + path, config: { kind }, handler });
  }

  /** A path the server knows but offers no method on (every method → 405). */
  declare(path: string, kind: string): void {
    if (!this.paths.has(path)) this.paths.set(path, { kind, methods: new Set<Method>() });
  }

  /** Call once, after every add. */
  finish(): void {
    for (const [path, { kind, methods }] of this.paths) {
      const missing = ALL.filter((m) => !methods.has(m));
      if (missing.length === 0) continue;
      const allow = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', ');
      this.app.route({
        method: missing,
        url: API_PREFIX + path,
        config: { kind },
        handler: () => Promise.reject(emptyStatus(405, `${path} does not support this method`, { Allow: allow })),
      });
    }
  }
}
