import { z } from 'zod';
import { httpSettings, httpShape } from '../platform/http';
import { logLevels, logLevelSetting, type LogLevel } from '../platform/log';
import { parseSettings, readableFile, settingLabel, whole, type Flags, type Setting } from '../platform/settings';
import {
  loadTemporalProfile,
  redactedTemporal,
  temporalConfig,
  temporalSettings,
  temporalShape,
  tlsRules,
  type TemporalConfig,
} from '../platform/temporal-config';

/**
 * The worker process's own settings beside the Temporal ones (the parser is platform/settings.ts). What its
 * activities reach (MidoNet, the cloud, the cluster) is activities/config.ts's; `steward worker` (cli/worker.ts)
 * reads both.
 */

/** V8's heap growing factor at most 4× the live heap, its own largest. */
export const MAX_HEAP_GROWTH_PERCENT = 300;

/** Slots the workflow tasks take, held while their local activities run (SDK default 40; a local server needs few). */
const DEFAULT_WORKFLOW_TASK_SLOTS = 20;

export const workerProcessSettings = {
  ...temporalSettings,
  maxConcurrentWorkflowTasks: {
    env: 'STEWARD_MAX_CONCURRENT_WORKFLOW_TASKS',
    arg: 'n',
    whenUnset: `${DEFAULT_WORKFLOW_TASK_SLOTS}, or the cached workflows if fewer`,
    description: 'workflow task slots, at most the cached workflows (SDK default 40; a local server needs few)',
  },
  maxConcurrentActivities: {
    env: 'STEWARD_MAX_CONCURRENT_ACTIVITIES',
    arg: 'n',
    default: '50',
    description: 'activity slots, sized to what the backends take',
  },
  maxConcurrentLocalActivities: {
    env: 'STEWARD_MAX_CONCURRENT_LOCAL_ACTIVITIES',
    arg: 'n',
    default: '50',
    description: 'local activity slots',
  },
  maxCachedWorkflows: {
    env: 'STEWARD_MAX_CACHED_WORKFLOWS',
    arg: 'n',
    default: '100',
    description:
      'sticky cache size: some 110 KB each with the modules preloaded (measured), keeps memory flat (SDK default grows with the heap)',
  },
  workflowBundle: {
    env: 'STEWARD_WORKFLOW_BUNDLE',
    arg: 'file',
    description:
      'the workflow code as `steward bundle` wrote it from these same sources; the worker then skips bundling at start (its CPU and memory)',
  },
  buildId: {
    env: 'STEWARD_BUILD_ID',
    arg: 'id',
    description:
      "the build ID the worker reports to Temporal (each workflow task's completion, the task queue's pollers) and in steward_worker_build_info; default steward@<version>+<hash of the workflow code>, e.g. set the image tag",
  },
  midonetActivitiesPerSecond: {
    env: 'STEWARD_MIDONET_ACTIVITIES_PER_SECOND',
    arg: 'n',
    description:
      "cap on MidoNet activities started per second, across every worker (Temporal's maxTaskQueueActivitiesPerSecond on the task queue, where MidoNet's are the only regular activities)",
  },
  heapGrowthPercent: {
    env: 'STEWARD_HEAP_GROWTH_PERCENT',
    arg: 'percent',
    default: '50',
    description:
      "how far each thread's heap may grow past what it held alive at its last full collection before the next (V8's --heap-growing-percent); 0: V8's own, up to 300 (4×) on a machine with memory to spare",
  },
  heapSnapshotDir: {
    env: 'STEWARD_HEAP_SNAPSHOT_DIR',
    arg: 'dir',
    description:
      "on SIGUSR2, a heap snapshot of every thread (the workflow thread's too) into this directory, to see what holds the memory; the process pauses while it writes",
  },
  ...httpSettings('STEWARD', 9464),
  logLevel: logLevelSetting,
} satisfies Record<string, Setting>;

