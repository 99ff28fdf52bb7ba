import * as k8s from '@kubernetes/client-node';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_LEASE } from '../../starter/controller/leader';
import { freePort } from '../../worker/ports';
import { writeWorkflowBundle } from '../../worker/bundle';
import { POD_ROOT_VARIABLE } from '../../platform/kubernetes/kubeconfig';
import { serverSideApply, serviceAccountFiles, serviceAccountKubeconfig } from './identities';
import { repoRoot } from './paths';
import { waitUntil } from './process';
import { stderrReporter, step, type Reporter } from './progress';
import { STACK_STEWARD_SETTINGS, temporalEnv, type AnyStackInfo } from './stack';
import {
  startAll,
  startStewardProcess,
  startWorkerProcess,
  type StewardProcess,
  type WorkerProcess,
} from './worker-process';

/**
 * Steward as a user deploys it, on the embedded stack: the RBAC of deploy/rbac/ and what deploy/manifests/steward.yaml
 * holds but its Deployments applied to the API server, then workers and starters as processes of their own, each
 * with the environment its Deployment's pod gets (the ConfigMap, its own `env`), the stack's addresses in place of
 * the cluster's, and a ServiceAccount token of its own from the TokenRequest API (as each pod gets a projected
 * token), never the admin kubeconfig. The starters share one Lease: one leads. `inCluster` gives the token as the
 * kubelet does, with no kubeconfig at all: the MidoNet profile's pods on the host network, to the letter.
 */
export const RBAC_FILES = [
  'steward-clusterrole.yaml',
  'steward-starter-lease-role.yaml',
  'steward-operator-requests.yaml',
].map((file) => join(repoRoot, 'deploy', 'rbac', file));
export const MANIFEST_FILE = join(repoRoot, 'deploy', 'manifests', 'steward.yaml');

export interface StewardProcessesOptions {
  info: AnyStackInfo;
  workers: number;
  starters: number;
  /** Variables over the manifest's and the stack's (a task queue, a test's short resync), as a kustomize patch would. */
  overrides?: Record<string, string>;
  /** What the Secret `steward` would hold (MIDONET_PASSWORD, TEMPORAL_API_KEY). */
  secrets?: Record<string, string>;
  /**
   * No kubeconfig: each process reads its token, CA and namespace where the kubelet mounts them, under a root of its
   * own (TELEPRESENCE_ROOT), and the API server at the ConfigMap's KUBERNETES_SERVICE_HOST/_PORT (the stack's in
   * place of the cluster's); HOME is an empty folder, so no ~/.kube/config stands in. Else a kubeconfig per process.
   */
  inCluster?: boolean;
  report?: Reporter;
}

export interface StewardProcesses {
  /** `steward-worker-<i>`, in start order (a killed one stays listed, not running). */
  workers: WorkerProcess[];
  /** `steward-starter-<i>`: also each one's identity in the Lease. */
  starters: StewardProcess[];
  lease: { namespace: string; name: string };
  /** What every process gets as environment but its KUBECONFIG and its name: ConfigMap, stack, overrides. */
  settings: Record<string, string>;
  /** The Lease's holder now (a starter's name), if any. */
  leaseHolder(): Promise<string | undefined>;
  /** Starters first (their Lease released), then workers (they drain). */
  stop(): Promise<void>;
}

type Role = 'worker' | 'starter';
type Manifest = k8s.KubernetesObject & Record<string, unknown>;

