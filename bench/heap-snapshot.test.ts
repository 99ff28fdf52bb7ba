import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { dominators, readHeapSnapshot, summarize, type HeapGraph } from './heap-snapshot';

/** A graph from edge lists: node i's edges are `edges[i]`, each `[target, type]`. */
function graph(sizes: number[], edges: [number, string][][]): HeapGraph {
  const flat = edges.flat();
  const first = [0];
  for (const list of edges) first.push(first.at(-1)! + list.length);
  return {
    nodeCount: sizes.length,
    type: () => 'object',
    name: (n) => `N${n}`,
    selfSize: (n) => sizes[n]!,
    firstEdge: (n) => first[n]!,
    edgeType: (e) => flat[e]![1],
    edgeName: (e) => `e${e}`,
    edgeTarget: (e) => flat[e]![0],
  };
}

describe('a heap snapshot read without DevTools', () => {
  it('gives each node what only it holds: a node reached two ways is held by their common dominator', () => {
    // 0 → 1 → 3, 0 → 2 → 3, 3 → 4; 2 → 5 weakly, and only 2 reaches 5.
    const g = graph(
      [0, 10, 20, 30, 40, 50],
      [
        [
          [1, 'property'],
          [2, 'property'],
        ],
        [[3, 'property']],
        [
          [3, 'property'],
          [5, 'weak'],
        ],
        [[4, 'element']],
        [],
        [],
      ],
    );
    const { idom, retained } = dominators(g);
    expect([...idom]).toEqual([0, 0, 0, 0, 3, -1]);
    expect([...retained]).toEqual([100, 10, 20, 70, 40, 0]);
  });

  it('finds what a live process holds, by constructor and by holder, in its real snapshot', () => {
    class HeldByTheTest {
      constructor(readonly payload: string) {}
    }
    (globalThis as { heldByTheTest?: unknown }).heldByTheTest = new Map(
      Array.from({ length: 20_000 }, (_, i) => [i, new HeldByTheTest(`payload ${i} `.repeat(8))]),
    );
    const dir = mkdtempSync(join(tmpdir(), 'heap-'));
    try {
      const summary = summarize(readHeapSnapshot(writeHeapSnapshot(join(dir, 'test.heapsnapshot'))));
      const ours = summary.byConstructor.find((c) => c.constructor === 'HeldByTheTest');
      expect(ours?.count).toBe(20_000);
      // The Map, its entries and their strings (about 100 bytes each): several MB, held through the global's property
      // (the Map's table is the holder: the Map holds nothing else).
      const holder = summary.holders.find((h) => h.path.includes('.heldByTheTest › Map.table'));
      expect(holder).toBeDefined();
      expect(holder!.retainedBytes).toBeGreaterThan(20_000 * 100);
      expect(holder!.retainedBytes).toBeLessThan(summary.totalBytes);
    } finally {
      delete (globalThis as { heldByTheTest?: unknown }).heldByTheTest;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
