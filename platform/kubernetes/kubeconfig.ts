// One KubeConfig for the worker and the starter, whose requests share their connections to the API server.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type * as https from 'node:https';
import { Agent, type Dispatcher } from 'undici';
import { z } from 'zod';
import { readableFile, type Setting } from '../settings';

/** How long a kept connection may idle: under the API server's 90 s and a cloud load balancer's 60 s. */
export const KEEP_ALIVE_MS = 30_000;
/** Connections to one API server at most, watches included (a few per process); more requests wait for one. */
export const MAX_CONNECTIONS = 64;

/**
 * client-node 2.0 gives every request a new undici Agent, so every call opened a TLS connection of its own (a new
 * secure context, a handshake, the CA parsed again): a sixth of the worker's CPU in the 200-Pod benchmark; and making
 * and destroying an Agent per call still cost a second of the worker's main thread in the 1,000-Pod burst. This one
 * makes one Agent for a cluster, user and client certificate and gives it to every request, so calls reuse
 * keep-alive connections; it keeps them 30 s idle (undici's default is 4 s, so a burst's connections were dropped
 * and opened again between waves) and opens at most 64. Credentials sent as headers (tokens, exec plugins) are
 * still computed per request, by client-node; a client certificate rotated inside the same file is picked up by a
 * new process.
 */
export class PooledKubeConfig extends k8s.KubeConfig {
  private readonly dispatchers = new Map<string, Promise<Dispatcher | undefined>>();

  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    // client-node's own credentials and TLS options for this request, without the Agent its method would make.
    const options: https.RequestOptions = {};
    await this.applyToHTTPSOptions(options);
    if (options.auth) context.setHeaderParam('Authorization', `Basic ${Buffer.from(options.auth).toString('base64')}`);
    for (const [name, value] of Object.entries(options.headers ?? {})) context.setHeaderParam(name, String(value));
    const user = this.getCurrentUser();
    const key = JSON.stringify([
      this.getCurrentCluster()?.server,
      user?.name,
      user?.certData ?? user?.certFile,
      user?.keyData ?? user?.keyFile,
    ]);
    // Kept as a promise, so that the first requests made at once share one.
    let kept = this.dispatchers.get(key);
    if (!kept) {
      kept = this.dispatcherFor(options, context);
      this.dispatchers.set(key, kept);
    }
    const dispatcher = await kept;
    if (dispatcher) context.setDispatcher(dispatcher);
  }

  /**
   * The Agent for `options`' TLS settings, connections kept; through a proxy, client-node's own (made once); none
   * when client-node would use undici's global one (no TLS options).
   */
  private async dispatcherFor(options: https.RequestOptions, context: k8s.RequestContext) {
    // It reads the TLS fields only (ca, cert, key, rejectUnauthorized, servername, …).
    const made = this.createDispatcherOptions(this.getCurrentCluster(), options as https.AgentOptions);
    if (made.type === 'none') return undefined;
    if (made.type === 'agent')
      return new Agent({ connect: made.connect, keepAliveTimeout: KEEP_ALIVE_MS, connections: MAX_CONNECTIONS });
    const scratch = new k8s.RequestContext(context.getUrl(), context.getHttpMethod());
    await super.applySecurityAuthentication(scratch);
    return scratch.getDispatcher();
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
