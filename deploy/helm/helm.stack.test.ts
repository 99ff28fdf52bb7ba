// The Helm chart installed as a user installs it: `helm install` (the MidoNet profile, the default) into a namespace
// of the embedded stack's API server that enforces PodSecurity `privileged`, as its host network needs, the release's
// objects read back, its Pods admitted there (and refused under `baseline`), a peer-pods-only render's Pods admitted
// under `restricted`, and `helm uninstall` removing them. The stack runs no kubelet and, of the controllers, only the garbage collector and the
// namespace controller, so no ReplicaSet makes a Pod: each Deployment's Pod is created as a server-side dry run, and
// nothing waits for readiness. The release has a name of its own, so its cluster-scoped objects (ClusterRole,
// ClusterRoleBinding, the Lease's Role) meet no one else's.
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../test/support';
import { expectAccess } from '../testing/access';
import { stackInfo } from '../local/jest/stack-info';
import { CHART_DIR, ensureHelm, helmTemplate, runHelm, valuesFile } from '../testing/helm';
import { admissionOf, controlRefusal, enforcing, type PodSecurityLevel } from '../testing/pod-security';

const release = 'steward-helm-test';
const namespace = 'steward-helm-test';
/** The release's namespace admits the host network; the other two hold the controls and the peer-pods-only Pods. */
const namespaces: Record<PodSecurityLevel, string> = {
  privileged: namespace,
  baseline: `${namespace}-baseline`,
  restricted: `${namespace}-restricted`,
};
// The options that change the Pods: the API key from a Secret, the mTLS Secret mounted. (The Prometheus Operator's
// objects need its CRDs, which the stack has not; helm.test.ts renders them.)
const values = { temporal: { apiKey: { secretName: 'steward' }, tls: { secretName: 'steward-temporal-tls' } } };

let helm: string;
let kubeconfig: string;
let kubeConfig: k8s.KubeConfig;
let objectApi: k8s.KubernetesObjectApi;
let core: k8s.CoreV1Api;

const inCluster = (args: string[]) => runHelm(helm, [...args, '--kubeconfig', kubeconfig, '--namespace', namespace]);
const isNotFound = (error: unknown) => error instanceof k8s.ApiException && error.code === 404;
const read = (o: k8s.KubernetesObject) =>
  objectApi.read({
    apiVersion: o.apiVersion!,
    kind: o.kind!,
    metadata: { name: o.metadata!.name!, namespace: o.metadata?.namespace },
  });
const gone = (o: k8s.KubernetesObject) => read(o).then(() => false, isNotFound);

