// Assembles the fastify app: body handling, the request pipeline for API traffic (count → read the body → journal →
// down/faults → auth → route), error mapping, the API routes and the admin endpoint.
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { registerAdmin } from './admin';
import { defaultConfig, type Ctx, type EmulatorConfig } from './context';
import { Counters } from './counters';
import { ApiError, emptyStatus, sendError } from './errors';
import { Faults } from './faults';
import { API_PREFIX } from './http';
import { affectedId, Journal, type JournalEntry } from './journal';
import { misdirected } from './misdirect';
import { registerApi } from './resources/index';
import { checkToken } from './resources/login';
import type { Store } from './store';

export interface ServerParts {
  app: FastifyInstance;
  ctx: Ctx;
  faults: Faults;
  counters: Counters;
  journal: Journal;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What a DELETE took with it (cascade.ts), for the journal. */
    cascaded: string[] | null;
    /** A `misdirect` fault fired: the answer will be about another resource (misdirect.ts). */
    misdirect: boolean;
  }
}

const isWrite = (method: string): boolean => method === 'POST' || method === 'PUT' || method === 'DELETE';
const isApi = (url: string): boolean =>
  url === API_PREFIX || url.startsWith(`${API_PREFIX}/`) || url.startsWith(`${API_PREFIX}?`);

export function buildServer(store: Store, overrides: Partial<EmulatorConfig> = {}): ServerParts {
  // Fastify's logger is pino; warn keeps test output quiet.
  const app = Fastify({
    logger: { name: 'midonet-emulator', level: process.env.MIDONET_EMULATOR_LOG_LEVEL ?? 'warn' },
    routerOptions: { ignoreTrailingSlash: true },
  });
  const initialConfig = { ...defaultConfig(), ...overrides };
  const ctx: Ctx = { store, config: { ...initialConfig } };
  const faults = new Faults();
  const counters = new Counters();
  const journal = new Journal();
  // A journal entry from arrival until its answer.
  const pending = new WeakMap<FastifyRequest, Omit<JournalEntry, 'answeredAt' | 'status' | 'clientGone'>>();
  const answer = (req: FastifyRequest, status: number, location?: string) => {
    const entry = pending.get(req);
    if (!entry) return;
    pending.delete(req);
    const id = affectedId(entry.method, entry.path, req.body, location);
    journal.add({
      ...entry,
      answeredAt: Date.now(),
      status,
      clientGone: req.raw.socket.destroyed,
      ...(id ? { id } : {}),
      ...(req.cascaded?.length ? { cascaded: req.cascaded } : {}),
    });
  };
  store.onWriteError = (err) => app.log.error({ err }, 'could not persist emulator state');

  // Bodies stay text: the media-type checks must run before any parsing, and admin routes parse JSON alike.
  app.decorateRequest('cascaded', null);
  app.decorateRequest('misdirect', false);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', (req, _reply, done) => {
    if (isApi(req.url)) counters.request(req.method, req.routeOptions.config.kind ?? 'unknown');
    done();
  });

  // preHandler, not onRequest: the body is read before any injected delay, as Jetty and Jersey read it before the
  // resource method runs, so a write whose client leaves during the delay is still carried out (a DELETE, a POST or
  // a PUT alike); a stream read after its client left would never end and the write would be lost.
  app.addHook('preHandler', async (req, reply) => {
    if (!isApi(req.url)) return;
    const path = req.url.slice(API_PREFIX.length).split('?')[0] || '/';
    const outcome = faults.decide(req.method, path);
    const receivedAt = Date.now();
    if (isWrite(req.method) && path !== '/login') {
      pending.set(req, {
        receivedAt,
        method: req.method,
        path: req.url.slice(API_PREFIX.length),
        ...(outcome.delayMs > 0 ? { delayMs: outcome.delayMs } : {}),
      });
    }
    if (outcome.delayMs > 0) {
      counters.fault('delayed');
      // By the journal's clock: a timer may fire a millisecond before Date.now() has moved on by its delay.
      for (let left = outcome.delayMs; left > 0; left = receivedAt + outcome.delayMs - Date.now()) await sleep(left);
    }
    if (outcome.kind === 'drop') {
      counters.fault('drops');
      answer(req, 0);
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (outcome.kind === 'error') {
      counters.fault('errors');
      return sendError(reply, new ApiError(outcome.status, outcome.message));
    }
    req.misdirect = outcome.kind === 'misdirect';
    const denied = checkToken(ctx, req);
    if (denied) return sendError(reply, denied);
    return undefined;
  });

  // onSend, not onResponse: a request whose client has left is still carried out, but onResponse never fires for it.
  app.addHook('onSend', async (req, reply, payload) => {
    const location = reply.getHeader('location');
    answer(req, reply.statusCode, typeof location === 'string' ? location : undefined);
    // Any write may have changed state; the store debounces.
    if (req.method !== 'GET' && req.method !== 'HEAD') store.changed();
    if (!req.misdirect) return payload;
    counters.fault('misdirected');
    return misdirected(ctx, req, reply, payload);
  });

  app.addHook('onResponse', async (req, reply) => {
    if (isApi(req.url)) counters.response(reply.statusCode);
  });

  app.setNotFoundHandler((req, reply) => {
    if (isApi(req.url)) return sendError(reply, emptyStatus(404, `no resource at ${req.url}`));
    return reply
      .code(404)
      .type('application/json')
      .send(JSON.stringify({ message: `no route ${req.method} ${req.url}` }));
  });

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const apiError =
      err instanceof ApiError
        ? err
        : new ApiError(err.statusCode && err.statusCode < 500 ? err.statusCode : 500, err.message);
    if (apiError.status >= 500 && !(err instanceof ApiError)) req.log.error({ err }, 'emulator failure');
    if (isApi(req.url)) return sendError(reply, apiError);
    const body: Record<string, unknown> = { message: apiError.message };
    if (apiError.options.violations) body.violations = apiError.options.violations;
    return reply.code(apiError.status).type('application/json').send(JSON.stringify(body));
  });

  registerApi(app, ctx);
  registerAdmin(app, {
    ctx,
    faults,
    counters,
    journal,
    resetConfig: () => Object.assign(ctx.config, initialConfig),
  });
  return { app, ctx, faults, counters, journal };
}
