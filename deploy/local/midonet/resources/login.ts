// POST /login and the token check on every other API request (ref §1.1).
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Ctx } from '../context';
import { ApiError } from '../errors';
import { sendJson } from '../http';
import { TOKEN_TYPE } from '../media-types';
import type { ApiRouter } from '../router';

/** MockAuthService's fixed token (ref §1.1). */
export const MOCK_TOKEN = '00000000';

// The double space is upstream's (HttpSupport).
const CHALLENGE = { 'WWW-Authenticate': 'Basic  realm="BASIC_AUTH_REALM"' };

function credentials(header: string | undefined): { username: string; password: string } | null {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function registerLogin(router: ApiRouter, ctx: Ctx): void {
  router.add('POST', '/login', 'Login', async (req, reply) => {
    const given = credentials(req.headers.authorization);
    if (!given) throw new ApiError(401, 'Authorization header missing or not Basic', { headers: CHALLENGE });
    const wanted = ctx.config.credentials;
    if (wanted && (wanted.username !== given.username || wanted.password !== given.password)) {
      throw new ApiError(401, 'Invalid credentials', { headers: CHALLENGE });
    }
    const key = ctx.config.auth === 'mock' ? MOCK_TOKEN : randomBytes(16).toString('hex');
    const project = req.headers['x-auth-project'];
    ctx.store.state.tokens[key] = {
      issuedAt: new Date().toISOString(),
      project: typeof project === 'string' ? project : null,
    };
    // Tokens do not expire here (expires null, as MockAuthService); revoke them through the admin endpoint.
    void reply.header('Set-Cookie', `sessionId=${key}`);
    return sendJson(reply, TOKEN_TYPE, { key, expires: null });
  });
}

/**
 * onRequest check for every API path but /login. Only X-Auth-Token is read (the ref names no cookie auth).
 */
export function checkToken(ctx: Ctx, req: FastifyRequest): ApiError | undefined {
  if (ctx.config.auth === 'mock' || req.routeOptions.url === '/midonet-api/login') return undefined;
  const token = req.headers['x-auth-token'];
  if (typeof token !== 'string' || token === '')
    return new ApiError(401, 'No token was passed in the X-Auth-Token header');
  if (!ctx.store.state.tokens[token]) return new ApiError(401, 'The token is invalid or has expired');
  return undefined;
}
