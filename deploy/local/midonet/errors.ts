// The server's error vocabulary (ref §1.2): Error-v1 bodies with message and code, `violations` on bean
// validation failures, and the empty bodies Jersey sends for its own 404/405/406/415.
import type { FastifyReply } from 'fastify';
import { ERROR_TYPE } from './media-types';

export interface Violation {
  property: string;
  message: string;
}

export interface ApiErrorOptions {
  violations?: Violation[];
  /** Jersey-generated statuses carry no body; `message` then only goes to the X-Emulator-Reason header. */
  empty?: boolean;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(message);
  }
}

/** ZOOM's NotFoundException text, with the protobuf class name (Bridge is `Network`). */
export const notFound = (storageClass: string, id: string): ApiError =>
  new ApiError(404, `There is no ${storageClass} with ID ${id}.`);

/** ZOOM's ObjectExistsException text; "A(n)" is literal. */
export const alreadyExists = (storageClass: string, id: string): ApiError =>
  new ApiError(409, `A(n) ${storageClass} with ID ${id} already exists.`);

export const badRequest = (message: string): ApiError => new ApiError(400, message);

export const invalid = (violations: Violation[]): ApiError =>
  new ApiError(400, 'Validation error(s) found', { violations });

export const conflict = (message: string): ApiError => new ApiError(409, message);

export const emptyStatus = (status: number, reason: string, headers?: Record<string, string>): ApiError =>
  new ApiError(status, reason, { empty: true, ...(headers ? { headers } : {}) });

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [name, value] of Object.entries(err.options.headers ?? {})) void reply.header(name, value);
  if (err.options.empty) {
    // Not a MidoNet header: it only helps a human reading a failed test; clients ignore it.
    return reply.code(err.status).header('X-Emulator-Reason', err.message).send();
  }
  const body: Record<string, unknown> = { message: err.message, code: err.status };
  if (err.options.violations) body.violations = err.options.violations;
  return reply
    .code(err.status)
    .header('Content-Type', ERROR_TYPE)
    .send(Buffer.from(JSON.stringify(body)));
}
