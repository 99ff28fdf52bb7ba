// Assembles the fastify app: body handling, the request pipeline for API traffic (count → down/faults →
// auth → route), error mapping, the API routes and the admin endpoint.
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { registerAdmin } from './admin';
import { defaultConfig, type Ctx, type EmulatorConfig } from './context';
import { Counters } from './counters';
import { ApiError, emptyStatus, sendError } from './errors';
import { Faults } from './faults';
import { API_PREFIX } from './http';
import { registerApi } from './resources/index';
import { checkToken } from './resources/login';
import type { Store } from './store';

export interface ServerParts {
  app: FastifyInstance;
  ctx: Ctx;
  faults: Faults;
  counters: Counters;
}

const isApi = (url: string): boolean => url === API_PREFIX || url.startsWith(`${API_PREFIX}/`) || url.startsWith(`${API_PREFIX}?`);

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
  store.onWriteError = (err) => app.log.error({ err }, 'could not persist emulator state');

  // Bodies stay text: the media-type checks must run before any parsing, and admin routes parse JSON alike.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  app.addHook('onRequest', async (req, reply) => {
    if (!isApi(req.url)) return;
    counters.request(req.method, req.routeOptions.config.kind ?? 'unknown');
    const path = req.url.slice(API_PREFIX.length).split('?')[0] || '/';
    const outcome = faults.decide(req.method, path);
    if (outcome.delayMs > 0) {
      counters.fault('delayed');
      await sleep(outcome.delayMs);
    }
    if (outcome.kind === 'drop') {
      counters.fault('drops');
      reply.hijack();
      req.raw.socket.destroy();
      return reply;
    }
    if (outcome.kind === 'error') {
      counters.fault('errors');
      return sendError(reply, new ApiError(outcome.status, outcome.message));
    }
    const denied = checkToken(ctx, req);
    if (denied) return sendError(reply, denied);
    return undefined;
  });

  app.addHook('onResponse', async (req, reply) => {
    if (isApi(req.url)) counters.response(reply.statusCode);
    // Any write may have changed state; the store debounces.
    if (req.method !== 'GET' && req.method !== 'HEAD') store.changed();
  });

  app.setNotFoundHandler((req, reply) => {
    if (isApi(req.url)) return sendError(reply, emptyStatus(404, `no resource at ${req.url}`));
    return reply.code(404).type('application/json').send(JSON.stringify({ message: `no route ${req.method} ${req.url}` }));
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
    resetConfig: () => Object.assign(ctx.config, initialConfig),
  });
  return { app, ctx, faults, counters };
}

