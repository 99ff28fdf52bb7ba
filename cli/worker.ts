import type { Command } from 'commander';
import type { Logger } from 'pino';
import { cloudSettings } from '../activities/cloud/config';
import { createActivities, type ActivityGroups } from '../activities/compose';
import {
  activitySettings,
  loadActivitiesConfig,
  redactedActivities,
  type ActivitiesConfig,
} from '../activities/config';
import { kubernetesCheck, loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { addSettingFlags, loadAll, type Flags } from '../platform/settings';
import { StoppedWaitingError } from '../platform/temporal-connection';
import { loadWorkerProcessConfig, redactedProcess, startWorker, workerProcessSettings } from '../worker';
import type { RunningWorker, WorkerProcessConfig } from '../worker';

/**
 * `steward worker`: polls Temporal, runs the workflows and activities, serves /healthz, /readyz and /metrics. The
 * command line composes the rooms: the worker process (worker/), the activities its configuration asks for
 * (activities/compose.ts).
 */

/** Every setting of `steward worker` but the cloud's, which it takes too (cloudSettings). */
export const workerSettings = { ...workerProcessSettings, ...activitySettings };

export type WorkerConfig = WorkerProcessConfig & ActivitiesConfig;

export function loadWorkerConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const [process, activities] = loadAll<[WorkerProcessConfig, ActivitiesConfig]>(
    () => loadWorkerProcessConfig(flags, env),
    () => loadActivitiesConfig(flags, env),
  );
  return { ...process, ...activities };
}

/** The configuration as it may be logged: credentials never reach a log line, whatever logger is used. */
export const redacted = (config: WorkerConfig): WorkerConfig => ({
  ...redactedProcess(config),
  ...redactedActivities(config),
});

export interface RunWorkerOptions {
  /** Replace or add groups; the rest are built from the configuration. */
  activities?: ActivityGroups;
  /** The workflow module; defaults to workflows/index.ts, the project's only one. Tests give their own. */
  workflowsPath?: string;
  log?: Logger;
}

export function runWorker(
  config: WorkerConfig,
  { activities, ...options }: RunWorkerOptions = {},
): Promise<RunningWorker> {
  const kubeConfig = loadKubeConfig(config.kubeconfig);
  return startWorker(config, {
    ...options,
    // Its Kubernetes activities need the cluster: a worker that cannot reach it is not ready either.
    checks: kubeConfig ? [kubernetesCheck(kubeConfig)] : [],
    activities: (temporal, log) => {
      log.info({ activities: redactedActivities(config) }, 'activities from the configuration');
      if (config.ignored.length > 0)
        log.warn(
          { ignored: config.ignored, backends: config.backends },
          'settings of a backend STEWARD_BACKENDS leaves out are ignored',
        );
      return createActivities(config, {
        temporal,
        clusterId: config.temporal.clusterId,
        taskQueue: config.temporal.taskQueue,
        log,
        overrides: activities,
      });
    },
  });
}

export function registerWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description('run the worker: poll Temporal, run the workflows and activities, serve /healthz, /readyz, /metrics');
  addSettingFlags(addSettingFlags(command, workerSettings), cloudSettings).action(async (options: Flags) => {
    const running = await runWorker(loadWorkerConfig(options)).catch((error: unknown) => {
      // SIGTERM before Temporal answered: nothing had started, so there is nothing to stop.
      if (error instanceof StoppedWaitingError) return undefined;
      throw error;
    });
    await running?.done;
  });
}