/** The release and its namespaces gone: what an earlier run on this stack may have left, and what this one leaves. */
async function removeRelease(): Promise<void> {
  await inCluster(['uninstall', release, '--ignore-not-found', '--wait']);
  for (const name of Object.values(namespaces)) {
    await core.deleteNamespace({ name }).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
    // The namespace controller empties it first; the next install must not meet it terminating.
    await waitFor(
      `namespace ${name} deleted`,
      () => gone({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
      90_000,
    );
  }
}

beforeAll(async () => {
  kubeconfig = stackInfo().kubernetes.kubeconfig;
  kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(kubeconfig);
  objectApi = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  // Built once per machine (a minute or two on 2 cores), then cached.
  helm = await ensureHelm();
  await removeRelease();
}, 15 * 60_000);

afterAll(removeRelease, 180_000);

let manifest: k8s.KubernetesObject[];

it('installs (helm install) into a namespace that enforces PodSecurity "privileged", the release deployed', async () => {
  for (const [level, name] of Object.entries(namespaces))
    await core.createNamespace({ body: enforcing(level as PodSecurityLevel, name) });
  await inCluster(['install', release, CHART_DIR, '--values', valuesFile(values)]);
  const status = JSON.parse(await inCluster(['status', release, '--output', 'json'])) as { info: { status: string } };
  expect(status.info.status).toBe('deployed');
  manifest = k8s.loadAllYaml(await inCluster(['get', 'manifest', release])).filter(Boolean) as k8s.KubernetesObject[];
  expect(manifest.map((o) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`).sort()).toEqual([
    `ClusterRole /${release}`,
    `ClusterRoleBinding /${release}`,
    `ConfigMap ${namespace}/${release}`,
    `Deployment ${namespace}/${release}-starter`,
    `Deployment ${namespace}/${release}-worker`,
    `PodDisruptionBudget ${namespace}/${release}-starter`,
    `PodDisruptionBudget ${namespace}/${release}-worker`,
    `Role ${namespace}/${release}-starter-lease`,
    `RoleBinding ${namespace}/${release}-starter-lease`,
    `Service ${namespace}/${release}-starter`,
    `Service ${namespace}/${release}-worker`,
    `ServiceAccount ${namespace}/${release}`,
    `ValidatingAdmissionPolicy /${release}-operator-requests`,
    `ValidatingAdmissionPolicyBinding /${release}-operator-requests`,
  ]);
});

it("has every object of the release on the API server, Helm's, as rendered", async () => {
  for (const object of manifest) {
    const stored = await read(object);
    const key = `${object.kind} ${object.metadata!.name}`;
    expect([key, stored.metadata?.labels?.['app.kubernetes.io/managed-by']]).toEqual([key, 'Helm']);
    expect([key, stored.metadata?.annotations?.['meta.helm.sh/release-name']]).toEqual([key, release]);
  }
  const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
  for (const rendered of manifest.filter((o): o is k8s.V1Deployment => o.kind === 'Deployment')) {
    const stored = await apps.readNamespacedDeployment({ namespace, name: rendered.metadata!.name! });
    const [want, got] = [rendered.spec!.template.spec!, stored.spec!.template.spec!];
    expect(got.serviceAccountName).toBe(release);
    expect(got.volumes).toMatchObject(want.volumes!);
    expect(got.containers[0]).toMatchObject(want.containers[0]!);
  }
  // The CRDs (the stack installed them from the same crds/ folder; helm installs them where they are missing).
  const extensions = kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
  for (const name of ['translations.midonet.org', 'peerpods.confidentialcontainers.org'])
    await expect(extensions.readCustomResourceDefinition({ name })).resolves.toBeTruthy();
});

it('has Pods its namespace admits (privileged, for the host network), which baseline refuses', async () => {
  const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
  for (const name of [`${release}-worker`, `${release}-starter`]) {
    const deployment = await apps.readNamespacedDeployment({ namespace, name });
    expect(deployment.spec?.template.spec?.hostNetwork).toBe(true);
    const [admitted, control] = await admissionOf(core, deployment, namespaces);
    expect([name, admitted]).toEqual([name, undefined]);
    expect(control).toMatch(controlRefusal(true));
  }
});

it('has, with values-peerpods.yaml (the peer-pods-only profile), Pods the PodSecurity "restricted" profile admits, where one that escalates is refused', async () => {
  const peerpods = k8s.loadYaml<object>(readFileSync(join(CHART_DIR, 'values-peerpods.yaml'), 'utf8'));
  const rendered = await helmTemplate(helm, { ...values, ...peerpods });
  const deployments = rendered.filter((o): o is k8s.V1Deployment => o.kind === 'Deployment');
  expect(deployments).toHaveLength(2);
  for (const deployment of deployments) {
    const [admitted, control] = await admissionOf(core, deployment, namespaces);
    expect([deployment.metadata!.name, admitted]).toEqual([deployment.metadata!.name, undefined]);
    expect(control).toMatch(controlRefusal(false));
  }
});

it.each<[string, k8s.V1ResourceAttributes, boolean]>([
  ['patch Translations', { group: 'midonet.org', resource: 'translations', verb: 'patch', namespace: 'default' }, true],
  [
    'renew its Lease, in the release namespace',
    {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verb: 'update',
      namespace,
      name: 'steward-starter',
    },
    true,
  ],
  ['not read Secrets', { resource: 'secrets', verb: 'get', namespace: 'default' }, false],
])("gives the release's ServiceAccount what the base's has: %s", async (what, attributes, expected) => {
  await expectAccess(kubeConfig, `system:serviceaccount:${namespace}:${release}`, attributes, expected, what);
});

it('uninstalls (helm uninstall): every object of the release is gone, the CRDs stay', async () => {
  await inCluster(['uninstall', release, '--wait']);
  for (const object of manifest)
    await waitFor(`${object.kind} ${object.metadata!.name} deleted`, () => gone(object), 60_000);
  const extensions = kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
  await expect(extensions.readCustomResourceDefinition({ name: 'translations.midonet.org' })).resolves.toBeTruthy();
});
