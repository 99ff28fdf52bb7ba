// HTTP exchange with the MidoNet API: login, one token shared by all calls, one re-login on 401, a per-call
// timeout. HTTP statuses are returned, not thrown; only transport failures (timeout, connection) throw here.
import { Agent, request } from 'undici';
import { z } from 'zod';
import { midonetFailure, replyFailure, type Reply } from './errors';
import { tokenMedia } from './kinds';
import { lateWriteWindow, MIDONET_EXCHANGE_TIMEOUT_MS } from '../../model/fence';

export interface MidonetConnection {
  /** Root URI, e.g. `http://127.0.0.1:8181/midonet-api`. */
  baseUrl: string;
  username: string;
  password: string;
  /** Sent as `X-Auth-Project` on login (midonet-kubernetes' `MIDONETKUBE_MIDONET_PROJECT`). */
  project?: string;
  /** Per HTTP exchange, login included. Default `MIDONET_EXCHANGE_TIMEOUT_MS` (the late-write fence counts on it). */
  timeoutMs?: number;
  /**
   * How long after it was sent a write that got no answer may still be carried out by MidoNet (a request it had read,
   * then served late). Default `lateWriteWindow(timeoutMs)`. See `settlingUnanswered` (client.ts).
   */
  lateWriteMs?: number;
  /** undici's `request` (tests put a closed port or no network behind it). */
  request?: typeof request;
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** Content-Type when there is a body, else Accept. */
  media?: string;
  body?: string;
}

export type Send = (call: Call) => Promise<Reply>;

const token = z.object({ key: z.string().min(1) });
/** The one write that changes nothing in MidoNet: a late login cannot race anything. */
const LOGIN_PATH = '/login';

/** Failures where the request never reached the server: nothing can be carried out late. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** MidoNet gave no answer of its own: a gateway's or an unavailable server's. */
const UNANSWERED = new Set([502, 503, 504]);

/** The defaults the late-write fence counts on (model/fence.ts). */
export const transportDefaults = { timeoutMs: MIDONET_EXCHANGE_TIMEOUT_MS, lateWriteMs: lateWriteWindow };

/** A failed exchange as a MidoNet failure; a write that may have reached MidoNet says until when it may land. */
function exchangeFailure(err: unknown, call: Call, timeoutMs: number, landsUntil: number) {
  const where = `MidoNet ${call.method} ${call.path}`;
  // Read by name, not instanceof: the timeout's DOMException may come from another realm (e.g. under jest).
  const error = err as Partial<Error> & { code?: unknown };
  const cause = err instanceof Error ? err : undefined;
  const sent = !(typeof error.code === 'string' && NOT_SENT.has(error.code));
  const details = {
    method: call.method,
    path: call.path,
    ...(call.method !== 'GET' && call.path !== LOGIN_PATH && sent ? { unsettledUntil: landsUntil } : {}),
  };
  if (error.name === 'TimeoutError')
    return midonetFailure('MidonetTimeout', `${where}: no answer within ${timeoutMs} ms`, details, cause);
  const code = typeof error.code === 'string' ? ` (${error.code})` : '';
  return midonetFailure('MidonetUnavailable', `${where}: ${error.message ?? String(err)}${code}`, details, cause);
}

export function createTransport(
  {
    baseUrl,
    username,
    password,
    project,
    timeoutMs = transportDefaults.timeoutMs,
    lateWriteMs = transportDefaults.lateWriteMs(timeoutMs),
    request: requestImpl = request,
  }: MidonetConnection,
  /** Told whether each exchange was answered (health.ts). */
  onExchange?: (answered: boolean) => void,
): Send {
  const root = baseUrl.replace(/\/+$/, '');
  // undici's `request`, not `fetch` (its streams and Response cost a Pod's sync some milliseconds of CPU), on
  // connections kept 10 s idle: under the idle timeout of MidoNet's Jetty (30 s), over undici's default of 4 s.
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });

  async function exchange(call: Call, headers: Record<string, string>): Promise<Reply> {
    if (call.media) headers[call.body === undefined ? 'Accept' : 'Content-Type'] = call.media;
    const sentAt = Date.now();
    try {
      const res = await requestImpl(root + call.path, {
        method: call.method,
        headers,
        body: call.body,
        signal: AbortSignal.timeout(timeoutMs),
        dispatcher,
      });
      // Reading the body is part of the exchange: a connection cut mid-body fails here, under the same timeout.
      const text = await res.body.text();
      onExchange?.(!UNANSWERED.has(res.statusCode));
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const location = res.headers.location;
      return {
        status: res.statusCode,
        json,
        text,
        ...(typeof location === 'string' && location ? { location } : {}),
      };
    } catch (err) {
      onExchange?.(false);
      throw exchangeFailure(err, call, timeoutMs, sentAt + lateWriteMs);
    }
  }

  async function login(): Promise<string> {
    const headers: Record<string, string> = {
      Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
    };
    if (project) headers['X-Auth-Project'] = project;
    const reply = await exchange({ method: 'POST', path: LOGIN_PATH, media: tokenMedia }, headers);
    if (reply.status !== 200) throw replyFailure('POST', LOGIN_PATH, reply);
    const parsed = token.safeParse(reply.json);
    if (!parsed.success)
      throw midonetFailure(
        'MidonetBadResponse',
        `MidoNet POST ${LOGIN_PATH} answered without a token: ${reply.text.slice(0, 200)}`,
        { method: 'POST', path: LOGIN_PATH, status: 200 },
      );
    return parsed.data.key;
  }

  // One login in flight at a time, shared by every call; forgotten on failure so the next call tries again.
  let current: Promise<string> | undefined;
  const session = (): Promise<string> =>
    (current ??= login().catch((err: unknown) => {
      current = undefined;
      throw err;
    }));

  return async (call) => {
    const used = session();
    const reply = await exchange(call, { 'X-Auth-Token': await used });
    if (reply.status !== 401) return reply;
    // Log in again unless a concurrent call already did; then retry once. A second 401 is the caller's to report.
    if (current === used) current = undefined;
    return exchange(call, { 'X-Auth-Token': await session() });
  };
}
