import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as k8s from '@kubernetes/client-node';
import { PooledKubeConfig } from './kubeconfig';
import { createRest, pathOf } from './rest';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('the REST calls of the hot verbs', () => {
  let server: Server;
  const seen: Seen[] = [];
  let connections = 0;
  let reply: (seen: Seen) => { status: number; body: string } = () => ({ status: 200, body: '{}' });
  let kubeConfig: PooledKubeConfig;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const call = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
        seen.push(call);
        const { status, body: answer } = reply(call);
        res.writeHead(status, { 'content-type': 'application/json' }).end(answer);
      });
    });
    // As the API server (Go's net/http): no `Keep-Alive: timeout` hint, so the client's own idle time decides.
    server.keepAliveTimeout = 0;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kubeConfig = new PooledKubeConfig();
    kubeConfig.loadFromOptions({
      // Under a path, as behind a proxy that serves several clusters.
      clusters: [
        {
          name: 'c',
          server: `http://127.0.0.1:${(server.address() as AddressInfo).port}/k8s/clusters/c-1/`,
          skipTLSVerify: true,
        },
      ],
      users: [{ name: 'u', token: 'secret' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    seen.length = 0;
    reply = () => ({ status: 200, body: '{"kind":"Pod","metadata":{"name":"a b"}}' });
  });

  it("sends the call under the server's path, names escaped, with the kubeconfig's credentials, and answers the JSON", async () => {
    const rest = createRest(kubeConfig);
    const answer = await rest({
      method: 'PATCH',
      path: `/api/v1${pathOf('namespaces', 'default', 'pods', 'a b')}`,
      query: { fieldManager: 'steward', force: true, dryRun: undefined },
      body: { metadata: { labels: { a: 'b' } } },
      contentType: k8s.PatchStrategy.ServerSideApply,
    });
    expect(answer).toEqual({ kind: 'Pod', metadata: { name: 'a b' } });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      method: 'PATCH',
      url: '/k8s/clusters/c-1/api/v1/namespaces/default/pods/a%20b?fieldManager=steward&force=true',
      body: '{"metadata":{"labels":{"a":"b"}}}',
      headers: { authorization: 'Bearer secret', 'content-type': 'application/apply-patch+yaml' },
    });
  });

  it("throws client-node's ApiException with the API server's status and body, as its typed calls do", async () => {
    const status = { kind: 'Status', code: 409, reason: 'Conflict', message: 'the object has been modified' };
    reply = () => ({ status: 409, body: JSON.stringify(status) });
    const failed = await createRest(kubeConfig)({ method: 'GET', path: '/api/v1/nodes/n' }).catch(
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(k8s.ApiException);
    expect(failed).toMatchObject({ code: 409, body: JSON.stringify(status) });
  });

  it('keeps its connection between calls made seconds apart (undici closes an idle one after 4 s by default)', async () => {
    const rest = createRest(kubeConfig);
    await rest({ method: 'GET', path: '/api/v1/nodes/n' });
    const before = connections;
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    await rest({ method: 'GET', path: '/api/v1/nodes/n' });
    expect(connections).toBe(before);
  }, 10_000);

  it('keeps its connection after a DELETE with DeleteOptions (undici closes it after a body on a method that expects none)', async () => {
    const rest = createRest(kubeConfig);
    await rest({ method: 'GET', path: '/api/v1/nodes/n' });
    const before = connections;
    await rest({ method: 'DELETE', path: '/api/v1/nodes/n', body: { preconditions: { uid: 'u-1' } } });
    await rest({ method: 'GET', path: '/api/v1/nodes/n' });
    expect(seen.map((call) => [call.method, call.body])).toEqual([
      ['GET', ''],
      ['DELETE', '{"preconditions":{"uid":"u-1"}}'],
      ['GET', ''],
    ]);
    expect(connections).toBe(before);
  });
});
