// The chart's `helm test`, on the embedded stack. The stack runs no kubelet (nor scheduler), so no Pod runs there by
// itself: this file plays the kubelet's part for the test Pod and nothing else. The release is installed
// (`helm install`), `helm test` runs as a user runs it, and when it has made the test Pod, its container is run as a
// local process, as the kubelet would start it: the image's entrypoint (the Dockerfile's) with the container's args,
// the environment its `env` and `envFrom` resolve to from the release's ConfigMap and Secrets on the API server, and
// its ServiceAccount's token, CA and namespace where the kubelet mounts them (TELEPRESENCE_ROOT; no kubeconfig); its
// exit code is written back as the Pod's phase, which `helm test` waits for and reports. The values point the release
// at the stack's Temporal and API server (the MidoNet profile's KUBERNETES_SERVICE_HOST/_PORT).
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { POD_ROOT_VARIABLE } from '../../platform/kubernetes/kubeconfig';
import { serviceAccountFiles } from '../local/identities';
import { stackInfo } from '../local/jest/stack-info';
import { repoRoot } from '../local/paths';
import { CHART_DIR, ensureHelm, runHelm, valuesFile } from '../testing/helm';

const release = 'steward-check-hook';
const namespace = 'steward-check-hook';
const info = stackInfo();
const apiServer = new URL(
  (() => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(info.kubernetes.kubeconfig);
    return kc.getCurrentCluster()!.server;
  })(),
);
const values = {
  temporal: { address: info.temporal.address, namespace: info.temporal.namespace },
  midonet: { kubernetesEndpoint: { host: apiServer.hostname, port: Number(apiServer.port || 443) } },
};

let helm: string;
let admin: k8s.KubeConfig;
let core: k8s.CoreV1Api;
const inCluster = (args: string[]) =>
  runHelm(helm, [...args, '--kubeconfig', info.kubernetes.kubeconfig, '--namespace', namespace]);
const absent = (optional: boolean | undefined) => (error: unknown) => {
  if (optional && error instanceof k8s.ApiException && error.code === 404) return undefined;
  throw error;
};

/** A container's environment as the kubelet gives it: `envFrom` in order, then `env` over it. */
async function containerEnvironment(container: k8s.V1Container): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  const secret = async (name: string, optional?: boolean) => {
    const data = (await core.readNamespacedSecret({ namespace, name }).catch(absent(optional)))?.data ?? {};
    return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  };
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) {
      const { name, optional } = from.configMapRef;
      const configMap = await core.readNamespacedConfigMap({ namespace, name: name! }).catch(absent(optional));
      Object.assign(env, configMap?.data);
    } else if (from.secretRef) Object.assign(env, await secret(from.secretRef.name!, from.secretRef.optional));
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (ref) env[variable.name] = (await secret(ref.name!, ref.optional))[ref.key]!;
    else throw new Error(`${variable.name}: only values and Secrets' keys are resolved here`);
  }
  return env;
}

