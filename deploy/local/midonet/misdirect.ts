// The `misdirect` fault's answer (faults.ts). The request is carried out as asked, but its answer is about another
// resource of the same kind, as a server or proxy mixing up replies would send it: a GET or PUT of an item gets another
// one's body (200), a POST another one's Location. A list, a DELETE, an error, or a kind with no other resource keep
// their answer. A client must notice that the reply is not about what it asked for, and act on none of it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { dump } from './admin';
import type { Ctx } from './context';
import { API_PREFIX, apiBase } from './http';
import { KIND_NAMES, KINDS, type KindName } from './kinds';

const isKind = (kind: string | undefined): kind is KindName => KIND_NAMES.includes(kind as KindName);
const isList = (payload: unknown): boolean =>
  (typeof payload === 'string' || Buffer.isBuffer(payload)) && payload.toString().trimStart().startsWith('[');

/** The payload to send instead (status and headers set on `reply`), or `payload` when the answer names no resource. */
export function misdirected(ctx: Ctx, req: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const kind = req.routeOptions.config.kind;
  const ok = reply.statusCode >= 200 && reply.statusCode < 300;
  if (!isKind(kind) || !ok || !['GET', 'PUT', 'POST'].includes(req.method) || isList(payload)) return payload;
  const base = apiBase(req);
  const location = reply.getHeader('location');
  const path = req.url.slice(API_PREFIX.length).split('?')[0]!.replace(/\/+$/, '');
  const asked = (req.method === 'POST' ? String(location) : base + path).toLowerCase();
  const other = dump(ctx, base)[kind].find((r) => typeof r.uri === 'string' && r.uri.toLowerCase() !== asked);
  if (!other) return payload;
  if (req.method === 'POST') {
    void reply.header('Location', other.uri);
    return payload;
  }
  // A PUT answers 204 without a body: 200 lets the other resource's body through.
  void reply.code(200).header('Content-Type', KINDS[kind].media.item[0]);
  return Buffer.from(JSON.stringify(other));
}