export interface WorkerProcessConfig {
  temporal: TemporalConfig;
  concurrency: {
    maxConcurrentWorkflowTaskExecutions: number;
    maxConcurrentActivityTaskExecutions: number;
    maxConcurrentLocalActivityExecutions: number;
    maxCachedWorkflows: number;
  };
  rateLimits: { midonetActivitiesPerSecond?: number };
  /** A prebuilt workflow bundle; absent: the workflow code is bundled at start. */
  workflowBundle?: string;
  /** Absent: `steward@<version>+<hash of the workflow code>` (worker/build-id.ts). */
  buildId?: string;
  /** V8's heap growing factor, in percent over the live heap; 0: V8's own. */
  heapGrowthPercent: number;
  /** Where SIGUSR2 writes every thread's heap snapshot; absent: the signal is not handled. */
  heapSnapshotDir?: string;
  http: { host: string; port: number };
  logLevel: LogLevel;
}

const workerShape = {
  ...temporalShape,
  // The SDK needs two slots, and with a cache two cached workflows: one sticky and one normal poller.
  maxConcurrentWorkflowTasks: whole(2).optional(),
  maxConcurrentActivities: whole(1),
  maxConcurrentLocalActivities: whole(1),
  maxCachedWorkflows: whole(0).refine((n) => n !== 1, 'must be 0 (no cache) or at least 2'),
  workflowBundle: readableFile.optional(),
  // Temporal's limit for a build ID.
  buildId: z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters').optional(),
  midonetActivitiesPerSecond: z
    .string()
    .transform(Number)
    .pipe(z.number({ error: 'must be a number' }).positive('must be more than 0'))
    .optional(),
  heapGrowthPercent: whole(0, MAX_HEAP_GROWTH_PERCENT),
  heapSnapshotDir: z.string().min(1, 'must not be empty').optional(),
  ...httpShape,
  logLevel: z.enum(logLevels, { error: `must be one of ${logLevels.join(', ')}` }),
};

/** The SDK lowers slots that outnumber the cache to its size without a word: given so, they are refused here. */
function slotRules(v: { maxConcurrentWorkflowTasks?: number; maxCachedWorkflows: number }, ctx: z.RefinementCtx) {
  const slots = v.maxConcurrentWorkflowTasks;
  if (slots === undefined || v.maxCachedWorkflows === 0 || slots <= v.maxCachedWorkflows) return;
  const cache = settingLabel('maxCachedWorkflows', workerProcessSettings.maxCachedWorkflows);
  const message = `must be at most ${cache} (${v.maxCachedWorkflows}): each task's workflow is held in that cache`;
  ctx.addIssue({ code: 'custom', path: ['maxConcurrentWorkflowTasks'], message });
}

export function loadWorkerProcessConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): WorkerProcessConfig {
  const profile = loadTemporalProfile(flags, env);
  const schema = z.object(workerShape).superRefine(tlsRules(profile)).superRefine(slotRules);
  const v = parseSettings(workerProcessSettings, schema, flags, env, profile.layer);
  return {
    temporal: temporalConfig(v, profile),
    concurrency: {
      maxConcurrentWorkflowTaskExecutions:
        v.maxConcurrentWorkflowTasks ??
        Math.min(DEFAULT_WORKFLOW_TASK_SLOTS, v.maxCachedWorkflows || DEFAULT_WORKFLOW_TASK_SLOTS),
      maxConcurrentActivityTaskExecutions: v.maxConcurrentActivities,
      maxConcurrentLocalActivityExecutions: v.maxConcurrentLocalActivities,
      maxCachedWorkflows: v.maxCachedWorkflows,
    },
    rateLimits: { midonetActivitiesPerSecond: v.midonetActivitiesPerSecond },
    workflowBundle: v.workflowBundle,
    ...(v.buildId ? { buildId: v.buildId } : {}),
    heapGrowthPercent: v.heapGrowthPercent,
    ...(v.heapSnapshotDir ? { heapSnapshotDir: v.heapSnapshotDir } : {}),
    http: { host: v.httpHost, port: v.httpPort },
    logLevel: v.logLevel,
  };
}

/**
 * The configuration as it may be logged: its own fields alone (the command line may hand the worker a configuration
 * with more in it, e.g. the activities' credentials), and Temporal's secrets never reach a log line.
 */
export function redactedProcess({
  temporal,
  concurrency,
  rateLimits,
  workflowBundle,
  buildId,
  heapGrowthPercent,
  http,
  logLevel,
}: WorkerProcessConfig): WorkerProcessConfig {
  return {
    temporal: redactedTemporal(temporal),
    concurrency,
    rateLimits,
    workflowBundle,
    ...(buildId ? { buildId } : {}),
    heapGrowthPercent,
    http,
    logLevel,
  };
}
