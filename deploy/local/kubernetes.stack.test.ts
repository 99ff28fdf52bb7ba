import * as k8s from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceAccountKubeconfig } from './identities';
import { stackInfo } from './jest/stack-info';
import { sleep } from './process';

const admin = () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(stackInfo().kubernetes.kubeconfig);
  return kc;
};

/** Polls until `read` finds the object gone (404); the garbage collector works asynchronously. */
async function waitGone(read: () => Promise<unknown>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await read();
    } catch (error) {
      if (error instanceof k8s.ApiException && error.code === 404) return;
      throw error;
    }
    if (Date.now() > deadline) throw new Error('object still present');
    await sleep(500);
  }
}

async function statusOf(call: () => Promise<unknown>): Promise<number> {
  try {
    await call();
    return 200;
  } catch (error) {
    if (error instanceof k8s.ApiException) return error.code;
    throw error;
  }
}

describe('Kubernetes control plane of the embedded stack', () => {
  const namespace = 'default';

  it('runs the real garbage collector: a dependent goes with its owner; one with a finalizer waits for it', async () => {
    const core = admin().makeApiClient(k8s.CoreV1Api);
    const suffix = Date.now().toString(36);
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `owner-${suffix}` } } });
    const ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: owner.metadata!.name!, uid: owner.metadata!.uid! },
    ];
    const plain = `plain-${suffix}`;
    const held = `held-${suffix}`;
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: plain, ownerReferences } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: held, ownerReferences, finalizers: ['steward.test/hold'] } },
    });

    await core.deleteNamespacedConfigMap({ name: owner.metadata!.name!, namespace });
    await waitGone(() => core.readNamespacedConfigMap({ name: plain, namespace }));

    const waiting = await core.readNamespacedConfigMap({ name: held, namespace });
    expect(waiting.metadata?.deletionTimestamp).toBeDefined();
    await sleep(2_000);
    expect((await core.readNamespacedConfigMap({ name: held, namespace })).metadata?.finalizers).toEqual([
      'steward.test/hold',
    ]);

    await core.patchNamespacedConfigMap(
      { name: held, namespace, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    await waitGone(() => core.readNamespacedConfigMap({ name: held, namespace }));
  });

  it('enforces RBAC: a ServiceAccount made by the helper can do what its role grants and gets 403 otherwise', async () => {
    const ns = `rbac-${Date.now().toString(36)}`;
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'steward-sa-')), 'kubeconfig');
    const kc = await createServiceAccountKubeconfig(
      stackInfo().kubernetes.kubeconfig,
      {
        namespace: ns,
        name: 'reader',
        rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
      },
      kubeconfig,
    );
    const core = kc.makeApiClient(k8s.CoreV1Api);
    // RBAC bindings reach the authorizer's cache asynchronously.
    for (let i = 0; i < 50 && (await statusOf(() => core.listNamespacedConfigMap({ namespace: ns }))) !== 200; i++)
      await sleep(200);

    expect(await statusOf(() => core.listNamespacedConfigMap({ namespace: ns }))).toBe(200);
    expect(
      await statusOf(() => core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'x' } } })),
    ).toBe(403);
    expect(await statusOf(() => core.listNamespacedSecret({ namespace: ns }))).toBe(403);
    expect(await statusOf(() => core.listNamespacedConfigMap({ namespace: 'default' }))).toBe(403);
    const review = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${ns}:reader`);
  });
});
