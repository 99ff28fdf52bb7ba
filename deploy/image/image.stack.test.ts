// The image itself, built by `npm run image` (deploy/image/build.ts) and run by podman: its commands, a read-only
// root filesystem as the manifests give it, and a worker from it pushing a Pod's Translations into the MidoNet
// emulator of an embedded stack. A missing tool fails the build, and so this file: CI installs them (.ci/run).
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { activitySettings } from '../../activities/config';
import { DEFAULT_TENANT } from '../../model/translation/ids';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createNode,
  createPod,
  emulatorIds,
  objectsHarnessForFile,
  podTranslationNames,
  readTranslation,
  waitForReady,
} from '../../test/support/objects-harness';
import { workerProcessSettings } from '../../worker/config';
import { freePort } from '../../worker/ports';
import type { WorkerSettingValues } from '../local/worker-process';
import { ManagedProcess, waitUntil } from '../local/process';
import { stderrReporter } from '../local/progress';
import { ensureKubectl } from '../testing/kubectl';
import { buildImage } from './build';

const work = mkdtempSync(join(tmpdir(), 'steward-image-'));
const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  version: string;
};
let image: string;

/**
 * `podman run` as this host allows: runc, since bookworm's crun 1.8 refuses a host whose cgroup v2 hierarchy holds a
 * controller beside the v1 ones ("cgroups in hybrid mode not supported"), and limits no higher than the test's own,
 * since podman's defaults (1048576 open files) need CAP_SYS_RESOURCE, which a sandbox may not give.
 */
const podmanRun = ['--runtime', 'runc', 'run', '--rm', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];
/** The Deployments' restrictions: uid 1000, a read-only root and /tmp an emptyDir (world-writable, as one is). */
const asDeployed = ['--user', '1000', '--read-only', '--tmpfs', '/tmp:rw,mode=1777'];

const podman = (args: string[]) =>
  promisify(execFile)('podman', [...podmanRun, ...args]).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`podman ${args.join(' ')} failed: ${error.stderr || error.message}`);
  });

beforeAll(async () => {
  image = await buildImage(stderrReporter, 'localhost/steward:image-test');
}, 900_000);

it('prints its version', async () => {
  expect((await podman([image, '--version'])).stdout).toBe(`${version}\n`);
});

it('runs worker --help under the Deployments’ restrictions', async () => {
  expect((await podman([...asDeployed, image, 'worker', '--help'])).stdout).toMatch(/^Usage: steward worker/);
});

it('runs compiled JavaScript on Node 24 as the user node, with no tsx, nothing writable but /tmp, and steward and kubectl-steward on the PATH', async () => {
  const script = [
    'id -un',
    'echo $HOME',
    'node --version',
    'ls bin/steward.cjs cli/main.js workflow-bundle.js',
    'ls node_modules/tsx 2>/dev/null || echo no tsx',
    'touch /opt/steward/x 2>/dev/null || echo read-only',
    'touch /tmp/x && echo /tmp writable',
    // On the PATH as `npm install -g` puts them: kubectl finds the plugin by the name kubectl-steward.
    'command -v steward',
    'command -v kubectl-steward',
    'kubectl-steward --version',
  ].join('; ');
  const { stdout } = await podman([...asDeployed, '--entrypoint', 'sh', image, '-c', script]);
  expect(stdout.split('\n')).toEqual([
    'node',
    '/home/node',
    expect.stringMatching(/^v24\./),
    'bin/steward.cjs',
    'cli/main.js',
    'workflow-bundle.js',
    'no tsx',
    'read-only',
    '/tmp writable',
    '/usr/local/bin/steward',
    '/usr/local/bin/kubectl-steward',
    version,
    '',
  ]);
});

it("starts the worker's programs (virsh, xorriso) from its compiled program helper, as the user node", async () => {
  // The helper is found beside exec.js by its compiled name: a wrong one would only show when the first VM is made.
  const script = `require('./platform/exec').exec('sh', ['-c', 'echo $PPID; id -un'], { timeoutMs: 10000 }).then(({ stdout }) => console.log(process.pid + ' ' + stdout.replace(/\\n/g, ' ')))`;
  const { stdout } = await podman([...asDeployed, '--entrypoint', 'node', image, '-e', script]);
  const [worker, helper, user] = stdout.trim().split(' ');
  expect(user).toBe('node');
  expect(Number(helper)).toBeGreaterThan(0);
  expect(helper).not.toBe(worker);
});

