import * as k8s from '@kubernetes/client-node';
import { endpointsSourceOf, endpointsSourceServed } from './kinds';

const resource = (name: string, verbs: string[]): k8s.V1APIResource => ({
  name,
  kind: 'EndpointSlice',
  namespaced: true,
  singularName: '',
  verbs,
});

describe('where auto reads endpoints from', () => {
  it('reads EndpointSlices where discovery.k8s.io/v1 lists and watches them', () => {
    const verbs = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    expect(endpointsSourceOf({ resources: [resource('endpointslices', verbs)] })).toBe('EndpointSlices');
  });

  it('reads v1 Endpoints where the group version is not served, lacks slices, or may not watch them', () => {
    expect(endpointsSourceOf(undefined)).toBe('Endpoints');
    expect(endpointsSourceOf({ resources: [] })).toBe('Endpoints');
    expect(endpointsSourceOf({ resources: [resource('endpointslices', ['get', 'list'])] })).toBe('Endpoints');
  });

  it('asks nothing for a source named outright', async () => {
    const kubeConfig = new k8s.KubeConfig();
    await expect(endpointsSourceServed(kubeConfig, 'Endpoints')).resolves.toBe('Endpoints');
    await expect(endpointsSourceServed(kubeConfig, 'EndpointSlices')).resolves.toBe('EndpointSlices');
  });

  it('says what it could not learn when the API server does not answer', async () => {
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    await expect(endpointsSourceServed(kubeConfig, 'auto')).rejects.toThrow(
      /^cannot tell whether the API server serves EndpointSlices \(endpoints-from auto\): /,
    );
  });
});
