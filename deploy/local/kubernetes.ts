import * as k8s from '@kubernetes/client-node';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { inGoScratch } from './go';
import { cachedTool } from './tool-cache';
import { cacheRoot, repoRoot } from './paths';
import { freePort, freePorts } from '../../worker/ports';
import { retryWhenPortTaken } from './ports';
import { commandExists, ManagedProcess, runLogged, waitUntil } from './process';
import { MissingPrerequisite, type Reporter, step } from './progress';

/**
 * A container-free Kubernetes control plane: etcd, kube-apiserver (RBAC on) and kube-controller-manager running only
 * the garbage-collector, namespace and EndpointSlice controllers (the endpointslice controller's slices and the
 * mirroring controller's of hand-written Endpoints, which `STEWARD_ENDPOINTS_FROM=auto` reads in a cluster), started
 * the way envtest starts them. No endpoints controller: the tests write v1 Endpoints by hand (STACK_STEWARD_SETTINGS). The binaries are built once
 * from Go modules at one pinned release (wrapper module in ./toolchain/kubernetes) and cached by version.
 */
export const KUBERNETES_VERSION = 'v1.34.4';
const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager'] as const;
type Binary = (typeof BINARIES)[number];
const PACKAGES: Record<Binary, string> = {
  etcd: 'go.etcd.io/etcd/server/v3',
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
};
export const CRD_DIR = join(repoRoot, 'deploy', 'helm', 'steward', 'crds');

export async function ensureKubernetesBinaries(report: Reporter): Promise<string> {
  const configured = process.env.KUBE_BIN_DIR;
  const binDir = configured ?? join(cacheRoot, `kubernetes-${KUBERNETES_VERSION}`, 'bin');
  const missingIn = (dir: string) => BINARIES.filter((name) => !existsSync(join(dir, name)));
  const missing = missingIn(binDir);
  if (missing.length === 0) return binDir;
  if (configured)
    throw new MissingPrerequisite(
      `KUBE_BIN_DIR=${configured} lacks ${missing.join(', ')}`,
      'unset KUBE_BIN_DIR to build them, or point it at a folder with all three',
    );
  if (!(await commandExists('go'))) {
    throw new MissingPrerequisite(
      `Go is needed once to build ${missing.join(', ')} ${KUBERNETES_VERSION} (Debian's golang-go is too old).`,
      'install Go >= 1.24 (official tarball into /usr/local/go, then PATH=/usr/local/go/bin:$PATH), or set KUBE_BIN_DIR to a folder with etcd, kube-apiserver and kube-controller-manager',
    );
  }
  // Built together into a staging folder: a folder an older build left with some of them is built again whole.
  return cachedTool(binDir, (staging) => buildKubernetes(staging, report), {
    ready: (dir) => missingIn(dir).length === 0,
    report,
  });
}

