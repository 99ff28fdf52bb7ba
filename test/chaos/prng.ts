// Seeded choices for the chaos run: the same seed gives the same operations and the same fault schedule. The
// generator is the emulator's own (mulberry32), as its fault injection draws with it.
import { prng } from '../../deploy/local/midonet/faults';

export interface Random {
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A key of `weights` drawn in proportion to its weight. */
  weighted<K extends string>(weights: Record<K, number>): K;
}

export function random(seed: number): Random {
  const next = prng(seed);
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from nothing');
      return items[int(0, items.length - 1)]!;
    },
    weighted: (weights) => {
      const entries = Object.entries(weights) as [keyof typeof weights, number][];
      let r = next() * entries.reduce((sum, [, w]) => sum + w, 0);
      for (const [key, w] of entries) if ((r -= w) < 0) return key;
      return entries[entries.length - 1]![0];
    },
  };
}
