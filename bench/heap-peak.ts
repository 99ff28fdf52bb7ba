// What holds a worker's memory at a scenario's peak (`npm run bench -- burst --heap-snapshot`): each worker process
// writes a heap snapshot of every thread (SIGUSR2, STEWARD_HEAP_SNAPSHOT_DIR), and the report puts its RSS beside what
// its JavaScript heaps hold and who holds it. The snapshots pause the worker: timings of such a run are not comparable.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HeapSnapshotSet } from '../platform/heap-snapshots';
import { readHeapSnapshot, summarize, summaryTables } from './heap-snapshot';
import { residentBytes } from './measure';
import { markdownTable } from './report';
import { waitFor } from '../test/support';

export interface WorkerHeapAtPeak {
  pid: number;
  /** After the snapshots (the RSS before them is the manifest's, read by the worker at the signal). */
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
    process.kill(pid, 'SIGUSR2');
    const manifest = await waitFor(
      `worker ${pid}: heap snapshots in ${dir}`,
      () => manifests(dir, pid).find((f) => !before.has(f)),
      15 * 60_000,
      500,
    );
    const set = JSON.parse(readFileSync(join(dir, manifest), 'utf8')) as HeapSnapshotSet;
    peaks.push({ pid, rssAfterMb: residentBytes(pid) / 2 ** 20, set });
  }
  return peaks;
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/**
 * The report's section: per worker, its RSS taken apart (each thread's heap: live objects, garbage not yet collected
 * and free pages; memory JavaScript objects hold outside the heaps; the rest, native: Temporal's core, the allocator,
 * code), then each thread's holders.
 */
export function heapSection(peaks: WorkerHeapAtPeak[]): string[] {
  return peaks.flatMap(({ pid, rssAfterMb, set }, i) => {
    const threads = set.threads.map((t) => ({ ...t, summary: summarize(readHeapSnapshot(t.file), { top: 15 }) }));
    const heapsTotal = threads.reduce((sum, t) => sum + t.heap.totalBytes, 0);
    const native = set.memory.rss - heapsTotal - set.memory.external;
    return [
      `## Worker ${i + 1} (pid ${pid}) at the peak: what holds its memory`,
      '',
      ...markdownTable(
        ['part of the RSS', 'MB', 'of which live objects (snapshot) MB'],
        [
          ...threads.map((t) => [
            `heap of the ${t.thread} thread (used ${mb(t.heap.usedBytes)} MB)`,
            mb(t.heap.totalBytes),
            mb(t.summary.totalBytes),
          ]),
          ['held outside the heaps by JavaScript objects (buffers; `external`)', mb(set.memory.external), '—'],
          ['the rest: native (Temporal core, allocator arenas, code, stacks)', mb(native), '—'],
          ['RSS when signalled', mb(set.memory.rss), '—'],
        ],
      ),
      '',
      `- RSS ${rssAfterMb.toFixed(0)} MB after the snapshots (writing one takes memory of its own).`,
      `- Files: ${threads.map((t) => t.file).join(', ')} (\`node --import tsx bench/heap-snapshot.ts <file>\`).`,
      '',
      ...threads.flatMap((t) => summaryTables(`${t.thread} thread`, t.summary).split('\n')),
    ];
  });
}
