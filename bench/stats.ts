// The summaries the benchmarks take of a set of measurements.

/** The value at quantile `q` of `sorted` (nearest rank); 0 for none. */
export const percentile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;

/** The median of `values` (the mean of the middle two for an even count); undefined for none. */
export function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Nearest-rank quantiles `qs` of each group's values, the groups in the order first seen: where a distribution's tail
 * comes from (a kind of change, a window of time).
 */
export function quantilesBy(
  values: { group: string; value: number }[],
  qs: number[],
): { group: string; count: number; quantiles: number[] }[] {
  const groups = new Map<string, number[]>();
  for (const { group, value } of values) (groups.get(group) ?? groups.set(group, []).get(group)!).push(value);
  return [...groups].map(([group, members]) => {
    const sorted = members.sort((a, b) => a - b);
    return { group, count: sorted.length, quantiles: qs.map((q) => percentile(sorted, q)) };
  });
}
