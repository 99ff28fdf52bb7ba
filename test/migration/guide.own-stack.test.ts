// docs/migration.md, run as written (test/support/guide.ts): every fenced `sh <step>` block of the guide, in the
// guide's order, against the embedded stack's API server holding what midonet-kubernetes' manifest installs
// (test/migration/midonet-kube.yaml: its CRD, the controllers' Deployment and RBAC, midonet-kube-node with its RBAC,
// its ConfigMap and Secret) and the Translations its controllers write. The stack has no kubelet: the guide's "install Steward" is `kubectl apply -k deploy/manifests`
// (Deployments that never run), and the worker and starter run in this process in their stead, started and stopped
// where the guide starts and stops them. The guide and this file cannot drift: a block the test does not know fails.
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { repoRoot } from '../../deploy/local/paths';
import { POLLER_WINDOW_MS } from '../../cli/pollers';
import { sampleCluster } from '../../model/translation/sample-cluster';
import { REFERRERS_FINALIZER, TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { MIDONET_USER } from '../support';
import { guideBlocks, guideRunner, untilUninstallAllowed, userPath } from '../support/guide';
import { asResource, migratedClusterAsWritten, writeAsMidonetKubernetes } from '../support/midonet-kubernetes';
import {
  createNode,
  createPod,
  listTranslations,
  seedEmulator,
  startObjectsHarness,
  waitFor,
  type ObjectsHarness,
} from '../support/objects-harness';

const run = promisify(execFile);
const GUIDE = join(repoRoot, 'docs', 'migration.md');
const MANIFEST = join(__dirname, 'midonet-kube.yaml');

// The Node and Pods midonet-kubernetes' Translations below are of (node1 and its two Pods) and the globals.
const base = sampleCluster();
const owners = new Set([null, 'Node/node1', 'Pod/nginx', 'Pod/web-0']);
const written = migratedClusterAsWritten.filter((t) => owners.has(t.owner));

let stack: Stack;
const kubeConfig = new k8s.KubeConfig();
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;
let apps: k8s.AppsV1Api;
let h: ObjectsHarness | undefined;
let env: NodeJS.ProcessEnv;
const guide = guideRunner(GUIDE, () => env);
const step = (name: string) => guide.step(name);

const applyManifest = async (file: string, ...more: string[]) =>
  run('kubectl', ['apply', '-f', file, ...more], { env, cwd: repoRoot });

beforeAll(async () => {
  stack = await startPrivateStack();
  const { kubeconfig } = stack.info.kubernetes;
  kubeConfig.loadFromFile(kubeconfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
  env = {
    ...process.env,
    PATH: `${await userPath()}:${process.env.PATH}`,
    KUBECONFIG: kubeconfig,
    TEMPORAL_ADDRESS: stack.info.temporal.address,
    TEMPORAL_NAMESPACE: stack.info.temporal.namespace,
    MIDONET_API_URL: stack.info.midonet.url,
    MIDONET_USERNAME: MIDONET_USER.username,
    MIDONET_PASSWORD: MIDONET_USER.password,
    MIDONETKUBE_TENANT: base.tenant,
  };
  // The cluster as midonet-kubernetes ran it: its manifest applied as its README says (Steward's CRD, which the stack
  // installs, replaced by midonet-kubernetes'), the objects, its Translations of them, and MidoNet as it pushed them.
  const crds = kubeConfig.makeApiClient(k8s.ApiextensionsV1Api);
  await crds.deleteCustomResourceDefinition({ name: 'translations.midonet.org' });
  await waitFor('Steward-installed CRD gone', async () => {
    const left = await crds.listCustomResourceDefinition({ fieldSelector: 'metadata.name=translations.midonet.org' });
    return left.items.length === 0;
  });
  await applyManifest(MANIFEST);
  await run('kubectl', ['wait', '--for=condition=Established', 'crd/translations.midonet.org'], { env });
  const { midonet } = await seedEmulator(stack.info, base.hosts, base.tenant);
  await createNode({ core }, base.nodes[0]!);
  for (const pod of base.pods.filter((p) => p.spec.nodeName === 'node1')) await createPod({ core }, pod);
  for (const t of written) {
    const resources = t.resources.map(asResource);
    await writeAsMidonetKubernetes({ core, custom }, { ...t, resources });
    for (const resource of resources) await midonet.ensure(resource);
  }
}, 900_000);
afterAll(async () => {
  await h?.stop();
  await stack?.stop();
});

/** What midonet-kubernetes reads of its Translations. */
const asMidonetKubernetesReadsThem = async () =>
  (await listTranslations({ custom }))
    .map(({ metadata }) => {
      const { namespace, name, finalizers, labels, ownerReferences } = metadata as k8s.V1ObjectMeta;
      return { namespace, name, finalizers, labels, ownerReferences };
    })
    .sort((a, b) => `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`));
const replicas = async (namespace: string, name: string) =>
  (await apps.readNamespacedDeployment({ namespace, name })).spec?.replicas;

describe("docs/migration.md, on what midonet-kubernetes' manifest and controllers leave", () => {
  let before: Awaited<ReturnType<typeof asMidonetKubernetesReadsThem>>;
  /** After the takeover: midonet-kubernetes' Translations and those Steward added for the cluster's own objects. */
  let adopted: typeof before;

  it('checks the version and the CRD, and stops only the controllers: the node agent, its config and credentials stay', async () => {
    before = await asMidonetKubernetesReadsThem();
    expect(before).toHaveLength(written.length);
    expect(await step('check')).toMatch(/Server Version: v1\.\d+[\s\S]*\nv1\n/);
    await step('stop-controllers');
    expect(await replicas('kube-system', 'midonet-kube-controllers')).toBe(0);
    expect(await step('keep-node')).toMatch(
      /midonet-kube-node[\s\S]*midonet-kube-config[\s\S]*midonet-kube-credential/,
    );
  });

  it("applies Steward's CRDs over midonet-kubernetes': every Translation kept as it was, with a status subresource now", async () => {
    await step('crds');
    const crd = await kubeConfig
      .makeApiClient(k8s.ApiextensionsV1Api)
      .readCustomResourceDefinition({ name: 'translations.midonet.org' });
    // false, which the API leaves out
    expect(crd.spec.preserveUnknownFields).toBeFalsy();
    expect(crd.spec.versions[0]?.subresources?.status).toEqual({});
    // The API server serves them again once it has rebuilt their storage for the new CRD.
    const served = await waitFor('the Translations served again', () =>
      asMidonetKubernetesReadsThem().catch(() => undefined),
    );
    expect(served).toEqual(before);
  });

  it('looks before anything is written, then takes over: `steward adopt --dry-run`, Steward started, `steward adopt`', async () => {
    // Step 4, installing Steward: its Deployments, which this stack does not run; the harness runs them here.
    await run('kubectl', ['apply', '--server-side', '--force-conflicts', '-k', 'deploy/manifests'], {
      env,
      cwd: repoRoot,
    });
    expect(await step('adopt-dry-run')).toContain('(dry run: nothing written)');
    h = await startObjectsHarness(stack.info, {
      hosts: base.hosts,
      identity: 'starter',
      tenant: base.tenant,
      keepEmulator: true,
      globalsTimeoutMs: 180_000,
    });
    await step('adopt');
    // Kept as they were; Steward adds those of the cluster's own objects (the Service `kubernetes`).
    adopted = await asMidonetKubernetesReadsThem();
    expect(adopted).toEqual(expect.arrayContaining(before));
  }, 400_000);

  it('shows what the sweeper would delete before switching it on', async () => {
    expect(await step('sweep-dry-run')).toContain('dry run: nothing deleted');
    const config = await core.readNamespacedConfigMap({ namespace: 'steward', name: 'steward' });
    expect(config.data?.STEWARD_SWEEP_BACKENDS).toBe('midonet');
  });

  it("deletes midonet-kubernetes' controllers and their RBAC, and only those", async () => {
    await step('delete-controllers');
    const rbac = kubeConfig.makeApiClient(k8s.RbacAuthorizationV1Api);
    await expect(
      apps.readNamespacedDeployment({ namespace: 'kube-system', name: 'midonet-kube-controllers' }),
    ).rejects.toThrow();
    await expect(rbac.readClusterRole({ name: 'midonet-kube-controllers' })).rejects.toThrow();
    expect(
      (await apps.readNamespacedDaemonSet({ namespace: 'kube-system', name: 'midonet-kube-node' })).metadata?.name,
    ).toBe('midonet-kube-node');
    expect((await rbac.readClusterRole({ name: 'midonet-kube-node' })).metadata?.name).toBe('midonet-kube-node');
  });

  it(
    'rolls back: Steward stopped, `steward uninstall` takes back what it added, midonet-kubernetes starts again on its Translations',
    async () => {
      // The rollback after step 8: its Deployment and RBAC again, from the manifest's own documents.
      const controllers = mkdtempSync(join(tmpdir(), 'mk-controllers-'));
      const docs = readFileSync(MANIFEST, 'utf8')
        .split(/^---$/m)
        .filter((d) => /name: midonet-kube-controllers$/m.test(d));
      writeFileSync(join(controllers, 'controllers.yaml'), docs.join('---'));
      await applyManifest(join(controllers, 'controllers.yaml'));
      await run('kubectl', ['-n', 'kube-system', 'scale', 'deployment', 'midonet-kube-controllers', '--replicas=0'], {
        env,
      });
      expect((await core.readNode({ name: 'node1' })).metadata?.finalizers).toContain(REFERRERS_FINALIZER);

      await step('stop-steward');
      await h!.starter.stop();
      await Promise.all(h!.workers.map((worker) => worker.shutdown()));
      await untilUninstallAllowed(env);
      expect(await step('uninstall')).toMatch(/would remove[\s\S]*Node\s+node1[\s\S]*removed what Steward added/);
      expect((await core.readNode({ name: 'node1' })).metadata?.finalizers ?? []).not.toContain(REFERRERS_FINALIZER);
      expect(await replicas('kube-system', 'midonet-kube-controllers')).toBe(1);
      const after = await asMidonetKubernetesReadsThem();
      expect(after).toEqual(adopted);
      expect(after.every((t) => t.finalizers?.includes(TRANSLATION_FINALIZER))).toBe(true);
    },
    POLLER_WINDOW_MS + 180_000,
  );

  it("ran every `sh` block of the guide, in its order, but the guard's (its own stack test runs that)", () => {
    expect(guideBlocks(GUIDE).filter((b) => b.step.startsWith('untested:'))).toEqual([
      { step: 'untested:guard', script: expect.any(String) as unknown },
    ]);
    expect(guide.ran).toEqual(guide.tested());
  });
});
