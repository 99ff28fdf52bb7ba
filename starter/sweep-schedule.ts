import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import { z } from 'zod';
import { inCluster, SWEEP_SCHEDULE_ID } from '../model/naming';
import type { sweep, SweepInput } from '../workflows/sweep';
import { SWEEP_BACKENDS, type SweepBackend } from '../model/sweep-report';

/**
 * The orphan sweeper's Temporal Schedule (`gc/sweep`): every interval it starts a sweep workflow (`gc/sweep-<time>`),
 * skipping a tick while the previous sweep still runs. Every starter ensures it at start (`steward up` runs one), so
 * changed settings reach the Schedule; a pause set by an operator (`temporal schedule toggle --pause`) is kept.
 */
export interface SweepScheduleOptions {
  intervalMs: number;
  /** The sweep's input; an empty backend list removes the Schedule. */
  input: SweepInput & { backends: SweepBackend[] };
  /** The workers' task queue, where each tick's sweep runs. */
  taskQueue: string;
  /** The cluster's prefix of the Schedule's id and its sweeps' (`inCluster`); none when absent. */
  clusterId?: string;
}

/** `cloud,midonet`, one of them, or `none`. */
export const backendList = z.string().transform((text, ctx) => {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 1 && names[0] === 'none') return [];
  const unknown = names.filter((n) => !(SWEEP_BACKENDS as readonly string[]).includes(n));
  if (unknown.length || names.length === 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must be a comma-separated list of ${SWEEP_BACKENDS.join(', ')}, or none; got "${text}"`,
    });
    return z.NEVER;
  }
  return [...new Set(names)] as SweepBackend[];
});

export type EnsureOutcome = 'created' | 'updated' | 'removed' | 'absent';

/** Creates the Schedule, or brings an existing one to these settings; idempotent, so every starter may call it. */
export async function ensureSweepSchedule(
  client: Client,
  { intervalMs, input, taskQueue, clusterId }: SweepScheduleOptions,
): Promise<EnsureOutcome> {
  const scheduleId = inCluster(SWEEP_SCHEDULE_ID, clusterId);
  const handle = client.schedule.getHandle(scheduleId);
  if (input.backends.length === 0) {
    try {
      await handle.delete();
      return 'removed';
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return 'absent';
      throw error;
    }
  }
  const spec = { intervals: [{ every: intervalMs }] };
  const action: ScheduleOptionsStartWorkflowAction<typeof sweep> = {
    type: 'startWorkflow',
    workflowType: 'sweep',
    workflowId: scheduleId,
    taskQueue,
    args: [input],
    staticSummary: `Orphan sweep of ${input.backends.join(' and ')}${input.dryRun ? ' (dry run)' : ''}`,
  };
  // A missed tick (server or workers down) is not made up: the next one sweeps all the same.
  const policies = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: intervalMs };
  try {
    await client.schedule.create({ scheduleId, spec, action, policies });
    return 'created';
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  await handle.update((previous) => ({ ...previous, spec, action, policies }));
  return 'updated';
}
