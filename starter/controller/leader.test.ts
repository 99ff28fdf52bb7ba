import * as k8s from '@kubernetes/client-node';
import { createLeaderElector, planLeaseStep, type LeaseApi } from './leader';
import { partialFake, silentLogger } from './testing/fakes';

/** One Lease in memory, with the API server's optimistic concurrency; `down` makes every call fail. */
function leaseStore() {
  const state: { lease?: k8s.V1Lease; version: number; down: boolean } = { version: 0, down: false };
  const fail = (code: number) => Promise.reject(new k8s.ApiException(code, 'fake', {}, {}));
  const api = partialFake<LeaseApi>('CoordinationV1Api', {
    readNamespacedLease: () =>
      state.down ? fail(503) : state.lease ? Promise.resolve(structuredClone(state.lease)) : fail(404),
    createNamespacedLease: ({ body }) => {
      if (state.down) return fail(503);
      if (state.lease) return fail(409);
      state.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++state.version) } };
      return Promise.resolve(state.lease);
    },
    replaceNamespacedLease: ({ body }) => {
      if (state.down) return fail(503);
      if (body.metadata?.resourceVersion !== state.lease?.metadata?.resourceVersion) return fail(409);
      state.lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++state.version) } };
      return Promise.resolve(state.lease);
    },
  });
  return { state, api };
}

describe('leader election', () => {
  const lease = { name: 'steward-starter', namespace: 'kube-system', leaseDurationSeconds: 15, renewSeconds: 5 };
  let clock = 0;
  const now = () => clock;
  const elector = (api: LeaseApi, identity: string) =>
    createLeaderElector({ api, identity, lease, logger: silentLogger, now });
  /** An elector that records every `onChange` as `[leading, continued]`. */
  const recordingElector = (api: LeaseApi, identity: string) => {
    const changes: [boolean, boolean][] = [];
    const recorded = createLeaderElector({
      api,
      identity,
      lease,
      logger: silentLogger,
      now,
      onChange: (...change) => changes.push(change),
    });
    return { elector: recorded, changes };
  };
  beforeEach(() => (clock = 1_000_000));

  it('the first candidate creates the Lease and leads; the second waits while the holder renews', async () => {
    const { api } = leaseStore();
    const [a, b] = [elector(api, 'a'), elector(api, 'b')];
    await a.tick();
    await b.tick();
    for (let i = 0; i < 5; i++) {
      clock += 5_000;
      await a.tick();
      await b.tick();
    }
    expect([a.isLeader(), b.isLeader()]).toEqual([true, false]);
  });

  it('knows the Lease after each round that read it, leader or follower, and not after one that failed', async () => {
    const { api, state } = leaseStore();
    const [a, b] = [elector(api, 'a'), elector(api, 'b')];
    expect(a.lastRound()).toBeUndefined();
    await a.tick();
    await b.tick();
    expect([a.lastRound(), b.lastRound()]).toEqual([
      { at: clock, leaseKnown: true },
      { at: clock, leaseKnown: true },
    ]);
    state.down = true;
    clock += 5_000;
    await b.tick();
    expect(b.lastRound()).toEqual({ at: clock, leaseKnown: false });
  });

  it('a holder that cannot renew stops counting itself leader before anyone else may take over', async () => {
    const { api, state } = leaseStore();
    const [a, b] = [elector(api, 'a'), elector(api, 'b')];
    await a.tick();
    await b.tick();
    state.down = true;
    clock += 9_999;
    await a.tick();
    expect(a.isLeader()).toBe(true);
    // renew deadline = lease duration − renew period = 10 s after the last renewal.
    clock += 1;
    expect(a.isLeader()).toBe(false);
    state.down = false;
    clock += 4_999;
    await b.tick();
    expect(b.isLeader()).toBe(false);
    clock += 1;
    await b.tick();
    expect(b.isLeader()).toBe(true);
    await a.tick();
    expect(a.isLeader()).toBe(false);
  });

  it('a renewal that comes back late is a lost and regained leadership: both edges reach onChange (the starter re-sends on regaining)', async () => {
    // Issue 10, defect 0: a renewal slowed past the deadline made isLeader() false for a while without onChange, so
    // the starter dropped what it saw meanwhile and, when the late renewal succeeded, never re-sent it.
    const { api } = leaseStore();
    const { elector: a, changes } = recordingElector(api, 'a');
    await a.tick();
    clock += 10_000;
    expect(a.isLeader()).toBe(false);
    await a.tick();
    expect(a.isLeader()).toBe(true);
    // The Lease stayed a's throughout: the regained term continues the first (nobody else can have sent).
    expect(changes).toEqual([
      [true, false],
      [false, false],
      [true, true],
    ]);
  });

  it('a Lease regained after another candidate held it is a new term, not a continued one', async () => {
    const { api, state } = leaseStore();
    const { elector: a, changes } = recordingElector(api, 'a');
    const b = elector(api, 'b');
    await a.tick();
    await b.tick();
    state.down = true;
    clock += 10_000;
    await a.tick();
    state.down = false;
    clock += 5_000;
    await b.tick();
    expect(b.isLeader()).toBe(true);
    await b.stop();
    await a.tick();
    expect(a.isLeader()).toBe(true);
    expect(changes).toEqual([
      [true, false],
      [false, false],
      [true, false],
    ]);
  });

  it('rejects a renew period that is not below the lease duration', () => {
    expect(() =>
      createLeaderElector({
        api: leaseStore().api,
        identity: 'a',
        lease: { leaseDurationSeconds: 5, renewSeconds: 5 },
        logger: silentLogger,
      }),
    ).toThrow(/renewSeconds \(5\) must be below leaseDurationSeconds \(5\)/);
  });
});

describe('planLeaseStep', () => {
  const candidate = { identity: 'a', leaseDurationSeconds: 15 };
  const acquired = new k8s.V1MicroTime(1_000);
  const leaseOf = (holderIdentity?: string): k8s.V1Lease => ({
    metadata: { name: 'steward-starter', resourceVersion: '7' },
    spec: { holderIdentity, leaseDurationSeconds: 10, acquireTime: acquired, leaseTransitions: 3 },
  });

  // Each case: the Lease read at `at`, its current version first seen here at 0; what this round does with it.
  it.each([
    { what: "someone else's Lease changed within its own duration is waited for", holder: 'b', at: 9_999, plan: {} },
    {
      what: "someone else's Lease unchanged for its whole duration is taken over, one transition more",
      holder: 'b',
      at: 10_000,
      plan: { held: 'acquired', previousHolder: 'b', transitions: 4, keptAcquireTime: false },
    },
    {
      what: 'a Lease nobody holds is acquired at once, one transition more',
      holder: undefined,
      at: 0,
      plan: { held: 'acquired', transitions: 4, keptAcquireTime: false },
    },
    {
      what: 'our own Lease is renewed, keeping its acquire time and transitions',
      holder: 'a',
      at: 0,
      plan: { held: 'renewed', transitions: 3, keptAcquireTime: true },
    },
  ])('$what', ({ holder, at, plan }) => {
    const step = planLeaseStep(candidate, leaseOf(holder), 0, at);
    const summary = step.write
      ? {
          held: step.held,
          ...(step.previousHolder ? { previousHolder: step.previousHolder } : {}),
          transitions: step.lease.spec?.leaseTransitions,
          keptAcquireTime: Number(step.lease.spec?.acquireTime) === Number(acquired),
        }
      : {};
    expect(summary).toEqual(plan);
    if (step.write) expect(step.lease.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15 });
    if (step.write) expect(step.lease.metadata?.resourceVersion).toBe('7');
  });
});
