import type { Client } from '@temporalio/client';
import type { Command } from 'commander';
import { peerPodTaskQueue } from '../model/naming';
import { loadTemporalConfig, temporalSettings } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';
import { addSettingFlags, type Flags } from '../platform/settings';
import { stewardVersion } from '../platform/version';
import { age, listing, serialize, terminalOf, type OutputFormat } from './output';

/**
 * `steward version`, as `kubectl version` has it: this command line's version, then the build IDs of the workers
 * Temporal saw polling Steward's task queues (every worker reports the build ID its workflow code is versioned by).
 */

/** One poller as Temporal reports it: its identity, build ID and last poll. */
export interface Poller {
  identity: string;
  buildId?: string;
  lastSeen?: Date;
}

/** The workers of one build on one task queue. */
export interface WorkerBuild {
  taskQueue: string;
  buildId: string;
  /**
   * Distinct worker identities that polled within LIVE_MS: Temporal lists a stopped worker's pollers for some
   * minutes, and a live one polls again at least every minute or so (a long poll).
   */
  workers: number;
  lastSeen?: string;
}

export const LIVE_MS = 2 * 60_000;

/** Pollers of workflow and activity tasks per task queue, grouped by build; the newest last poll of each. */
export function workerBuilds(pollers: ReadonlyMap<string, readonly Poller[]>, now = new Date()): WorkerBuild[] {
  const builds: WorkerBuild[] = [];
  for (const [taskQueue, seen] of pollers) {
    const byBuild = new Map<string, { identities: Set<string>; lastSeen?: Date }>();
    for (const { identity, buildId = '(none)', lastSeen } of seen) {
      const build = byBuild.get(buildId) ?? { identities: new Set<string>() };
      if (lastSeen && now.getTime() - lastSeen.getTime() <= LIVE_MS) build.identities.add(identity);
      if (lastSeen && (!build.lastSeen || lastSeen > build.lastSeen)) build.lastSeen = lastSeen;
      byBuild.set(buildId, build);
    }
    for (const [buildId, { identities, lastSeen }] of [...byBuild].sort(([a], [b]) => a.localeCompare(b)))
      builds.push({
        taskQueue,
        buildId,
        workers: identities.size,
        ...(lastSeen ? { lastSeen: lastSeen.toISOString() } : {}),
      });
  }
  return builds;
}

const toDate = (time: { seconds?: { toString(): string } | null; nanos?: number | null } | null | undefined) =>
  time?.seconds ? new Date(Number(time.seconds.toString()) * 1000 + Math.floor((time.nanos ?? 0) / 1e6)) : undefined;

/** Who polls each task queue, for workflow and for activity tasks. */
async function pollersOf(client: Client, namespace: string, taskQueues: string[]): Promise<Map<string, Poller[]>> {
  const pollers = new Map<string, Poller[]>();
  for (const name of taskQueues) {
    const seen: Poller[] = [];
    for (const taskQueueType of [1, 2]) {
      const answer = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name }, taskQueueType });
      for (const p of answer.pollers ?? [])
        seen.push({
          identity: p.identity ?? '',
          buildId: p.deploymentOptions?.buildId || p.workerVersionCapabilities?.buildId || undefined,
          lastSeen: toDate(p.lastAccessTime),
        });
    }
    pollers.set(name, seen);
  }
  return pollers;
}

const OUTPUTS: OutputFormat[] = ['json', 'yaml'];

export function registerVersionCommand(program: Command): void {
  const command = program
    .command('version')
    .description("this command line's version and the build IDs of the workers polling Steward's task queues")
    .option('--client', "this command line's version only: Temporal is not asked")
    .option('-o, --output <format>', `${OUTPUTS.join(' or ')}`);
  addSettingFlags(command, temporalSettings).action(async (options: Flags & { client?: boolean; output?: string }) => {
    const format = options.output as OutputFormat | undefined;
    if (format !== undefined && !OUTPUTS.includes(format))
      throw new Error(`-o ${format}: must be ${OUTPUTS.join(' or ')}`);
    const client = { version: stewardVersion() };
    if (options.client) {
      process.stdout.write(serialize({ client }, format) ?? `Client Version: ${client.version}\n`);
      return;
    }
    const temporal = loadTemporalConfig(options);
    const taskQueues = [temporal.taskQueue, peerPodTaskQueue(temporal.taskQueue)];
    if (!format) process.stdout.write(`Client Version: ${client.version}\n`);
    const connected = await connectClient(temporal);
    let workers: WorkerBuild[];
    try {
      workers = workerBuilds(await pollersOf(connected, temporal.namespace, taskQueues));
    } finally {
      await connected.connection.close();
    }
    const structured = serialize({ client, workers }, format);
    if (structured) process.stdout.write(structured);
    else if (!workers.length) process.stdout.write(`No worker polls ${taskQueues.join(' or ')}.\n`);
    else
      process.stdout.write(
        listing(
          ['TASK QUEUE', 'BUILD ID', 'WORKERS', 'LAST SEEN'],
          workers.map((w) => [w.taskQueue, w.buildId, String(w.workers), w.lastSeen ? age(new Date(w.lastSeen)) : '']),
          terminalOf(process.stdout),
        ),
      );
  });
}