/** The image's ENTRYPOINT, as the Dockerfile gives it (`node bin/steward.cjs`), run from a checkout. */
function entrypoint(): string[] {
  const dockerfile = readFileSync(join(repoRoot, 'deploy', 'image', 'Dockerfile'), 'utf8');
  return JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let hook: k8s.V1Pod;
/** The kubelet's part of the Pod's environment: the ServiceAccount's files, nothing of this machine's. */
let kubeletEnv: Record<string, string>;

/** A Pod's container as a process: its command line and environment, with `change` over the environment. */
async function runContainer(pod: k8s.V1Pod, change: Record<string, string> = {}): Promise<Run> {
  const container = pod.spec!.containers[0]!;
  const [node, ...script] = entrypoint();
  expect([node, container.command]).toEqual(['node', undefined]);
  const env = { PATH: process.env.PATH, ...(await containerEnvironment(container)), ...kubeletEnv, ...change };
  return promisify(execFile)(process.execPath, [...script, ...container.args!], { cwd: repoRoot, env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: Run) => error,
  );
}

/** The hook's container as `helm get hooks` stores it, run as a process. */
const runHook = (change?: Record<string, string>) => runContainer(hook, change);

/**
 * `helm test` with the kubelet's part played here: the test Pod it makes (a new incarnation) run as a process, its
 * exit code written as the Pod's phase. Helm's exit status and output, and the process's run.
 */
async function helmTest(): Promise<{ passed: boolean; output: string; run: Run }> {
  const name = hook.metadata!.name!;
  const before = await core.readNamespacedPod({ namespace, name }).catch(absent(true));
  const test = inCluster(['test', release, '--timeout', '3m']).then(
    (output) => ({ passed: true, output }),
    (error: Error) => ({ passed: false, output: error.message }),
  );
  let pod: k8s.V1Pod | undefined;
  for (const deadline = Date.now() + 60_000; !pod; await new Promise((r) => setTimeout(r, 200))) {
    if (Date.now() > deadline) throw new Error(`helm test made no Pod ${namespace}/${name}`);
    const read = await core.readNamespacedPod({ namespace, name }).catch(absent(true));
    if (read && read.metadata!.uid !== before?.metadata?.uid && !read.metadata!.deletionTimestamp) pod = read;
  }
  const run = await runContainer(pod);
  const terminated = { exitCode: run.code, reason: run.code === 0 ? 'Completed' : 'Error' };
  await core.patchNamespacedPodStatus(
    {
      namespace,
      name,
      body: {
        status: {
          phase: run.code === 0 ? 'Succeeded' : 'Failed',
          containerStatuses: [
            {
              name: 'check',
              image: pod.spec!.containers[0]!.image!,
              imageID: '',
              ready: false,
              restartCount: 0,
              state: { terminated },
            },
          ],
        },
      },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  return { ...(await test), run };
}

beforeAll(async () => {
  admin = new k8s.KubeConfig();
  admin.loadFromFile(info.kubernetes.kubeconfig);
  core = admin.makeApiClient(k8s.CoreV1Api);
  helm = await ensureHelm();
  await inCluster(['uninstall', release, '--ignore-not-found', '--wait']);
  await core.createNamespace({ body: { metadata: { name: namespace } } }).catch((error: unknown) => {
    if (!(error instanceof k8s.ApiException && error.code === 409)) throw error;
  });
  await inCluster(['install', release, CHART_DIR, '--values', valuesFile(values)]);
  const hooks = k8s.loadAllYaml(await inCluster(['get', 'hooks', release])).filter(Boolean) as k8s.V1Pod[];
  hook = hooks.find((o) => o.kind === 'Pod' && o.metadata?.annotations?.['helm.sh/hook'] === 'test')!;
  expect(hook).toBeDefined();

  // The kubelet's part: the ServiceAccount's files, and nothing of this machine's (no kubeconfig, an empty HOME).
  const root = mkdtempSync(join(tmpdir(), 'steward-check-hook-'));
  await serviceAccountFiles(admin, namespace, hook.spec!.serviceAccountName!, root);
  mkdirSync(join(root, 'home'));
  kubeletEnv = { [POD_ROOT_VARIABLE]: root, HOME: join(root, 'home'), KUBECONFIG: '' };
}, 15 * 60_000);

afterAll(async () => {
  await inCluster(['uninstall', release, '--ignore-not-found', '--wait']);
  await core?.deleteNamespace({ name: namespace }).catch(() => undefined);
}, 180_000);

it('mounts nothing the local process could not stand in for: /tmp, and the optional ssh key (absent here)', () => {
  expect(hook.spec!.containers[0]!.volumeMounts?.map((mount) => mount.name)).toEqual(['tmp', 'ssh-key']);
});

it('exits 0 with the release’s settings: Temporal reached, and the API server as the release’s ServiceAccount', async () => {
  const { code, stdout, stderr } = await runHook();
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect(stdout.split('\n')).toEqual([
    `Temporal at ${info.temporal.address} (namespace ${info.temporal.namespace}): reached`,
    `Kubernetes API server at https://${apiServer.host}: reached as system:serviceaccount:${namespace}:${hook.spec!.serviceAccountName}`,
    '',
  ]);
});

it('exits 1 naming Temporal when the Temporal address is wrong, the API server still reached', async () => {
  const { code, stdout, stderr } = await runHook({ TEMPORAL_ADDRESS: '127.0.0.1:1' });
  expect(code).toBe(1);
  expect(stderr).toMatch(/^error: check: Temporal at 127\.0\.0\.1:1 \(namespace [^)]*\) is not reachable: [^\n]*\n$/);
  expect(stdout).toMatch(/^Kubernetes API server at .*: reached as system:serviceaccount:/);
});

it('`helm test` passes with the release’s settings, and fails once the release points at a Temporal it cannot reach', async () => {
  const passed = await helmTest();
  expect(passed.run.code).toBe(0);
  expect(passed.output).toMatch(/Phase:\s+Succeeded/);
  expect(passed.passed).toBe(true);

  await inCluster(['upgrade', release, CHART_DIR, '--reuse-values', '--set', 'temporal.address=127.0.0.1:1']);
  const failed = await helmTest();
  expect(failed.run.code).toBe(1);
  expect(failed.run.stderr).toMatch(/^error: check: Temporal at 127\.0\.0\.1:1 /);
  expect(failed.output).toMatch(/pod steward-check-hook-check failed/);
  expect(failed.passed).toBe(false);
});