async function buildKubernetes(staging: string, report: Reporter) {
  const srcDir = join(cacheRoot, `kubernetes-${KUBERNETES_VERSION}`, 'src');
  mkdirSync(srcDir, { recursive: true });
  for (const file of ['go.mod', 'go.sum', 'tools.go'])
    copyFileSync(join(__dirname, 'toolchain', 'kubernetes', file), join(srcDir, file));
  const logFile = join(cacheRoot, 'logs', `kubernetes-${KUBERNETES_VERSION}-build.log`);
  report(
    `Building Kubernetes ${KUBERNETES_VERSION} control-plane binaries once (10-25 min on 2 cores); full log: ${logFile}`,
  );
  const settings = { GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' };
  await inGoScratch(`kubernetes-${KUBERNETES_VERSION}`, settings, async (env) => {
    await step(report, 'download Go modules for Kubernetes', () =>
      runLogged('go', ['mod', 'download'], { step: 'go mod download', logFile, cwd: srcDir, env }),
    );
    for (const name of BINARIES) {
      await step(report, `build ${name}`, () =>
        runLogged('go', ['build', '-trimpath', ...buildFlags(name), '-o', join(staging, name), PACKAGES[name]], {
          step: `build ${name}`,
          logFile,
          cwd: srcDir,
          env,
        }),
      );
    }
  });
}

function buildFlags(name: Binary): string[] {
  if (name === 'etcd') return ['-ldflags', '-s -w'];
  const [major, minor] = KUBERNETES_VERSION.slice(1).split('.');
  // Without these, /version reports v0.0.0-master.
  const version = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${KUBERNETES_VERSION}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=1970-01-01T00:00:00Z`,
  ]);
  return ['-tags=selinux,notest,grpcnotrace', '-ldflags', ['-s -w', ...version].join(' ')];
}

export interface KubernetesCluster {
  server: string;
  etcdUrl: string;
  /** Admin kubeconfig (system:masters). */
  kubeconfigPath: string;
  processes: ManagedProcess[];
}

export interface KubernetesOptions {
  stateDir: string;
  /** 0 picks a free port; otherwise the port is used when free. */
  apiPort: number;
  report: Reporter;
}

export async function startKubernetes(options: KubernetesOptions): Promise<KubernetesCluster> {
  const binDir = await ensureKubernetesBinaries(options.report);
  const dir = join(options.stateDir, 'kubernetes');
  const logs = join(options.stateDir, 'logs');
  const pki = join(dir, 'pki');
  const tokens = ensureCredentials(pki);
  const [etcdPort, peerPort, picked] = await freePorts(3);
  const apiPort = options.apiPort ? await freePort(options.apiPort) : picked!;
  const server = `https://127.0.0.1:${apiPort}`;
  const processes: ManagedProcess[] = [];
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  try {
    const etcd = ManagedProcess.start(
      'etcd',
      join(binDir, 'etcd'),
      [
        '--name=default',
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        '--unsafe-no-fsync=true',
        '--logger=zap',
        '--log-level=warn',
      ],
      { logFile: join(logs, 'etcd.log') },
    );
    processes.push(etcd);
    await waitUntil('etcd healthy', async () => (await fetch(`${etcdUrl}/health`)).ok, {
      timeoutMs: 30_000,
      process: etcd,
    });

    const apiserver = ManagedProcess.start(
      'kube-apiserver',
      join(binDir, 'kube-apiserver'),
      [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${apiPort}`,
        // A loopback advertise address needs the endpoint reconciler off (it may not write loopback endpoints).
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--cert-dir=${pki}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--authorization-mode=RBAC',
        `--token-auth-file=${join(pki, 'tokens.csv')}`,
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${join(pki, 'sa.pub')}`,
        `--service-account-signing-key-file=${join(pki, 'sa.key')}`,
        // No controller creates the default ServiceAccount here, and Pods could not be created without it.
        '--disable-admission-plugins=ServiceAccount',
        '--enable-priority-and-fairness=false',
      ],
      { logFile: join(logs, 'kube-apiserver.log') },
    );
    processes.push(apiserver);
    await waitUntil(
      'kube-apiserver ready',
      async () => (await httpsGet(`${server}/readyz`, tokens.admin)).status === 200,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        process: apiserver,
      },
    );
    await waitUntil(
      'namespace default exists',
      async () => (await httpsGet(`${server}/api/v1/namespaces/default`, tokens.admin)).status === 200,
      {
        timeoutMs: 60_000,
        process: apiserver,
      },
    );

    const caData = readFileSync(join(pki, 'apiserver.crt')).toString('base64');
    const kubeconfigPath = join(options.stateDir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfigYaml({ server, caData, user: 'admin', token: tokens.admin }));
    const kcmKubeconfig = join(dir, 'kube-controller-manager.kubeconfig');
    writeFileSync(
      kcmKubeconfig,
      kubeconfigYaml({ server, caData, user: 'system:kube-controller-manager', token: tokens.controllerManager }),
    );

    // CRDs go in before the controller manager starts: its garbage collector only sees kinds it discovered, and
    // re-reads discovery every 30 s.
    await installCrds(kubeconfigPath);

    const kcmLog = join(logs, 'kube-controller-manager.log');
    await retryWhenPortTaken(kcmLog, async () => {
      const kcmPort = await freePort();
      const kcm = ManagedProcess.start(
        'kube-controller-manager',
        join(binDir, 'kube-controller-manager'),
        [
          `--kubeconfig=${kcmKubeconfig}`,
          '--controllers=garbage-collector-controller,namespace-controller,endpointslice-controller,endpointslice-mirroring-controller',
          '--leader-elect=false',
          '--use-service-account-credentials=true',
          '--bind-address=127.0.0.1',
          `--secure-port=${kcmPort}`,
          '--authorization-always-allow-paths=/healthz,/readyz,/livez',
          '--concurrent-gc-syncs=5',
          '--concurrent-namespace-syncs=2',
          '--v=1',
        ],
        { logFile: kcmLog },
      );
      processes.push(kcm);
      await waitUntil(
        'kube-controller-manager healthy',
        async () => (await httpsGet(`https://127.0.0.1:${kcmPort}/healthz`)).status === 200,
        {
          timeoutMs: 60_000,
          intervalMs: 500,
          process: kcm,
        },
      );
    });
    return { server, etcdUrl, kubeconfigPath, processes };
  } catch (error) {
    await Promise.all(processes.reverse().map((p) => p.stop()));
    throw error;
  }
}

