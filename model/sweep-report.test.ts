import { renderDetails, reportRows, type SweepReport } from './sweep-report';

const report = (dryRun: boolean, orphans: number): SweepReport => ({
  dryRun,
  graceMs: 600_000,
  backends: [
    {
      backend: 'cloud',
      scope: "VMs with Steward's marker",
      outcome: dryRun ? 'dryRun' : 'swept',
      counts: { found: 30, candidates: orphans + 1, orphans, deleted: dryRun ? 0 : orphans, kept: 1 },
      orphans: Array.from({ length: orphans }, (_, i) => ({
        kind: 'VM',
        id: `vm-${i}`,
        name: `podvm-${i}`,
        pod: `default/web-${i}`,
        podUid: `uid-${i}`,
      })),
    },
    {
      backend: 'midonet',
      scope: 'MidoNet tenant midonetkube',
      outcome: 'failed',
      counts: { found: 0, candidates: 0, orphans: 0, deleted: 0, kept: 0 },
      orphans: [],
      message: 'MidonetUnavailable: a|b',
    },
  ],
});

describe('the sweep report', () => {
  it('has one row per backend: scope, the five counts, and the outcome with its message', () => {
    expect(reportRows(report(false, 2))).toEqual([
      ["cloud (VMs with Steward's marker)", '30', '3', '2', '2', '1', 'swept'],
      ['midonet (MidoNet tenant midonetkube)', '0', '0', '0', '0', '0', 'failed: MidonetUnavailable: a|b'],
    ]);
  });

  it('renders as current details: the phase, a markdown table with pipes escaped, and the orphans', () => {
    const details = renderDetails(report(false, 1), { phase: 'deleting', total: 1, done: 0 });
    expect(details.split('\n')).toEqual([
      '**Orphan sweep**, grace period 600s: deleting (0/1)',
      '',
      '| backend | found | candidates | orphans | deleted | kept | outcome |',
      '|---|---|---|---|---|---|---|',
      "| cloud (VMs with Steward's marker) | 30 | 2 | 1 | 1 | 1 | swept |",
      '| midonet (MidoNet tenant midonetkube) | 0 | 0 | 0 | 0 | 0 | failed: MidonetUnavailable: a\\|b |',
      '',
      'Orphans (cloud):',
      '- VM `vm-0` podvm-0 (pod default/web-0)',
    ]);
  });

  it('says when it waits, what a dry run would delete, and lists at most 20 orphans per backend', () => {
    const details = renderDetails(report(true, 25), {
      phase: 'waiting',
      total: 600,
      done: 0,
      waitUntil: '2025-01-01T00:10:00.000Z',
    });
    expect(details).toMatch(
      /^\*\*Orphan sweep\*\* \(dry run: nothing is deleted\), grace period 600s: waiting for the grace period to end \(2025-01-01T00:10:00.000Z\)/,
    );
    expect(details).toContain('Would delete (cloud):');
    expect(details.match(/^- VM /gm)).toHaveLength(20);
    expect(details).toContain('- … and 5 more (in the result)');
  });
});
