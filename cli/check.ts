import * as k8s from '@kubernetes/client-node';
import type { Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import { kubeconfigFiles, kubeconfigSetting, kubernetesCheck, loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { requireSearchAttributes } from '../platform/search-attributes';
import { addSettingFlags, loadAll, parseSettings, type Flags } from '../platform/settings';
import { loadTemporalConfig, temporalSettings, type TemporalConfig } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';

/**
 * `steward check`: do these settings reach Temporal and the Kubernetes API server? Read as the worker reads them
 * (the same variables, flags and profile), so that the chart's `helm test` Pod, given the worker's ServiceAccount,
 * environment and mounts, answers for the workers. Temporal is reached when the namespace answers and holds
 * Steward's search attributes (what a worker's start waits for); Kubernetes when the API server answers and takes
 * the credentials (a SelfSubjectReview says whose they are).
 */

/** Each probe resolves with a line saying what it reached, or rejects saying what it could not and why. */
export interface CheckProbes {
  temporal: () => Promise<string>;
  kubernetes: () => Promise<string>;
}

/** Both probes side by side: the lines of those reached, and the reasons of those not (empty when all were). */
export async function checkReach(probes: CheckProbes): Promise<{ reached: string[]; failed: string[] }> {
  const results = await Promise.allSettled([probes.temporal(), probes.kubernetes()]);
  return {
    reached: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    failed: results.flatMap((r) =>
      r.status === 'rejected' ? [r.reason instanceof Error ? r.reason.message : String(r.reason)] : [],
    ),
  };
}

export async function reachTemporal(config: TemporalConfig, warn: (text: string) => void): Promise<string> {
  const client = await connectClient(config);
  try {
    await requireSearchAttributes(client.connection as Connection, config.namespace, (reason) =>
      warn(`could not check Steward's search attributes: ${reason}`),
    );
  } finally {
    await client.connection.close();
  }
  return `Temporal at ${config.address} (namespace ${config.namespace}${config.tls ? ', TLS' : ''}): reached`;
}

export async function reachKubernetes(kubeconfig: string | undefined, timeoutMs = 5_000): Promise<string> {
  const kubeConfig = loadKubeConfig(kubeconfig);
  if (!kubeConfig)
    throw new Error('Kubernetes: no cluster (no kubeconfig, ~/.kube/config or in-cluster service account)');
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  await kubernetesCheck(kubeConfig, timeoutMs)();
  const review = await kubeConfig
    .makeApiClient(k8s.AuthenticationV1Api)
    .createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } })
    .catch((error: { code?: number; message?: string }) => {
      throw new Error(
        `Kubernetes API server at ${server} refused the credentials: ${error.code ? `HTTP ${error.code}` : error.message}`,
        { cause: error },
      );
    });
  return `Kubernetes API server at ${server}: reached as ${review.status?.userInfo?.username ?? '(anonymous)'}`;
}

/** The worker's settings that say where Temporal and the API server are. */
const checkSettings = { ...temporalSettings, kubeconfig: kubeconfigSetting };

export function registerCheckCommand(program: Command): void {
  const command = program
    .command('check')
    .description(
      "whether the worker's settings reach Temporal and the Kubernetes API server (the chart's `helm test` runs it)",
    );
  addSettingFlags(command, checkSettings).action(async (options: Flags) => {
    const [temporal, { kubeconfig }] = loadAll<[TemporalConfig, { kubeconfig?: string }]>(
      () => loadTemporalConfig(options),
      () =>
        parseSettings(
          { kubeconfig: kubeconfigSetting },
          z.object({ kubeconfig: kubeconfigFiles.optional() }),
          options,
          process.env,
        ),
    );
    const { reached, failed } = await checkReach({
      temporal: () => reachTemporal(temporal, (text) => process.stderr.write(`warning: check: ${text}\n`)),
      kubernetes: () => reachKubernetes(kubeconfig),
    });
    for (const line of reached) process.stdout.write(`${line}\n`);
    if (failed.length) throw new Error(failed.join('; '));
  });
}
