import { kubeTime, nextStatus, type StatusInput } from './status';

const ok = { status: 'True', reason: 'Pushed', message: 'pushed' } as const;
const down = { status: 'False', reason: 'MidonetUnavailable', message: 'MidoNet answered 503' } as const;
const input = (over: Partial<StatusInput> = {}): StatusInput => ({
  generation: 2,
  childResources: [{ kind: 'Bridge', id: 'b1', state: 'synced' }],
  ready: ok,
  synced: ok,
  ...over,
});
const T0 = '2030-01-01T00:00:00Z';
const T1 = '2030-01-01T01:00:00Z';

describe('nextStatus', () => {
  const first = nextStatus(undefined, input(), T0);

  const cases: { what: string; next: ReturnType<typeof nextStatus>; expected: object }[] = [
    {
      what: 'a first status stamps every transition time now and the generation everywhere',
      next: first,
      expected: {
        observedGeneration: 2,
        childResources: [{ kind: 'Bridge', id: 'b1', state: 'synced', lastTransitionTime: T0, observedGeneration: 2 }],
        conditions: [
          { type: 'Ready', ...ok, lastTransitionTime: T0, observedGeneration: 2 },
          { type: 'Synced', ...ok, lastTransitionTime: T0, observedGeneration: 2 },
        ],
      },
    },
    { what: 'the same status later keeps every time', next: nextStatus(first, input(), T1), expected: first },
    {
      what: 'a changed reason with the same status keeps the condition time (only status transitions count)',
      next: nextStatus(first, input({ ready: { ...ok, reason: 'Refreshed' } }), T1),
      expected: {
        conditions: [
          { type: 'Ready', reason: 'Refreshed', lastTransitionTime: T0 },
          { type: 'Synced', lastTransitionTime: T0 },
        ],
      },
    },
    {
      what: 'a status change moves only that condition time',
      next: nextStatus(first, input({ synced: down }), T1),
      expected: {
        conditions: [
          { type: 'Ready', lastTransitionTime: T0 },
          { type: 'Synced', status: 'False', lastTransitionTime: T1 },
        ],
      },
    },
    {
      what: 'a child whose state changes, or that is new, gets the new time; an unchanged one keeps its time',
      next: nextStatus(
        first,
        input({
          childResources: [
            { kind: 'Bridge', id: 'b1', state: 'synced' },
            { kind: 'Port', id: 'p1', state: 'pending' },
          ],
        }),
        T1,
      ),
      expected: {
        childResources: [
          { id: 'b1', lastTransitionTime: T0 },
          { id: 'p1', lastTransitionTime: T1 },
        ],
      },
    },
    {
      what: 'a time given by the workflow wins',
      next: nextStatus(
        first,
        input({
          childResources: [{ kind: 'Bridge', id: 'b1', state: 'deleted', lastTransitionTime: '2029-12-31T00:00:00Z' }],
        }),
        T1,
      ),
      expected: { childResources: [{ state: 'deleted', lastTransitionTime: '2029-12-31T00:00:00Z' }] },
    },
  ];
  it.each(cases)('$what', ({ next, expected }) => {
    expect(next).toMatchObject(expected);
  });

  it('unverified keeps the record but claims none of it synced any more, from now', () => {
    const next = nextStatus(
      first,
      input({ childResources: undefined, unverified: true, ready: down, synced: down }),
      T1,
    );
    expect(next.childResources).toEqual([
      { kind: 'Bridge', id: 'b1', state: 'unverified', lastTransitionTime: T1, observedGeneration: 2 },
    ]);
    expect(next.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'False'],
      ['Synced', 'False'],
    ]);
  });

  it('writes times with second precision, as the API server gives them back', () => {
    expect(kubeTime(new Date('2030-01-01T00:00:00.123Z'))).toBe('2030-01-01T00:00:00Z');
  });
});
