import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { dumpYaml } from '@kubernetes/client-node';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { kubeconfigFiles, kubernetesCheck, loadKubeConfig, PooledKubeConfig, SERVICE_ACCOUNT_DIR } from './kubeconfig';

// A CA makes client-node build a dispatcher of its own (without TLS options it uses undici's global one); the
// certificate is read only when a connection is made.
const cluster = {
  name: 'c',
  server: 'https://127.0.0.1:6443',
  skipTLSVerify: false,
  caData: Buffer.from('a CA').toString('base64'),
};

const configFor = (...users: string[]) => {
  const kubeConfig = new PooledKubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [cluster],
    users: users.map((name) => ({ name, token: `token-of-${name}` })),
    contexts: users.map((user) => ({ name: user, cluster: 'c', user })),
    currentContext: users[0]!,
  });
  return kubeConfig;
};

const authenticated = async (kubeConfig: k8s.KubeConfig) => {
  const context = new k8s.RequestContext('https://127.0.0.1:6443/api/v1/pods', k8s.HttpMethod.GET);
  await kubeConfig.applySecurityAuthentication(context);
  return context;
};

describe('PooledKubeConfig', () => {
  it('gives every request of one cluster and user the same dispatcher (kept connections), with its credentials per request', async () => {
    const kubeConfig = configFor('steward');
    const [first, second] = [await authenticated(kubeConfig), await authenticated(kubeConfig)];
    expect(first.getDispatcher()).toBeDefined();
    expect(second.getDispatcher()).toBe(first.getDispatcher());
    expect(second.getHeaders().Authorization).toBe('Bearer token-of-steward');
  });

  it('keeps another dispatcher for another user', async () => {
    const kubeConfig = configFor('steward', 'operator');
    const asSteward = await authenticated(kubeConfig);
    kubeConfig.setCurrentContext('operator');
    const asOperator = await authenticated(kubeConfig);
    expect(asOperator.getDispatcher()).not.toBe(asSteward.getDispatcher());
    expect(asOperator.getHeaders().Authorization).toBe('Bearer token-of-operator');
  });

  it('differs from the plain KubeConfig, which makes a new dispatcher per request', async () => {
    const plain = new k8s.KubeConfig();
    plain.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    expect((await authenticated(plain)).getDispatcher()).not.toBe((await authenticated(plain)).getDispatcher());
  });
});

describe('kubeconfig files as kubectl merges them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  const write = (name: string, config: object) => {
    const file = join(dir, name);
    writeFileSync(file, dumpYaml(config));
    return file;
  };
  const entries = (server: string, names: { cluster: string; user: string; context: string }) => ({
    clusters: [{ name: names.cluster, cluster: { server } }],
    users: [{ name: names.user, user: { token: server } }],
    contexts: [
      { name: names.context, context: { cluster: names.cluster, user: names.user, namespace: server.slice(8) } },
    ],
  });
  const first = write('first', {
    ...entries('https://first', { cluster: 'shared', user: 'shared', context: 'shared' }),
    'current-context': 'shared',
  });
  const second = write('second', {
    clusters: [
      { name: 'shared', cluster: { server: 'https://second' } },
      { name: 'own', cluster: { server: 'https://own' } },
    ],
    users: [{ name: 'shared', user: { token: 'second' } }],
    contexts: [
      { name: 'shared', context: { cluster: 'shared', user: 'shared', namespace: 'second' } },
      { name: 'own', context: { cluster: 'own', user: 'shared' } },
    ],
    'current-context': 'own',
  });
  const noContext = write('no-context', entries('https://third', { cluster: 't', user: 't', context: 't' }));

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes every entry of every file; the first file that names one (and the current context) wins', () => {
    const kubeConfig = loadKubeConfig(`${first}:${second}`)!;
    expect(kubeConfig.getCurrentContext()).toBe('shared');
    expect(kubeConfig.getCurrentCluster()?.server).toBe('https://first');
    expect(kubeConfig.getCurrentUser()?.token).toBe('https://first');
    expect(kubeConfig.getContexts().map((c) => c.name)).toEqual(['shared', 'own']);
    expect(kubeConfig.getCluster('own')?.server).toBe('https://own');
  });

  it('takes the current context from a later file when the first has none, and skips empty list items', () => {
    expect(loadKubeConfig(`${noContext}::${second}`)?.getCurrentContext()).toBe('own');
  });

  it('switches to --context, and names the contexts when it is not there', () => {
    expect(loadKubeConfig(`${first}:${second}`, 'own')?.getCurrentCluster()?.server).toBe('https://own');
    expect(() => loadKubeConfig(first, 'nope')).toThrow('no context "nope" in the kubeconfig (shared)');
  });

  it('is a PooledKubeConfig, so merged configs keep their connections too', () => {
    expect(loadKubeConfig(first)).toBeInstanceOf(PooledKubeConfig);
  });

  it('accepts a list whose every file is readable, and names each unreadable one', () => {
    expect(kubeconfigFiles.safeParse(`${first}:${second}`).success).toBe(true);
    expect(kubeconfigFiles.safeParse('/etc/hostname:/etc/hosts').success).toBe(true);
    const refused = kubeconfigFiles.safeParse(`${first}:/nonexistent/a:/nonexistent/b`);
    expect(refused.error?.issues.map((i) => i.message)).toEqual([
      'cannot read file "/nonexistent/a"',
      'cannot read file "/nonexistent/b"',
    ]);
    expect(kubeconfigFiles.safeParse(':').error?.issues[0]?.message).toBe('names no file');
  });
});

