import { temporal } from '@temporalio/proto';
import { peerPodTaskQueue } from '../model/naming';
import type { TemporalConfig } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';

/**
 * Who polls Steward's task queues (its own and the peer pods'), workflow and activity alike, as Temporal's
 * DescribeTaskQueue lists them: what `steward uninstall` checks before it undoes anything, and what `steward version`
 * reports of the workers' builds.
 */

/** A poller of one of Steward's task queues. */
export interface Poller {
  taskQueue: string;
  type: 'workflow' | 'activity';
  identity: string;
  lastAccessMs: number;
  /** The build ID its workflow code is versioned by, when it reports one. */
  buildId?: string;
}

/**
 * Temporal lists a poller for minutes after its last poll, and a live worker's long poll is renewed at least every
 * 70 s (the SDK's poll timeout): one seen within 90 s may still be running.
 */
export const POLLER_WINDOW_MS = 90_000;

const POLLER_TYPES = [
  ['workflow', temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW],
  ['activity', temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY],
] as const;

/** The task queues Steward's workers poll. */
export const stewardTaskQueues = (config: TemporalConfig) => [config.taskQueue, peerPodTaskQueue(config.taskQueue)];

export async function pollersOf(config: TemporalConfig): Promise<Poller[]> {
  const client = await connectClient(config);
  try {
    const asked = stewardTaskQueues(config).flatMap((name) =>
      POLLER_TYPES.map(async ([type, taskQueueType]) => {
        const { pollers } = await client.workflowService.describeTaskQueue({
          namespace: config.namespace,
          taskQueue: { name },
          taskQueueType,
        });
        return (pollers ?? []).map((p) => {
          const buildId = p.deploymentOptions?.buildId || p.workerVersionCapabilities?.buildId;
          return {
            taskQueue: name,
            type,
            identity: p.identity ?? '?',
            lastAccessMs:
              Number(p.lastAccessTime?.seconds ?? 0) * 1000 + Math.floor((p.lastAccessTime?.nanos ?? 0) / 1e6),
            ...(buildId ? { buildId } : {}),
          };
        });
      }),
    );
    return (await Promise.all(asked)).flat();
  } finally {
    await client.connection.close();
  }
}
