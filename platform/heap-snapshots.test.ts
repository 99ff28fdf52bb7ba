import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { readHeapSnapshot, summarize } from '../bench/heap-snapshot';
import { writeHeapSnapshots, type HeapSnapshotSet } from './heap-snapshots';

describe('heap snapshots of every thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heap-snapshots-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the main thread's and a worker thread's, each holding what that thread holds, and a manifest of them", async () => {
    // A thread holding 30,000 objects of a class only it has, as the SDK's workflow thread holds its cache.
    const thread = new Worker(
      `class OnlyInTheThread { constructor(i) { this.i = i; } }
       globalThis.held = Array.from({ length: 30000 }, (_, i) => new OnlyInTheThread(i));
       require('node:worker_threads').parentPort.postMessage('holding');
       setInterval(() => {}, 1000);`,
      { eval: true, name: 'holder' },
    );
    try {
      await new Promise((resolve) => thread.once('message', resolve));
      const set = await writeHeapSnapshots(dir);
      expect(set.threads[0]!.thread).toBe('main');
      expect(set.threads.length).toBeGreaterThanOrEqual(2);
      const manifest = JSON.parse(
        readFileSync(join(dir, `heap-${process.pid}-${set.at.replaceAll(':', '')}.json`), 'utf8'),
      ) as HeapSnapshotSet;
      expect(manifest).toEqual(set);
      // The sizes taken before the snapshots: a heap holds what it uses, and the process at least its heaps.
      for (const { heap } of set.threads) expect(heap.totalBytes).toBeGreaterThanOrEqual(heap.usedBytes);
      expect(set.threads.every(({ heap }) => heap.usedBytes > 1_000_000)).toBe(true);
      expect(set.memory.rss).toBeGreaterThan(set.threads.reduce((sum, { heap }) => sum + heap.usedBytes, 0));
      const counts = set.threads.map(
        ({ file }) =>
          summarize(readHeapSnapshot(file), { top: 1000 }).byConstructor.find(
            (c) => c.constructor === 'OnlyInTheThread',
          )?.count ?? 0,
      );
      expect(counts[0]).toBe(0);
      expect(counts.filter((n) => n === 30_000)).toHaveLength(1);
      expect(set.threads.find((_, i) => counts[i] === 30_000)!.thread).toContain('holder');
      // Again, as a second signal would: every thread answers a new session as it did the first.
      const again = await writeHeapSnapshots(dir);
      expect(again.threads.map((t) => t.thread)).toEqual(set.threads.map((t) => t.thread));
    } finally {
      await thread.terminate();
    }
  });
});
