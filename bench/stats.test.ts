import { percentile, quantilesBy } from './stats';

describe('quantilesBy (the quantiles of each group, to tell where a tail comes from)', () => {
  it("gives each group's nearest-rank quantiles and count, the groups in the order first seen", () => {
    const values = [
      ...[5, 1, 4, 2, 3].map((value) => ({ group: 'delete', value })),
      ...[10, 30, 20].map((value) => ({ group: 'create', value })),
      { group: 'delete', value: 100 },
    ];
    expect(quantilesBy(values, [0.5, 0.99])).toEqual([
      { group: 'delete', count: 6, quantiles: [3, 100] },
      { group: 'create', count: 3, quantiles: [20, 30] },
    ]);
  });

  it('agrees with percentile on one group, and gives nothing for no values', () => {
    const values = Array.from({ length: 200 }, (_, i) => ({ group: 'all', value: (i * 37) % 200 }));
    const sorted = values.map((v) => v.value).sort((a, b) => a - b);
    expect(quantilesBy(values, [0.5, 0.95, 0.99])[0]!.quantiles).toEqual(
      [0.5, 0.95, 0.99].map((q) => percentile(sorted, q)),
    );
    expect(quantilesBy([], [0.5])).toEqual([]);
  });
});
