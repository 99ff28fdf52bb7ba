import { afterFailedPush, outcomeOf, progressIn, PUSH_PROGRESS } from './push-progress';
import { identify, type BackendResource, type PushedResource } from './model';

const bridge = (id: string): BackendResource => ({ kind: 'Bridge', parent: '', body: JSON.stringify({ id }) });
const four = ['b1', 'b2', 'b3', 'b4'].map(bridge);
const keys = (...ids: string[]) => ids.map((id) => `Bridge:${id}`);

describe('outcomeOf', () => {
  it('a push that failed itself: before `done` made or found foreign, the one it was writing maybe, the rest untouched', () => {
    expect(outcomeOf(four, { done: 2, foreign: [1], writing: true }, false)).toEqual({
      made: keys('b1'),
      foreign: keys('b2'),
      maybe: keys('b3'),
    });
    // Stopped before it wrote anything (a refusal of the whole Translation): nothing maybe.
    expect(outcomeOf(four, { done: 0, foreign: [], writing: false }, false)).toEqual({
      made: [],
      foreign: [],
      maybe: [],
    });
  });

  it('a push lost with its worker: everything from its last heartbeat on may be in MidoNet (the heartbeat lags)', () => {
    expect(outcomeOf(four, { done: 1, foreign: [], writing: true }, true)).toEqual({
      made: keys('b1'),
      foreign: [],
      maybe: keys('b2', 'b3', 'b4'),
    });
    expect(outcomeOf(four, undefined, true).maybe).toEqual(keys('b1', 'b2', 'b3', 'b4'));
  });

  it('a retry: everything from `done` on may be in MidoNet, whatever this attempt was doing when it failed', () => {
    // Chaos seed 136: the retry failed on a delete before it wrote anything; its first attempt had made b2.
    expect(outcomeOf(four, { done: 1, foreign: [], writing: false, resumed: true }, false)).toEqual({
      made: keys('b1'),
      foreign: [],
      maybe: keys('b2', 'b3', 'b4'),
    });
  });

  it('skips a resource whose body is not JSON (refused, never pushed) without shifting the others', () => {
    const bad = { kind: 'Bridge', parent: '', body: '{' } as BackendResource;
    expect(outcomeOf([bad, ...four], { done: 3, foreign: [2], writing: false }, false)).toEqual({
      made: keys('b1'),
      foreign: keys('b2'),
      maybe: [],
    });
  });
});

describe('progressIn', () => {
  it('finds the progress beside the backend details, and ignores anything malformed', () => {
    const progress = { done: 3, foreign: [1], writing: true };
    expect(progressIn([{ status: 404 }, { [PUSH_PROGRESS]: progress }])).toEqual(progress);
    expect(progressIn([{ [PUSH_PROGRESS]: { done: -1, foreign: [], writing: true } }])).toBeUndefined();
    expect(progressIn([null, 'x', 3])).toBeUndefined();
    expect(progressIn(undefined)).toBeUndefined();
  });
});

describe('afterFailedPush', () => {
  const entry = (r: BackendResource, state: PushedResource['state'], extra: Partial<PushedResource> = {}) => ({
    ...r,
    ...identify(r),
    state,
    ...extra,
  });

  it('records the latest body asked for what the push made, and leaves entries that were not pending as they were', () => {
    const renamed = bridge('b1').body.replace('}', ',"name":"n"}');
    const record = [entry(four[0]!, 'pending', { alsoAsked: [renamed] }), entry(four[1]!, 'synced')];
    expect(afterFailedPush(record, { made: keys('b1', 'b2'), foreign: [], maybe: [] })).toEqual([
      entry(four[0]!, 'unverified', { body: renamed }),
      entry(four[1]!, 'synced'),
    ]);
  });

  it('keeps what an earlier push tried though this one never reached it, and drops what no push tried', () => {
    const record = [entry(four[0]!, 'pending', { tried: true }), entry(four[1]!, 'pending')];
    expect(afterFailedPush(record, { made: [], foreign: [], maybe: [] })).toEqual([record[0]]);
  });
});
