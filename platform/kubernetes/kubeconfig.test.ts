import * as k8s from '@kubernetes/client-node';
import { PooledKubeConfig } from './kubeconfig';

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