export async function startStewardProcesses({
  info,
  workers,
  starters,
  overrides = {},
  secrets = {},
  inCluster = false,
  report = stderrReporter,
}: StewardProcessesOptions): Promise<StewardProcesses> {
  const manifest = k8s.loadAllYaml(readFileSync(MANIFEST_FILE, 'utf8')) as Manifest[];
  const rbac = RBAC_FILES.flatMap((file) => k8s.loadAllYaml(readFileSync(file, 'utf8')) as Manifest[]);
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(info.kubernetes.kubeconfig);
  // No Deployment controller runs here: these processes are the Deployments' pods.
  const apply = serverSideApply(admin);
  await step(report, 'apply deploy/rbac/ and deploy/manifests/steward.yaml (but its Deployments)', async () => {
    // The Namespace first: the RBAC's Lease Role lives in it.
    const objects = [...rbac, ...manifest].filter((o) => o.kind !== 'Deployment');
    for (const object of objects.sort((a, b) => Number(b.kind === 'Namespace') - Number(a.kind === 'Namespace')))
      await apply(object);
  });

  const configMap = manifest.find((o): o is k8s.V1ConfigMap & Manifest => o.kind === 'ConfigMap');
  const apiServer = new URL(admin.getCurrentCluster()!.server);
  // The API server's own address only where the manifest gives one (its MidoNet profile): nothing stands in for it.
  const apiServerEnv: Record<string, string> = configMap?.data?.KUBERNETES_SERVICE_HOST
    ? {
        KUBERNETES_SERVICE_HOST: apiServer.hostname.replace(/^\[|\]$/g, ''),
        KUBERNETES_SERVICE_PORT: apiServer.port || '443',
      }
    : {};
  const stackEnv: Record<string, string> = {
    ...apiServerEnv,
    ...temporalEnv(info.temporal),
    ...STACK_STEWARD_SETTINGS,
    ...(info.midonet ? { MIDONET_API_URL: info.midonet.url } : {}),
    LIBVIRT_URI: info.libvirt.uri,
  };
  const pod = (role: Role, index: number) => {
    const name = `steward-${role}-${index + 1}`;
    const deployment = deploymentOf(manifest, role);
    const container = deployment.spec?.template.spec?.containers[0];
    const namespace = deployment.metadata?.namespace ?? 'default';
    // A pod finds its namespace where its service account is mounted (inCluster); with a kubeconfig, it is told.
    const ownNamespace: Record<string, string> = inCluster ? {} : { STEWARD_LEASE_NAMESPACE: namespace };
    return {
      name,
      serviceAccount: { namespace, name: deployment.spec?.template.spec?.serviceAccountName ?? 'default' },
      env: { ...configMap?.data, ...containerEnv(container, name), ...stackEnv, ...ownNamespace, ...overrides },
    };
  };
  // As the starters will see it: a process inherits this one's environment below its own.
  const starterEnv: NodeJS.ProcessEnv = { ...process.env, ...pod('starter', 0).env };
  const first = pod('starter', 0).serviceAccount;
  const lease = {
    namespace: starterEnv.STEWARD_LEASE_NAMESPACE ?? first.namespace,
    name: starterEnv.STEWARD_LEASE_NAME ?? DEFAULT_LEASE.name,
  };
  await step(report, `RBAC of ServiceAccount ${first.namespace}/${first.name} in force`, () =>
    rbacInForce(admin, first, lease),
  );

  const identities = join(info.stateDir, 'steward');
  mkdirSync(identities, { recursive: true });
  const prepare = async (role: Role, index: number) => {
    const { name, serviceAccount, env } = pod(role, index);
    const credentials = async (): Promise<Record<string, string>> => {
      if (!inCluster) {
        const kubeconfig = join(identities, `${name}.kubeconfig`);
        await serviceAccountKubeconfig(admin, serviceAccount.namespace, serviceAccount.name, kubeconfig);
        return { KUBECONFIG: kubeconfig };
      }
      const root = join(identities, name);
      await serviceAccountFiles(admin, serviceAccount.namespace, serviceAccount.name, root);
      const home = join(root, 'home');
      mkdirSync(home, { recursive: true });
      // An empty KUBECONFIG is none (this process's own would be inherited otherwise).
      return { [POD_ROOT_VARIABLE]: root, HOME: home, KUBECONFIG: '' };
    };
    return {
      name,
      env: { ...env, ...(await credentials()) },
      secrets,
      logFile: join(info.stateDir, 'logs', `${name}.log`),
    };
  };

  const coordination = admin.makeApiClient(k8s.CoordinationV1Api);
  const readLease = () =>
    coordination.readNamespacedLease(lease).catch((error: unknown) => {
      if (error instanceof k8s.ApiException && error.code === 404) return undefined;
      throw error;
    });
  const leaseHolder = async () => (await readLease())?.spec?.holderIdentity ?? undefined;

  const started: StewardProcess[] = [];
  const stop = async () => {
    for (const p of [...started].reverse()) await p.stop();
  };
  const all = async <T extends StewardProcess>(
    role: Role,
    count: number,
    start: (index: number) => Promise<T>,
  ): Promise<T[]> => {
    const ok = await startAll(count, start);
    started.push(...ok);
    report(
      `  ${ok.map((p) => `${p.process.name} (pid ${p.process.pid})`).join(', ')} ${role === 'worker' ? 'polling' : `running, Lease ${lease.namespace}/${lease.name}`}`,
    );
    return ok;
  };
  try {
    // As the image does at its build (STEWARD_WORKFLOW_BUNDLE), so that no worker runs webpack at its start.
    const bundle = join(identities, 'workflow-bundle.js');
    await step(report, 'bundle the workflow code once', () => writeWorkflowBundle(bundle));
    const workerProcesses = await step(report, `start ${workers} worker process${workers === 1 ? '' : 'es'}`, () =>
      all('worker', workers, async (index) => {
        const options = await prepare('worker', index);
        return startWorkerProcess({
          ...options,
          env: { STEWARD_WORKFLOW_BUNDLE: bundle, ...options.env },
          readyTimeoutMs: 120_000,
        });
      }),
    );
    // A Lease left by an earlier run names a starter of the same name: only a renewal since now proves one of ours leads.
    const since = Date.now();
    const names = Array.from({ length: starters }, (_, index) => pod('starter', index).name);
    const oursLeads = async () => {
      const spec = (await readLease())?.spec;
      return (
        names.includes(spec?.holderIdentity ?? '') &&
        (spec?.renewTime ? new Date(spec.renewTime).getTime() >= since - 1_000 : false)
      );
    };
    const starterProcesses = await step(report, `start ${starters} starter process${starters === 1 ? '' : 'es'}`, () =>
      // A killed holder's Lease must expire (its duration, 15 s) before one of these may take it.
      all('starter', starters, async (index) => {
        const options = await prepare('starter', index);
        // Each its own health and metrics port, as each worker has: several starters share this machine.
        const http = { STEWARD_STARTER_HTTP_HOST: '127.0.0.1', STEWARD_STARTER_HTTP_PORT: String(await freePort()) };
        return startStewardProcess(
          'starter',
          { ...options, env: { ...options.env, ...http }, readyTimeoutMs: 90_000 },
          oursLeads,
        );
      }),
    );
    return {
      workers: workerProcesses,
      starters: starterProcesses,
      lease,
      settings: { ...configMap?.data, ...stackEnv, ...overrides },
      leaseHolder,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function deploymentOf(manifest: Manifest[], role: Role): k8s.V1Deployment {
  const deployment = manifest.find(
    (o): o is k8s.V1Deployment & Manifest =>
      o.kind === 'Deployment' && (o as k8s.V1Deployment).spec?.template.spec?.containers[0]?.args?.[0] === role,
  );
  if (!deployment) throw new Error(`${MANIFEST_FILE} has no Deployment whose container runs \`steward ${role}\``);
  return deployment;
}

/** A container's own `env`: plain values, and the pod's name where a field reference asks for it. */
function containerEnv(container: k8s.V1Container | undefined, podName: string): Record<string, string> {
  return Object.fromEntries(
    (container?.env ?? []).map((variable) => {
      if (variable.value !== undefined) return [variable.name, variable.value];
      if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.name') return [variable.name, podName];
      throw new Error(
        `${MANIFEST_FILE}: ${variable.name} of container ${container?.name} comes from something the embedded stack cannot give (only values and metadata.name)`,
      );
    }),
  );
}

/** Bindings reach the authorizer's cache asynchronously: a process started before would meet 403 first. */
async function rbacInForce(
  admin: k8s.KubeConfig,
  account: { namespace: string; name: string },
  lease: { namespace: string; name: string },
): Promise<void> {
  const authorization = admin.makeApiClient(k8s.AuthorizationV1Api);
  const user = `system:serviceaccount:${account.namespace}:${account.name}`;
  const checks: k8s.V1ResourceAttributes[] = [
    { group: 'midonet.org', resource: 'translations', verb: 'watch' },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', ...lease },
  ];
  for (const resourceAttributes of checks) {
    await waitUntil(
      `${user} may ${resourceAttributes.verb} ${resourceAttributes.resource}`,
      async () => {
        const review = await authorization.createSubjectAccessReview({
          body: { spec: { user, groups: ['system:serviceaccounts'], resourceAttributes } },
        });
        return review.status?.allowed ?? false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
  }
}
