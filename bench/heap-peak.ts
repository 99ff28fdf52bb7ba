// What holds a worker's memory at a scenario's peak (`npm run bench -- burst --heap-snapshot`): each worker process
// writes a heap snapshot of every thread (SIGUSR2, STEWARD_HEAP_SNAPSHOT_DIR), and the report puts its RSS beside what
// its JavaScript heaps hold and who holds it. The snapshots pause the worker: timings of such a run are not comparable.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HeapSnapshotSet } from '../platform/heap-snapshots';
import { readHeapSnapshot, summarize, summaryTables } from './heap-snapshot';
import { residentBytes } from './measure';
import { waitFor } from '../test/support';

export interface WorkerHeapAtPeak {
  pid: number;
  /** Before the snapshot, and after it (a snapshot collects garbage first: the difference was garbage or free). */
  rssBeforeMb: number;
  rssAfterMb: number;
  set: HeapSnapshotSet;
}

const manifests = (dir: string, pid: number) =>
  existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith(`heap-${pid}-`) && f.endsWith('.json')) : [];

/** Each worker's snapshots, one worker after another (a snapshot of a large heap takes seconds and memory). */
export async function snapshotWorkers(pids: number[], dir: string): Promise<WorkerHeapAtPeak[]> {
  const peaks: WorkerHeapAtPeak[] = [];
  for (const pid of pids) {
    const before = new Set(manifests(dir, pid));
    const rssBeforeMb = residentBytes(pid) / 2 ** 20;
    process.kill(pid, 'SIGUSR2');
    let manifest: string | undefined;
    await waitFor(
      `worker ${pid}: heap snapshots in ${dir}`,
      () => Promise.resolve((manifest = manifests(dir, pid).find((f) => !before.has(f))) !== undefined),
      15 * 60_000,
      500,
    );
    const set = JSON.parse(readFileSync(join(dir, manifest!), 'utf8')) as HeapSnapshotSet;
    peaks.push({ pid, rssBeforeMb, rssAfterMb: residentBytes(pid) / 2 ** 20, set });
  }
  return peaks;
}

/** The report's section: per worker, its RSS against its threads' live heaps, then each thread's holders. */
export function heapSection(peaks: WorkerHeapAtPeak[]): string[] {
  return peaks.flatMap(({ pid, rssBeforeMb, rssAfterMb, set }, i) => {
    const threads = set.threads.map((t) => ({ ...t, summary: summarize(readHeapSnapshot(t.file), { top: 15 }) }));
    const liveMb = threads.reduce((sum, t) => sum + t.summary.totalBytes, 0) / 2 ** 20;
    return [
      `## Worker ${i + 1} (pid ${pid}) at the peak: what holds its memory`,
      '',
      `- RSS ${rssBeforeMb.toFixed(0)} MB before the snapshots, ${rssAfterMb.toFixed(0)} MB after them (a snapshot collects garbage first).`,
      `- Live JavaScript objects ${liveMb.toFixed(0)} MB: ${threads.map((t) => `${t.thread} ${(t.summary.totalBytes / 2 ** 20).toFixed(0)} MB`).join(', ')}; the rest of the RSS is outside the JavaScript heaps' live objects (garbage not yet collected, free heap pages, Temporal's native core, buffers, code).`,
      `- Files: ${threads.map((t) => t.file).join(', ')} (\`node --import tsx bench/heap-snapshot.ts <file>\`).`,
      '',
      ...threads.flatMap((t) => summaryTables(`${t.thread} thread`, t.summary).split('\n')),
    ];
  });
}
