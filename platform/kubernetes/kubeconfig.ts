// One KubeConfig for the worker and the starter, whose requests share their connections to the API server.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { readableFile, type Setting } from '../settings';

/**
 * client-node 2.0 gives every request a new undici Agent, so every call opened a TLS connection of its own (a new
 * secure context, a handshake, the CA parsed again): a sixth of the worker's CPU in the 200-Pod benchmark. This one
 * keeps the first Agent made for a cluster, user and client certificate and gives it to every later request, so
 * calls reuse keep-alive connections. Credentials sent as headers (tokens, exec plugins) are still applied per
 * request; a client certificate rotated inside the same file is picked up by a new process.
 */
export class PooledKubeConfig extends k8s.KubeConfig {
  private readonly dispatchers = new Map<string, Dispatcher>();

  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    await super.applySecurityAuthentication(context);
    const fresh = context.getDispatcher();
    if (!fresh) return;
    const user = this.getCurrentUser();
    const key = JSON.stringify([
      this.getCurrentCluster()?.server,
      user?.name,
      user?.certData ?? user?.certFile,
      user?.keyData ?? user?.keyFile,
    ]);
    const kept = this.dispatchers.get(key);
    if (kept) {
      context.setDispatcher(kept);
      void fresh.close().catch(() => undefined);
    } else this.dispatchers.set(key, fresh);
  }
}

/** `KUBECONFIG`'s form: file names joined by the path delimiter (`:`), empty ones skipped as kubectl does. */
export const kubeconfigFileList = (value: string) => value.split(delimiter).filter(Boolean);

/**
 * Merges kubeconfig files the way kubectl does: the first file that names a cluster, user or context wins it, and
 * the current context is the first file's that has one. client-node's own mergeConfig throws on a repeated name and
 * lets a later file's current context win, so the entries are added here instead.
 */
export function mergeKubeConfigs(target: k8s.KubeConfig, files: string[]): void {
  const [first, ...rest] = files;
  if (!first) return;
  target.loadFromFile(first);
  for (const file of rest) {
    const next = new k8s.KubeConfig();
    next.loadFromFile(file);
    const known = (list: { name: string }[], name: string) => list.some((entry) => entry.name === name);
    for (const cluster of next.clusters) if (!known(target.clusters, cluster.name)) target.addCluster(cluster);
    for (const user of next.users) if (!known(target.users, user.name)) target.addUser(user);
    for (const context of next.contexts) if (!known(target.contexts, context.name)) target.addContext(context);
    if (!target.currentContext && next.currentContext) target.setCurrentContext(next.currentContext);
  }
}

/** Where the kubelet mounts a pod's service account (token, ca.crt, namespace), as client-node reads it. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * The root a pod's files are mounted under when its process runs outside the pod: Telepresence's variable, which
 * client-node's in-cluster configuration takes as the prefix of its fixed paths. Set, and the service account is
 * there, the process is that pod's: in-cluster, with KUBERNETES_SERVICE_HOST/_PORT as the pod has them.
 */
export const POD_ROOT_VARIABLE = 'TELEPRESENCE_ROOT';

/**
 * The kubeconfig `path` names (one file or a `:`-separated list, merged as kubectl merges them), else the service
 * account under the pod's root (POD_ROOT_VARIABLE), else the default places (~/.kube/config, then the in-cluster
 * service account), with `context` as the current context when given; no cluster: undefined.
 */
export function loadKubeConfig(
  path: string | undefined,
  context?: string,
  env: NodeJS.ProcessEnv = process.env,
): k8s.KubeConfig | undefined {
  const kubeConfig = new PooledKubeConfig();
  const podRoot = env[POD_ROOT_VARIABLE];
  if (path) mergeKubeConfigs(kubeConfig, kubeconfigFileList(path));
  else if (podRoot && existsSync(join(podRoot, SERVICE_ACCOUNT_DIR, 'token'))) kubeConfig.loadFromCluster(podRoot);
  else kubeConfig.loadFromDefault();
  if (context) {
    if (!kubeConfig.getContextObject(context))
      throw new Error(
        `no context "${context}" in the kubeconfig (${
          kubeConfig
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    kubeConfig.setCurrentContext(context);
  }
  return kubeConfig.getCurrentCluster() ? kubeConfig : undefined;
}

/** The kubeconfig setting, the same for the worker's activities, the starter and the commands. */
export const kubeconfigSetting = {
  env: 'KUBECONFIG',
  arg: 'files',
  description:
    "kubeconfig of the cluster, or a ':'-separated list merged as kubectl merges it; else the pod's service account under TELEPRESENCE_ROOT when set; else ~/.kube/config, else the in-cluster service account (the API server at KUBERNETES_SERVICE_HOST/_PORT)",
} satisfies Setting;

/** The kubeconfig setting's value: every file of the list readable, each named in the error. */
export const kubeconfigFiles = z
  .string()
  .refine((value) => kubeconfigFileList(value).length > 0, { error: 'names no file' })
  .superRefine((value, ctx) => {
    for (const file of kubeconfigFileList(value)) {
      const checked = readableFile.safeParse(file);
      if (!checked.success) ctx.addIssue({ code: 'custom', message: checked.error.issues[0]?.message ?? file });
    }
  });

/**
 * A readiness check of the cluster: resolves when its API server answers `/version` within `timeoutMs`, else throws
 * saying where it is and why not.
 */
export function kubernetesCheck(kubeConfig: k8s.KubeConfig, timeoutMs = 2_000): () => Promise<void> {
  const api = kubeConfig.makeApiClient(k8s.VersionApi);
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([api.getCode(), late]);
    } catch (error) {
      throw new Error(
        `Kubernetes API server at ${server} is not reachable: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  };
}
