// Request/response plumbing shared by every API route: base URI, media-type negotiation, body reading.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ApiError, emptyStatus } from './errors';
import { pickType, type MediaDecl } from './media-types';
import { parseJson, validate } from './validation';

export const API_PREFIX = '/midonet-api';

/** Resource URIs are absolute and built from the request, as JAX-RS UriInfo does. */
export function apiBase(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}${API_PREFIX}`;
}

/** The type to answer a GET with; 406 when Accept allows none of the declared types (ref §1.2). */
export function negotiate(req: FastifyRequest, media: MediaDecl, which: 'item' | 'collection'): string {
  const declared = media[which];
  const accept = req.headers.accept;
  if (accept === undefined || accept.trim() === '') {
    // MidonetResource parses the missing header and fails; Jersey reads a missing Accept as */*.
    if (media.negotiation === 'midonet') throw emptyStatus(406, 'Accept header missing');
    return declared[0]!;
  }
  const type = pickType(accept, declared, media.json);
  if (!type) throw emptyStatus(406, `Accept ${accept} matches none of ${declared.join(', ')}`);
  return type;
}

/** 406 from MidonetResource, 415 from Jersey @Consumes, on a missing or foreign Content-Type (ref §1.2). */
export function requireContentType(req: FastifyRequest, media: MediaDecl): void {
  const status = media.negotiation === 'midonet' ? 406 : 415;
  const type = req.headers['content-type'];
  if (type === undefined) throw emptyStatus(status, 'Content-Type header missing');
  // A wildcard is no content type; pickType would take it as matching anything.
  if (!type.includes('*') && pickType(type, media.item, media.json)) return;
  throw emptyStatus(status, `Content-Type ${type} is none of ${media.item.join(', ')}`);
}

export function readBody<T>(req: FastifyRequest, media: MediaDecl, schema: z.ZodType<T>): T {
  requireContentType(req, media);
  return validate(schema, parseJson(req.body));
}

export function sendJson(reply: FastifyReply, type: string, body: unknown, status = 200): FastifyReply {
  // A Buffer keeps the type as declared: for a string fastify lower-cases it and appends a charset.
  return reply
    .code(status)
    .header('Content-Type', type)
    .send(Buffer.from(JSON.stringify(body)));
}

/** 201, Location, no body (ref §1.2 POST). */
export function sendCreated(reply: FastifyReply, location: string | undefined): FastifyReply {
  if (location !== undefined) void reply.header('Location', location);
  return reply.code(201).send();
}

export function sendStatus(reply: FastifyReply, status: number): FastifyReply {
  return reply.code(status).send();
}

export function param(req: FastifyRequest, name: string): string {
  const value = (req.params as Record<string, string | undefined>)[name];
  if (value === undefined) throw new ApiError(500, `route has no :${name}`);
  return value;
}
