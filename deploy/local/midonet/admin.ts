// The admin endpoint (/_emulator, plain JSON): what the real server has no API for. Seeding hosts stands in
// for MidoNet agents (ref §3, TopologyBackdoor); the rest drives tests: reset, dump, counters, faults, the
// backend-down switch, runtime configuration and the write journal. Never subject to auth or faults.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { configPatchSchema, hostSeedSchema, journalQuerySchema, type StateDump } from './admin-types';
import { deleteRecord, rows } from './cascade';
import type { Ctx } from './context';
import type { Counters } from './counters';
import { ApiError } from './errors';
import { downSchema, faultSpecSchema, type Faults } from './faults';
import { apiBase } from './http';
import type { Journal } from './journal';
import { KIND_NAMES } from './kinds';
import { renderBinding } from './resources/host-ports';
import { renderHost } from './resources/hosts';
import { BEHAVIOURS } from './resources/index';
import { parseJson, validate } from './validation';

export const ADMIN_PREFIX = '/_emulator';

export interface AdminDeps {
  ctx: Ctx;
  faults: Faults;
  counters: Counters;
  journal: Journal;
  resetConfig: () => void;
}

function body<T>(req: FastifyRequest, schema: z.ZodType<T>): T {
  return validate(schema, parseJson(req.body));
}

const json = (reply: FastifyReply, value: unknown, status = 200): FastifyReply =>
  reply.code(status).type('application/json').send(JSON.stringify(value));

export function dump(ctx: Ctx, base: string): StateDump {
  const state = ctx.store.state;
  const c = { state, base };
  const out = Object.fromEntries(
    KIND_NAMES.map((kind) => [kind, Object.values(rows(state, kind)).map((r) => BEHAVIOURS[kind].render(r, c))]),
  ) as StateDump;
  const ports = Object.values(state.ports);
  // Each link once, from the side with the smaller id.
  out.PortLink = ports
    .filter((p) => p.peerId !== null && p.id < p.peerId)
    .map((p) => ({ portId: p.id, peerId: p.peerId }));
  out.HostInterfacePort = ports
    .filter((p) => p.hostId !== null && p.interfaceName !== null)
    .map((p) => renderBinding(p, base));
  return out;
}

export function registerAdmin(app: FastifyInstance, deps: AdminDeps): void {
  const { ctx, faults, counters } = deps;
  const route = (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    handler: (req: FastifyRequest, reply: FastifyReply) => FastifyReply,
  ) =>
    app.route({
      method,
      url: ADMIN_PREFIX + path,
      config: { admin: true },
      handler: async (req, reply) => handler(req, reply),
    });

  route('GET', '/health', (_req, reply) => json(reply, { ok: true }));

  route('GET', '/state', (req, reply) => json(reply, dump(ctx, apiBase(req))));

  route('POST', '/reset', (_req, reply) => {
    ctx.store.reset();
    faults.clear();
    faults.down = { down: false, mode: 'unavailable' };
    counters.reset();
    deps.journal.clear();
    deps.resetConfig();
    return reply.code(204).send();
  });

  // Upsert: seeding the same id again replaces the host's description and keeps its bindings.
  route('POST', '/hosts', (req, reply) => {
    const seed = body(req, hostSeedSchema);
    const host = { ...seed, id: seed.id ?? randomUUID() };
    ctx.store.state.hosts[host.id] = host;
    return json(reply, renderHost(host, { base: apiBase(req) }), 201);
  });

  // An agent going away: bindings on the host's ports are cleared, it leaves its tunnel zones.
  route('DELETE', '/hosts/:id', (req, reply) => {
    const id = (req.params as { id: string }).id.toLowerCase();
    if (!ctx.store.state.hosts[id]) throw new ApiError(404, `There is no Host with ID ${id}.`);
    deleteRecord(ctx.store.state, 'Host', id);
    return reply.code(204).send();
  });

  route('GET', '/counters', (_req, reply) => json(reply, counters.snapshot()));
  route('DELETE', '/counters', (_req, reply) => {
    counters.reset();
    return reply.code(204).send();
  });

  route('GET', '/journal', (req, reply) => json(reply, deps.journal.list(validate(journalQuerySchema, req.query).id)));

  route('GET', '/faults', (_req, reply) => json(reply, faults.list()));
  route('POST', '/faults', (req, reply) => json(reply, faults.add(body(req, faultSpecSchema)), 201));
  route('DELETE', '/faults', (_req, reply) => {
    faults.clear();
    return reply.code(204).send();
  });
  route('DELETE', '/faults/:id', (req, reply) => {
    if (!faults.remove((req.params as { id: string }).id)) throw new ApiError(404, 'No such fault');
    return reply.code(204).send();
  });

  route('GET', '/down', (_req, reply) => json(reply, faults.down));
  route('PUT', '/down', (req, reply) => {
    faults.down = body(req, downSchema);
    return json(reply, faults.down);
  });

  route('GET', '/config', (_req, reply) => json(reply, ctx.config));
  route('PATCH', '/config', (req, reply) => {
    const patch = body(req, configPatchSchema);
    for (const [key, value] of Object.entries(patch)) {
      if (value !== undefined) (ctx.config as unknown as Record<string, unknown>)[key] = value;
    }
    return json(reply, ctx.config);
  });

  // Forget every issued token, as an expiry would: the next API call with one gets 401.
  route('POST', '/tokens/revoke', (_req, reply) => {
    ctx.store.state.tokens = {};
    return reply.code(204).send();
  });
}