interface Tokens {
  admin: string;
  controllerManager: string;
}

/** Service-account signing keys and static tokens, created once per state dir so restarts keep identities valid. */
function ensureCredentials(pki: string): Tokens {
  mkdirSync(pki, { recursive: true });
  if (!existsSync(join(pki, 'sa.key'))) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(pki, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(pki, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  }
  const tokensFile = join(pki, 'tokens.csv');
  if (!existsSync(tokensFile)) {
    const token = () => randomBytes(24).toString('hex');
    writeFileSync(
      tokensFile,
      [`${token()},admin,uid-admin,"system:masters"`, `${token()},system:kube-controller-manager,uid-kcm`].join('\n') +
        '\n',
      { mode: 0o600 },
    );
  }
  const [admin, controllerManager] = readFileSync(tokensFile, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(',')[0] ?? '');
  return { admin: admin ?? '', controllerManager: controllerManager ?? '' };
}

export function kubeconfigYaml(options: { server: string; caData: string; user: string; token: string }): string {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'steward', server: options.server, caData: options.caData }],
    users: [{ name: options.user, token: options.token }],
    contexts: [{ name: 'steward', cluster: 'steward', user: options.user }],
    currentContext: 'steward',
  });
  return kc.exportConfig();
}

/**
 * Applies every CRD in deploy/helm/steward/crds (server-side apply) and waits until each is Established. Steward's
 * admission policy is Steward's installation's, not the cluster's (a chart installed later owns it): RBAC_FILES.
 */
export async function installCrds(kubeconfigPath: string): Promise<void> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  const extensions = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const files = existsSync(CRD_DIR) ? readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml')) : [];
  for (const file of files) {
    for (const crd of k8s.loadAllYaml(readFileSync(join(CRD_DIR, file), 'utf8')) as k8s.V1CustomResourceDefinition[]) {
      await objects.patch(crd, undefined, undefined, 'steward', true, k8s.PatchStrategy.ServerSideApply);
      const name = crd.metadata?.name ?? file;
      await waitUntil(
        `CRD ${name} established`,
        async () => {
          const current = await extensions.readCustomResourceDefinition({ name });
          return current.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
        },
        { timeoutMs: 30_000 },
      );
    }
  }
}

/** A GET that ignores the self-signed serving certificate (readiness probes only; traffic stays on 127.0.0.1). */
function httpsGet(url: string, token?: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 5_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

/** Used by the stack's reuse check: is an existing kubeconfig's API server answering? */
export async function kubernetesReachable(kubeconfigPath: string): Promise<boolean> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  try {
    await kc.makeApiClient(k8s.VersionApi).getCode();
    return true;
  } catch {
    return false;
  }
}
