// One KubeConfig for the worker and the starter, whose requests share their connections to the API server.
import * as k8s from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import type { Setting } from '../settings';

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

/** The kubeconfig at `path`, else the default places (~/.kube/config, then the in-cluster service account); none: undefined. */
export function loadKubeConfig(path: string | undefined): k8s.KubeConfig | undefined {
  const kubeConfig = new PooledKubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return kubeConfig.getCurrentCluster() ? kubeConfig : undefined;
}

/** The kubeconfig setting, the same for the worker's activities, the starter and the commands. */
export const kubeconfigSetting = {
  env: 'KUBECONFIG',
  arg: 'file',
  description: 'kubeconfig of the cluster; else ~/.kube/config, else the in-cluster service account',
} satisfies Setting;
