import * as k8s from '@kubernetes/client-node';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServiceAccountKubeconfig } from '../../deploy/local';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { PEERPOD_FINALIZER, TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { createKubernetesActivities } from './activities';
import { watchDeletionGuard } from '../../platform/kubernetes/deletion-guard';
import pino from 'pino';
import {
  adminConfig,
  bridgeId,
  createNamespace,
  createService,
  eventually,
  translationOf,
  uniqueName,
} from '../../test/support/kubernetes';

const clusterRole = k8s.loadYaml<k8s.V1ClusterRole>(
  readFileSync(join(__dirname, '../../deploy/rbac/steward-clusterrole.yaml'), 'utf8'),
);

const serviceAccountConfig = async (name: string, clusterRules: k8s.V1PolicyRule[]) =>
  createServiceAccountKubeconfig(
    stackInfo().kubernetes.kubeconfig,
    { namespace: await createNamespace(adminConfig(), 'k8sact-sa'), name, clusterRules },
    join(mkdtempSync(join(tmpdir(), 'steward-k8sact-')), 'kubeconfig'),
  );

async function serviceAccount(name: string, clusterRules: k8s.V1PolicyRule[]) {
  return createKubernetesActivities({ kubeConfig: await serviceAccountConfig(name, clusterRules) });
}

describe('RBAC', () => {
  it('lets a worker and a starter watch the guard against mass deletion (the Translation CRD) without its watch failing', async () => {
    const kubeConfig = await serviceAccountConfig('steward-guard', clusterRole.rules ?? []);
    const failures: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void failures.push(line) });
    const guard = watchDeletionGuard(kubeConfig, log);
    try {
      // RBAC bindings reach the authorizer's cache asynchronously: listed once, the watch must then hold.
      await eventually(() => Promise.resolve(guard.synced()), 'the CRD listed', 30_000);
      failures.length = 0;
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect({ synced: guard.synced(), failures: failures.map((f) => f.slice(0, 300)) }).toEqual({
        synced: true,
        failures: [],
      });
    } finally {
      await guard.stop();
    }
  });

  it('runs every activity as a ServiceAccount bound to exactly deploy/rbac/steward-clusterrole.yaml', async () => {
    const admin = adminConfig();
    const namespace = await createNamespace(admin, 'k8sact-rbac');
    const k = await serviceAccount('steward', clusterRole.rules ?? []);
    const node = (
      await admin.makeApiClient(k8s.CoreV1Api).createNode({ body: { metadata: { name: uniqueName('node') } } })
    ).metadata!.name!;
    // RBAC bindings reach the authorizer's cache asynchronously.
    await eventually(
      async () => (await k.readObject({ ref: { kind: 'Node', name: node } }).catch(() => ({ found: false }))).found,
      'the binding is effective',
      30_000,
    );

    const owner = await createService(admin, namespace);
    const [a, b] = ['a', 'b'].map((n) => translationOf(owner, `service.4.${owner.name}-${n}`, [bridgeId(1)])) as [
      ReturnType<typeof translationOf>,
      ReturnType<typeof translationOf>,
    ];
    const ref = { kind: 'Translation' as const, namespace, name: a.name };
    await k.applyTranslations({ owner, translations: [a, b] });
    await k.applyTranslations({ owner, translations: [a, b] });
    expect(await k.applyTranslations({ owner, translations: [a] })).toMatchObject({
      deleted: [`${namespace}/${b.name}`],
    });

    for (const kind of ['Pod', 'Service', 'Endpoints', 'Translation', 'PeerPod'] as const)
      await k.readObject({ ref: { kind, namespace, name: 'missing' } });
    for (const dependency of [{ kind: 'Node' as const, name: node }, owner]) {
      await k.addReferrer({ dependency, referrer: ref });
      expect(await k.listReferrers({ dependency })).toMatchObject({ referrers: [ref] });
      await k.removeReferrer({ dependency, referrer: ref });
    }

    const ready = { status: 'True', reason: 'Pushed', message: 'pushed' } as const;
    const event = { type: 'Normal', reason: 'Pushed', message: 'pushed' } as const;
    for (let i = 0; i < 2; i++)
      await k.recordTranslationStatus({ ref, generation: 1, childResources: [], ready, synced: ready, event });
    expect(await k.recordObjectEvent({ ref: owner, ...event })).toEqual({ found: true });

    const read = await k.readObject({ ref });
    expect(
      await k.releaseFinalizer({ ref, uid: read.found ? read.uid : '', finalizer: TRANSLATION_FINALIZER }),
    ).toEqual({ released: true });

    const pod = await admin.makeApiClient(k8s.CoreV1Api).createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'peer' },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    const vm = { provider: 'libvirt', instanceId: '0b0c6c39-5d3a-4b3e-9d0e-3f7f1c2a4e10' };
    const peerPod = await k.recordPeerPod({
      namespace,
      podName: 'peer',
      podUid: pod.metadata!.uid!,
      vm,
      vmName: 'podvm-peer-0b0c6c39',
    });
    expect(peerPod).toMatchObject({ name: 'peer', podFound: true });
    expect(
      await k.releaseFinalizer({
        ref: { kind: 'PeerPod', namespace, name: 'peer' },
        uid: peerPod.uid,
        finalizer: PEERPOD_FINALIZER,
      }),
    ).toEqual({ released: true });
  });

  it('fails non-retryable KubernetesForbidden, naming the object, where the role grants nothing', async () => {
    const k = await serviceAccount('nobody', []);
    const ref = { kind: 'Node' as const, name: 'node-1' };
    await expect(k.readObject({ ref })).rejects.toMatchObject({
      type: 'KubernetesForbidden',
      nonRetryable: true,
      message: expect.stringContaining('Node node-1') as unknown,
    });
  });
});
