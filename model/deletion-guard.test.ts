import {
  DEFAULT_WAVE,
  GO_AHEAD_ANNOTATION,
  guardState,
  HOLD_ANNOTATION,
  heldMessage,
  waveOf,
  waveSettingsSchema,
} from './deletion-guard';

const at = (s: number) => Date.parse('2025-01-01T00:00:00Z') + s * 1000;
const wave = (deletions: number[], total: number, now: number, after?: number) =>
  waveOf({ deletions, total, now, ...(after !== undefined ? { after } : {}) }, DEFAULT_WAVE);
const times = (n: number, from: number) => Array.from({ length: n }, (_, i) => at(from + i));

describe('a wave of deletions', () => {
  it.each([
    ['a Pod deleted now and then (3 of 40) does not trip it', times(3, 0), 40, at(5), false],
    ['a whole namespace of 30 Pods of 40 Translations trips it', times(30, 0), 40, at(30), true],
    ['half exactly is not more than half', times(20, 0), 40, at(20), false],
    ['9 of 12 is most, but fewer than the 10 it takes', times(9, 0), 12, at(9), false],
    [
      'the same deletions spread over more than the window do not',
      times(30, 0).map((t, i) => t + i * 3000),
      40,
      at(130),
      false,
    ],
    ['a deletion stamped in the future (clock skew) is not counted yet', times(30, 100), 40, at(10), false],
  ])('%s', (_what, deletions, total, now, tripped) => {
    expect(wave(deletions, total, now).tripped).toBe(tripped);
  });

  it('counts only what came after the last go-ahead: the wave let go does not trip it again, a later one does', () => {
    const first = times(30, 0);
    expect(wave(first, 40, at(40), at(35)).tripped).toBe(false);
    expect(wave([...first, ...times(21, 36)], 40, at(57), at(35))).toEqual({ tripped: true, deleting: 21, total: 40 });
  });

  it('settings are checked at the edge, naming the field', () => {
    const result = waveSettingsSchema.safeParse({ share: 0, minDeletions: 10, windowSeconds: 60 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['share']);
  });
});

describe('the guard as the CRD says it', () => {
  const hold = { since: '2025-01-01T00:01:00.000Z', deleting: 30, total: 40, windowSeconds: 60 };
  const goAhead = (since: string) => ({ since, by: 'alice', reason: 'migration', at: '2025-01-01T00:02:00.000Z' });

  it('holds nothing for a CRD at rest, or none at all', () => {
    expect(guardState({})).toEqual({ held: false });
    expect(guardState(undefined)).toEqual({ held: false });
  });

  it('holds while the CRD is being deleted, until a go-ahead for that deletion', () => {
    const deleting = { deletionTimestamp: new Date('2025-01-01T00:03:00Z') };
    const state = guardState(deleting);
    expect(state).toMatchObject({ held: true, trip: { cause: 'CrdDeleted', since: '2025-01-01T00:03:00.000Z' } });
    expect(heldMessage(state.trip!)).toContain('translations.midonet.org is being deleted');
    const older = { [GO_AHEAD_ANNOTATION]: JSON.stringify(goAhead(hold.since)) };
    expect(guardState({ ...deleting, annotations: older }).held).toBe(true);
    const given = { [GO_AHEAD_ANNOTATION]: JSON.stringify(goAhead('2025-01-01T00:03:00.000Z')) };
    expect(guardState({ ...deleting, annotations: given }).held).toBe(false);
  });

  it('holds for a wave the starter recorded, until a go-ahead for that wave', () => {
    const annotations = { [HOLD_ANNOTATION]: JSON.stringify(hold) };
    expect(guardState({ annotations })).toMatchObject({ held: true, trip: { cause: 'WaveOfDeletions', deleting: 30 } });
    const confirmed = { ...annotations, [GO_AHEAD_ANNOTATION]: JSON.stringify(goAhead(hold.since)) };
    expect(guardState({ annotations: confirmed })).toMatchObject({ held: false, goAhead: { by: 'alice' } });
  });

  it('holds on a hold that does not read: a broken annotation never lets deletions go', () => {
    const state = guardState({ annotations: { [HOLD_ANNOTATION]: '{"since": 3' } });
    expect(state).toMatchObject({ held: true, trip: { cause: 'Unreadable' } });
  });
});