describe("a pod's in-cluster configuration, its files under the pod's root (TELEPRESENCE_ROOT)", () => {
  const root = mkdtempSync(join(tmpdir(), 'pod-root-'));
  const account = join(root, SERVICE_ACCOUNT_DIR);
  mkdirSync(account, { recursive: true });
  for (const [file, content] of Object.entries({ token: 'pod-token', 'ca.crt': 'a CA', namespace: 'steward' }))
    writeFileSync(join(account, file), content);
  // client-node reads the address from the process's environment, as in a pod.
  const address = { KUBERNETES_SERVICE_HOST: '192.0.2.10', KUBERNETES_SERVICE_PORT: '6443' };
  let saved: NodeJS.ProcessEnv;
  beforeEach(() => {
    saved = { ...process.env };
    Object.assign(process.env, address);
  });
  afterEach(() => {
    process.env = saved;
  });

  it("reaches the API server at KUBERNETES_SERVICE_HOST/_PORT with the pod's token and CA, with no kubeconfig", async () => {
    const kubeConfig = loadKubeConfig(undefined, undefined, { TELEPRESENCE_ROOT: root })!;
    expect(kubeConfig).toBeInstanceOf(PooledKubeConfig);
    expect(kubeConfig.getCurrentCluster()).toMatchObject({
      server: 'https://192.0.2.10:6443',
      caFile: join(account, 'ca.crt'),
    });
    expect(kubeConfig.getContextObject(kubeConfig.currentContext)?.namespace).toBe('steward');
    expect((await authenticated(kubeConfig)).getHeaders().Authorization).toBe('Bearer pod-token');
  });

  it('leaves a root without a service account to the default places, and a kubeconfig wins over it', () => {
    const empty = mkdtempSync(join(tmpdir(), 'pod-root-'));
    const defaults = loadKubeConfig(undefined, undefined, { TELEPRESENCE_ROOT: empty });
    expect(defaults?.getCurrentCluster()?.caFile).not.toBe(join(account, 'ca.crt'));
    const file = join(empty, 'config');
    writeFileSync(
      file,
      dumpYaml({
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    expect(loadKubeConfig(file, undefined, { TELEPRESENCE_ROOT: root })?.getCurrentCluster()?.server).toBe(
      'https://127.0.0.1:6443',
    );
  });
});

describe("the cluster's readiness check", () => {
  let server: Server;
  let answer: boolean;
  const plainConfig = (port: number) => {
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'u', cluster: 'c', user: 'u' }],
      currentContext: 'u',
    });
    return kubeConfig;
  };

  beforeAll(async () => {
    // An API server that answers /version, or holds the request without answering.
    server = createHttpServer((_req, res) => {
      if (answer) res.writeHead(200, { 'content-type': 'application/json' }).end('{"major":"1","minor":"34"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('passes when the API server answers', async () => {
    answer = true;
    await expect(kubernetesCheck(plainConfig((server.address() as AddressInfo).port))()).resolves.toBeUndefined();
  });

  it('fails, naming the server, when it does not answer in time', async () => {
    answer = false;
    const { port } = server.address() as AddressInfo;
    await expect(kubernetesCheck(plainConfig(port), 200)()).rejects.toThrow(
      `Kubernetes API server at http://127.0.0.1:${port} is not reachable: did not answer within 200 ms`,
    );
  });
});