/** `steward worker` from the image on the host's network, configured by environment variables as in a pod. */
async function startImageWorker(settings: WorkerSettingValues, secrets: Record<string, string>) {
  const httpPort = await freePort();
  const names = { ...workerProcessSettings, ...activitySettings };
  const env: Record<string, string> = { ...secrets };
  for (const [key, value] of Object.entries({ ...settings, httpHost: '127.0.0.1', httpPort: String(httpPort) })) {
    if (value !== undefined) env[names[key as keyof typeof names].env] = value;
  }
  // The kubeconfig readable by uid 1000, mounted where the pod's ServiceAccount would be.
  const kubeconfig = join(work, 'kubeconfig');
  copyFileSync(settings.kubeconfig!, kubeconfig);
  chmodSync(kubeconfig, 0o644);
  env.KUBECONFIG = '/etc/steward/kubeconfig';
  const name = `steward-image-worker-${process.pid}`;
  const child = ManagedProcess.start(
    name,
    'podman',
    [
      ...podmanRun,
      '--name',
      name,
      '--network',
      'host',
      ...asDeployed,
      '-v',
      `${kubeconfig}:/etc/steward/kubeconfig:ro`,
      ...Object.keys(env).flatMap((variable) => ['--env', variable]),
      image,
      'worker',
    ],
    { logFile: join(work, 'worker.log'), env },
  );
  await waitUntil(`${name} ready`, async () => (await fetch(`http://127.0.0.1:${httpPort}/readyz`)).ok, {
    timeoutMs: 60_000,
    intervalMs: 250,
    process: child,
  });
  const shutdown = async () => {
    await child.stop(30_000);
    // Killed after the grace time, podman leaves the container behind.
    await promisify(execFile)('podman', ['rm', '--force', '--ignore', name]);
  };
  return [{ httpPort, shutdown }];
}

describe('a worker from the image', () => {
  const cluster = sampleCluster();
  const h = objectsHarnessForFile({ hosts: cluster.hosts, identity: 'image-worker', startWorkers: startImageWorker });

  it('pushes a Pod: its Translations Ready and their resources in MidoNet', async () => {
    const node = cluster.nodes[0]!;
    const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
    await createNode(h, node);
    await createPod(h, pod);
    const names = podTranslationNames(pod, node, DEFAULT_TENANT);
    await waitForReady(h, 'the Pod’s Translations', names);
    const pushed = await emulatorIds(h);
    for (const { namespace, name } of names) {
      for (const resource of (await readTranslation(h, namespace, name))!.resources) {
        const { id } = JSON.parse(resource.body) as { id?: string };
        if (id) expect([resource.kind, pushed[resource.kind]]).toEqual([resource.kind, expect.arrayContaining([id])]);
      }
    }
  });

  it('answers `kubectl steward list -A` run inside the image with the image’s own PATH: the Pod and its Node', async () => {
    const node = cluster.nodes[0]!;
    const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
    // kubectl (a static binary) mounted in; the plugin is the image's own /usr/local/bin/kubectl-steward.
    const kubeconfig = join(work, 'kubectl-kubeconfig');
    copyFileSync(h.info.kubernetes.kubeconfig, kubeconfig);
    chmodSync(kubeconfig, 0o644);
    const { stdout } = await podman([
      ...asDeployed,
      '--network',
      'host',
      '-v',
      `${await ensureKubectl()}:/usr/bin/kubectl:ro`,
      '-v',
      `${kubeconfig}:/etc/steward/kubeconfig:ro`,
      '--env',
      'KUBECONFIG=/etc/steward/kubeconfig',
      '--env',
      `TEMPORAL_ADDRESS=${h.info.temporal.address}`,
      '--env',
      `TEMPORAL_NAMESPACE=${h.info.temporal.namespace}`,
      '--entrypoint',
      'kubectl',
      image,
      ...['steward', 'list', '-A', '-o', 'name'],
    ]);
    expect(stdout.split('\n')).toEqual(
      expect.arrayContaining([`pod/${pod.metadata.namespace}/${pod.metadata.name}`, `node/${node.metadata.name}`]),
    );
  });
});
