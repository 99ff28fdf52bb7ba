import type { Command } from 'commander';
import { loadTemporalConfig, temporalSettings } from '../platform/temporal-config';
import { addSettingFlags, type Flags } from '../platform/settings';
import { stewardVersion } from '../platform/version';
import { addNoHeaders, age, listing, outputOf, outputOption, serialize, terminalOf } from './output';
import { pollersOf, POLLER_WINDOW_MS, stewardTaskQueues, type Poller } from './pollers';

/**
 * `steward version`, as `kubectl version` has it: this command line's version, then the build IDs of the workers
 * Temporal saw polling Steward's task queues (every worker reports the build ID its workflow code is versioned by).
 */

/** The workers of one build on one task queue. */
export interface WorkerBuild {
  taskQueue: string;
  buildId: string;
  /** Distinct worker identities that polled within POLLER_WINDOW_MS: Temporal lists stopped ones for some minutes. */
  workers: number;
  lastSeen?: string;
}

/** Pollers of workflow and activity tasks per task queue, grouped by build; the newest last poll of each. */
export function workerBuilds(pollers: readonly Poller[], now = Date.now()): WorkerBuild[] {
  const byBuild = new Map<string, { taskQueue: string; buildId: string; identities: Set<string>; lastMs: number }>();
  for (const { taskQueue, identity, buildId = '(none)', lastAccessMs } of pollers) {
    const key = `${taskQueue}\n${buildId}`;
    const build = byBuild.get(key) ?? { taskQueue, buildId, identities: new Set<string>(), lastMs: 0 };
    if (now - lastAccessMs <= POLLER_WINDOW_MS) build.identities.add(identity);
    build.lastMs = Math.max(build.lastMs, lastAccessMs);
    byBuild.set(key, build);
  }
  return [...byBuild.values()]
    .sort((a, b) => a.taskQueue.localeCompare(b.taskQueue) || a.buildId.localeCompare(b.buildId))
    .map(({ taskQueue, buildId, identities, lastMs }) => ({
      taskQueue,
      buildId,
      workers: identities.size,
      ...(lastMs ? { lastSeen: new Date(lastMs).toISOString() } : {}),
    }));
}

export function registerVersionCommand(program: Command): void {
  const command = program
    .command('version')
    .description("this command line's version and the build IDs of the workers polling Steward's task queues")
    .option('--client', "this command line's version only: Temporal is not asked")
    .addOption(outputOption(['json', 'yaml', 'jsonpath']));
  addSettingFlags(addNoHeaders(command), temporalSettings).action(async (options: Flags & { client?: boolean }) => {
    const format = outputOf(options);
    const client = { version: stewardVersion() };
    if (options.client) {
      process.stdout.write(serialize({ client }, format) ?? `Client Version: ${client.version}\n`);
      return;
    }
    const temporal = loadTemporalConfig(options);
    if (!format) process.stdout.write(`Client Version: ${client.version}\n`);
    const workers = workerBuilds(await pollersOf(temporal));
    const structured = serialize({ client, workers }, format);
    if (structured) process.stdout.write(structured);
    else if (!workers.length) process.stdout.write(`No worker polls ${stewardTaskQueues(temporal).join(' or ')}.\n`);
    else
      process.stdout.write(
        listing(
          ['TASK QUEUE', 'BUILD ID', 'WORKERS', 'LAST SEEN'],
          workers.map((w) => [w.taskQueue, w.buildId, String(w.workers), w.lastSeen ? age(new Date(w.lastSeen)) : '']),
          { ...terminalOf(process.stdout), headers: options.headers !== false },
        ),
      );
  });
}
