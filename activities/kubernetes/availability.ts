import * as k8s from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { statusOf } from './errors';
import type { KubernetesActivities } from './index';

/** The API server's answers that are a proxy's or its own "not now": a load balancer in front, or still starting. */
const NOT_ANSWERING = new Set([502, 503, 504]);

/**
 * Whether a failed Kubernetes call had the API server answer: any status but 502–504 is an answer (a 404, a 409, a
 * 500 all are); no status (refused, reset, timed out) is not.
 */
export function apiServerAnswered(error: unknown): boolean {
  if (error instanceof ApplicationFailure && error.type !== 'KubernetesUnavailable') return true;
  const status =
    error instanceof ApplicationFailure
      ? (error.details?.[0] as { status?: number } | undefined)?.status
      : statusOf(error);
  return status !== undefined && !NOT_ANSWERING.has(status);
}

/**
 * The Kubernetes activities, telling `observe` whether the API server answered each call; and `probe`, a harmless
 * call (`GET /version`) that tells it too. The object and peer-pod activities call the API server through these.
 */
export function reportingKubernetes(
  activities: KubernetesActivities,
  kubeConfig: k8s.KubeConfig,
  observe: (answered: boolean) => void,
): { activities: KubernetesActivities; probe: () => Promise<void> } {
  const reporting =
    <A extends unknown[], O>(call: (...args: A) => Promise<O>) =>
    async (...args: A): Promise<O> => {
      try {
        const result = await call(...args);
        observe(true);
        return result;
      } catch (error) {
        observe(apiServerAnswered(error));
        throw error;
      }
    };
  const version = kubeConfig.makeApiClient(k8s.VersionApi);
  const wrapped = Object.fromEntries(
    Object.entries(activities).map(([name, call]) => [
      name,
      reporting(call as (...args: unknown[]) => Promise<unknown>),
    ]),
  ) as unknown as KubernetesActivities;
  return { activities: wrapped, probe: reporting(async () => void (await version.getCode())) };
}
