// The API server's REST calls as plain JSON, for the verbs a sync sends most (reads, patches, applies, lists, creates
// and deletes of the kinds Steward touches). client-node's typed clients go through `fetch` (WHATWG streams, Headers,
// a Response per call) and its ObjectSerializer (class instances, Dates), which Steward then turned back into JSON:
// a fifth of the worker's main thread in the 1,000-Pod profile. undici's `request` on the same connections, with the
// same credentials, answers the same JSON for a fraction of that. client-node stays for configuration, watches and
// everything else.
import * as k8s from '@kubernetes/client-node';
import { request } from 'undici';

export type RestMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RestCall {
  method: RestMethod;
  /** From the API server's root, e.g. `/api/v1/namespaces/default/pods/web` (names are escaped here). */
  path: string;
  query?: Record<string, string | boolean | undefined>;
  body?: unknown;
  /** The body's type: a patch's strategy, else JSON. */
  contentType?: string;
}

/** One REST call: the JSON the API server answered, or a k8s.ApiException with its status and body as client-node's. */
export type Rest = <T = unknown>(call: RestCall) => Promise<T>;

/** A path from its segments, each escaped: `pathOf('api', 'v1', 'nodes', name)`. */
export const pathOf = (...segments: string[]) => `/${segments.map(encodeURIComponent).join('/')}`;

const queryOf = (query: RestCall['query']) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

/**
 * Calls to the current cluster of `kubeConfig`. Each call takes its credentials and connection pool the way
 * client-node's own calls do (`applySecurityAuthentication`: tokens and exec plugins refreshed per call, the
 * PooledKubeConfig's kept dispatcher), so both share one pool of connections and one way of authenticating.
 */
export function createRest(kubeConfig: k8s.KubeConfig): Rest {
  // A server may be under a path (a proxy's `https://host/k8s/clusters/c-1`): paths are appended to it.
  const server = (kubeConfig.getCurrentCluster()?.server ?? '').replace(/\/+$/, '');
  return async <T>({ method, path, query, body, contentType = 'application/json' }: RestCall): Promise<T> => {
    const url = `${server}${path}${queryOf(query)}`;
    const context = new k8s.RequestContext(url, method);
    await kubeConfig.applySecurityAuthentication(context);
    const headers: Record<string, string> = { ...context.getHeaders(), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = contentType;
    const reply = await request(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: context.getDispatcher(),
      // undici closes a connection after a body sent with a method it expects none from (a DELETE's DeleteOptions,
      // its preconditions): a new TLS connection for the next call, 700 in the 1,000-Pod burst. The API server reads
      // every request's body by its length, so the connection stays.
      reset: false,
    });
    const text = await reply.body.text();
    if (reply.statusCode >= 200 && reply.statusCode < 300) return (text ? JSON.parse(text) : undefined) as T;
    const replyHeaders = Object.fromEntries(
      Object.entries(reply.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(', ') : `${value}`,
      ]),
    );
    // The same error as client-node's typed calls throw, so one error vocabulary reads both (activities' errors.ts).
    throw new k8s.ApiException<string>(
      reply.statusCode,
      `HTTP-Code: ${reply.statusCode}\nMessage: ${method} ${path}`,
      text,
      replyHeaders,
    );
  };
}
