import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { connectClient } from '../platform/temporal-connection';
import { GLOBAL_MIDONET_WORKFLOW_ID } from '../model/naming';
import type { StarterConfig } from './config';
import { createStarter, type Starter } from './controller';
import { ensureSweepSchedule } from './sweep-schedule';

/**
 * The starter as a process runs it (`steward starter`, `steward up`): the global setup workflow and the sweeper's
 * Schedule ensured, then the controller started, every start on the configured task queue.
 */

/** Starts the global setup workflow unless it runs already: every starter asks, the first one wins. */
async function ensureGlobalSetup(client: Client, { tenant, temporal }: StarterConfig, log: Logger): Promise<void> {
  const handle = await client.workflow.start('globalMidonet', {
    workflowId: GLOBAL_MIDONET_WORKFLOW_ID,
    taskQueue: temporal.taskQueue,
    args: [{ tenant }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: 'MidoNet global setup',
  });
  log.info(
    { workflowId: handle.workflowId, runId: handle.firstExecutionRunId, tenant },
    'global setup workflow running',
  );
}

export interface RunningStarter {
  starter: Starter;
  /** Stops sending (releasing the Lease), then closes the Temporal connection. */
  stop(): Promise<void>;
}

export async function runStarter(config: StarterConfig, log: Logger): Promise<RunningStarter> {
  const kubeConfig = loadKubeConfig(config.kubeconfig);
  if (!kubeConfig)
    throw new Error('no Kubernetes cluster: give --kubeconfig / KUBECONFIG, or run the starter in a cluster');
  const client = await connectClient(config.temporal);
  const { taskQueue } = config.temporal;
  try {
    await ensureGlobalSetup(client, config, log);
    const { intervalMs, graceMs, backends, dryRun } = config.sweep;
    const schedule = await ensureSweepSchedule(client, {
      intervalMs,
      taskQueue,
      input: { graceMs, backends, dryRun, tenant: config.tenant },
    });
    log.info({ schedule, intervalMs, graceMs, backends, dryRun, taskQueue }, 'orphan sweeper Schedule gc/sweep');
    const starter = createStarter({
      kubeConfig,
      temporalClient: client,
      taskQueue,
      namespace: config.watchNamespace,
      identity: config.identity,
      resyncMs: config.resyncMs,
      debounceMs: config.debounceMs,
      lease: config.lease,
      logger: log,
      peerPodRuntimeClasses: config.peerPodRuntimeClasses,
      tenant: config.tenant,
    });
    starter.start();
    return {
      starter,
      stop: async () => {
        await starter.stop();
        await client.connection.close();
      },
    };
  } catch (error) {
    await client.connection.close();
    throw error;
  }
}

/** Resolves with the name of the first SIGINT or SIGTERM. */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
