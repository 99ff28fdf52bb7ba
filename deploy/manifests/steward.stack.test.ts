// The deployment manifests against a real API server: every object is accepted (schemas, references), and the
// ServiceAccount they bind may do what the worker and the starter do, and no more (SubjectAccessReview).
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStarterConfig } from '../../starter/config';
import { waitFor } from '../../test/support';
import { stackInfo } from '../local/jest/stack-info';

const files = ['../rbac/steward-clusterrole.yaml', '../rbac/steward-starter-lease-role.yaml', 'steward.yaml'].map((f) => join(__dirname, f));
const serviceAccount = 'system:serviceaccount:steward:steward';

let kubeConfig: k8s.KubeConfig;
beforeAll(() => {
  kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(stackInfo().kubernetes.kubeconfig);
});

async function allowed(attributes: k8s.V1ResourceAttributes): Promise<boolean> {
  const review = await kubeConfig.makeApiClient(k8s.AuthorizationV1Api).createSubjectAccessReview({ body: { spec: { user: serviceAccount, groups: ['system:serviceaccounts'], resourceAttributes: attributes } } });
  return review.status?.allowed ?? false;
}

describe('deploy/manifests/steward.yaml', () => {
  it('is accepted by the API server with the RBAC files, object by object', async () => {
    const api = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
    const objects = files.flatMap((file) => k8s.loadAllYaml(readFileSync(file, 'utf8')) as k8s.KubernetesObject[]);
    expect(objects.map((o) => o.kind)).toEqual(['ClusterRole', 'Role', 'Namespace', 'ServiceAccount', 'ClusterRoleBinding', 'RoleBinding', 'ConfigMap', 'Deployment', 'Deployment']);
    for (const object of objects) {
      await api.create(object).catch((error: unknown) => {
        // A re-run on the same stack: the earlier run's object is there.
        if (!(error instanceof k8s.ApiException && error.code === 409)) throw error;
      });
    }
    const worker = await kubeConfig.makeApiClient(k8s.AppsV1Api).readNamespacedDeployment({ namespace: 'steward', name: 'steward-worker' });
    expect(worker.spec?.template.spec?.serviceAccountName).toBe('steward');
  });

  it('makes no peer-pod VM of its own (cloud-api-adaptor makes them): its starter settings name no runtime class', () => {
    const configMap = files.flatMap((file) => k8s.loadAllYaml(readFileSync(file, 'utf8')) as k8s.V1ConfigMap[]).find((o) => o.kind === 'ConfigMap')!;
    expect(loadStarterConfig({}, { ...configMap.data }).peerPodRuntimeClasses).toEqual([]);
  });

  it.each<[string, k8s.V1ResourceAttributes, boolean]>([
    ['write Translations (the object workflows)', { group: 'midonet.org', resource: 'translations', verb: 'patch', namespace: 'default' }, true],
    ['write Translation status (the pusher)', { group: 'midonet.org', resource: 'translations', subresource: 'status', verb: 'patch', namespace: 'default' }, true],
    ['create PeerPods (peer pods)', { group: 'confidentialcontainers.org', resource: 'peerpods', verb: 'create', namespace: 'default' }, true],
    ["delete PeerPods (the older ones a cloud-api-adaptor restart leaves)", { group: 'confidentialcontainers.org', resource: 'peerpods', verb: 'delete', namespace: 'default' }, true],
    ['watch Pods (the starter)', { resource: 'pods', verb: 'watch' }, true],
    ['renew its Lease (the starter)', { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'kube-system', name: 'steward-starter' }, true],
    ['not delete Pods', { resource: 'pods', verb: 'delete', namespace: 'default' }, false],
    ['not read Secrets', { resource: 'secrets', verb: 'get', namespace: 'default' }, false],
    ["not update another Lease", { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: 'kube-system', name: 'kube-controller-manager' }, false],
  ])('its ServiceAccount may %s', async (what, attributes, expected) => {
    // Bindings reach the authorizer's cache asynchronously (the allowed cases come first, so they wait for it).
    await waitFor(`${what}: ${expected ? 'allowed' : 'denied'}`, async () => (await allowed(attributes)) === expected || undefined, 30_000);
  });
});
