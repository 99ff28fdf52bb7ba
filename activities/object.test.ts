import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ApplyObjectResult } from '../model/apply-object';
import type { WrittenTranslation } from '../model/kubernetes-calls';
import type { ObjectRef } from '../model/naming';
import { NAMED_RESOURCES } from './midonet/push';
import { createObjectActivities, type ObjectActivityDeps } from './object';
import type { RecordObjectEventInput } from './kubernetes/activities';

const pod: ObjectRef = { kind: 'Pod', namespace: 'ns', name: 'web' };
const written = (name: string, uid = `uid-${name}`) => ({ key: `ns/${name}`, uid, generation: 1 });

function applied(names: string[], terminating: string[] = [], stale: string[] = []): ApplyObjectResult {
  return {
    outcome: 'applied',
    applied: names.map((n) => `ns/${n}`),
    written: names.map((n) => written(n)),
    stale: stale.map((n) => written(n)),
    terminating: terminating.map((n) => `ns/${n}`),
    notes: [],
  };
}

/** The object activities as the worker runs them: each call in an activity context (its workflow may give it up). */
function inActivityContext(deps: ObjectActivityDeps, context = new MockActivityEnvironment()) {
  const activities = createObjectActivities(deps);
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [name, (arg: never) => context.run(fn, arg)]),
  ) as typeof activities;
}

/** Fakes that log every call as `<activity> <translation name>`. */
function fakes(
  applies: ApplyObjectResult[],
  push: (name: string, attempt: number, context: MockActivityEnvironment) => number = () => 2,
  unsettledUntil?: string,
  owned: WrittenTranslation[] = [written('a'), { ...written('b'), ...(unsettledUntil ? { unsettledUntil } : {}) }],
  /** The object as the API server holds it: gone by default (its deletion proven). */
  held: { found: false } | { found: true; uid: string; deleting: boolean } = { found: false },
) {
  const calls: string[] = [];
  const statuses: { name: string; ready: string; reason: string; unverified?: boolean }[] = [];
  const attempts = new Map<string, number>();
  const nameOf = (ref: ObjectRef) => ref.name;
  const context = new MockActivityEnvironment();
  const deps = {
    kubernetes: {
      applyObject: () => {
        calls.push('applyObject');
        return Promise.resolve(applies.shift()!);
      },
      recordTranslationStatus: ({
        ref,
        ready,
        unverified,
      }: {
        ref: ObjectRef;
        ready: { status: string; reason: string };
        unverified?: boolean;
      }) => {
        statuses.push({
          name: nameOf(ref),
          ready: ready.status,
          reason: ready.reason,
          ...(unverified ? { unverified } : {}),
        });
        return Promise.resolve({ found: false as const });
      },
      releaseFinalizer: ({ ref }: { ref: ObjectRef }) => {
        calls.push(`releaseFinalizer ${nameOf(ref)}`);
        const deleting = owned.find((t) => t.key === `ns/${nameOf(ref)}`)?.deleting;
        return Promise.resolve({ released: true as const, ...(deleting ? { deleting } : {}) });
      },
      listOwnedTranslations: () => Promise.resolve(owned),
      readObject: () => Promise.resolve(held),
      removeTranslation: ({ ref }: { ref: ObjectRef }) => {
        calls.push(`removeTranslation ${nameOf(ref)}`);
        return Promise.resolve();
      },
      removeReferrer: () => {
        calls.push('removeReferrer');
        return Promise.resolve({});
      },
      recordObjectEvent: ({ ref, uid, type, reason, message }: RecordObjectEventInput) => {
        calls.push(`event ${nameOf(ref)} ${uid} ${type} ${reason}: ${message}`);
        return Promise.resolve({ found: true });
      },
    },
    midonet: {
      pushTranslation: async ({ reference }: { reference?: { ref: ObjectRef; readResources: boolean } }) => {
        await Promise.resolve();
        // Sent by reference: the push reads the Translation, and reports on it (push.test.ts).
        if (!reference?.readResources) throw new Error('an owned Translation is pushed by reference');
        const name = nameOf(reference.ref);
        const attempt = (attempts.get(name) ?? 0) + 1;
        attempts.set(name, attempt);
        calls.push(`push ${name}`);
        return { count: push(name, attempt, context) };
      },
      deleteTranslation: ({ reference, force }: { reference?: { ref: ObjectRef }; force?: boolean }) => {
        calls.push(`delete ${nameOf(reference!.ref)}${force ? ' (force)' : ''}`);
        return Promise.resolve({ removed: [], notified: 0, count: 0 });
      },
    },
  } as unknown as ObjectActivityDeps;
  return { activities: inActivityContext(deps, context), calls, statuses };
}

const input = { ref: pod, uid: 'pod-uid', projection: {} };
const missing = () =>
  ApplicationFailure.create({ message: 'parent missing', type: 'MidonetDependencyMissing', nonRetryable: false });

describe("an object's sync: apply, push, report", () => {
  it('pushes every applied Translation by reference, summing what is in MidoNet; each push reports on its own', async () => {
    const { activities, calls, statuses } = fakes([applied(['a', 'b'])]);
    const result = await activities.syncObject(input);
    expect(result).toMatchObject({ outcome: 'applied', pushed: 4 });
    expect(calls).toEqual(['applyObject', 'push a', 'push b']);
    expect(statuses).toEqual([]);
  });

  it('names the first resources it pushed, over all its Translations, and counts the rest', async () => {
    const recordOf = (name: string) =>
      Array.from({ length: 15 }, (_, i) => ({ kind: 'Port', id: `${name}-${i}`, state: 'synced' }));
    const deps = {
      kubernetes: {
        applyObject: () => Promise.resolve(applied(['a', 'b'])),
        recordTranslationStatus: () => Promise.resolve({ found: false }),
      },
      midonet: {
        pushTranslation: ({ reference }: { reference: { ref: ObjectRef } }) =>
          Promise.resolve({ count: 15, named: recordOf(reference.ref.name).map(({ kind, id }) => ({ kind, id })) }),
      },
    } as unknown as ObjectActivityDeps;
    const result = await inActivityContext(deps).syncObject(input);
    expect(result).toMatchObject({ outcome: 'applied', pushed: 30 });
    const named = [...recordOf('a'), ...recordOf('b')].slice(0, NAMED_RESOURCES).map(({ kind, id }) => ({ kind, id }));
    expect(result).toHaveProperty('resources', named);
    expect(NAMED_RESOURCES).toBeLessThan(30); // the premise: some are only counted
  });

  it('pushes again, after its siblings, a Translation that waits for what a sibling makes', async () => {
    const { activities, calls } = fakes([applied(['routes', 'main'])], (name, attempt) => {
      if (name === 'routes' && attempt === 1) throw missing();
      return 1;
    });
    await expect(activities.syncObject(input)).resolves.toMatchObject({ pushed: 2 });
    expect(calls).toEqual(['applyObject', 'push routes', 'push main', 'push routes']);
  });

  it('fails with the first failure when a round makes no progress', async () => {
    const { activities, calls } = fakes([applied(['a', 'b'])], () => {
      throw missing();
    });
    await expect(activities.syncObject(input)).rejects.toThrow('parent missing');
    expect(calls).toEqual(['applyObject', 'push a', 'push b']);
  });

  it('a Translation being deleted is finalized (its resources deleted, let go) and applied again before the push', async () => {
    const { activities, calls } = fakes([applied(['a', 'b'], ['b']), applied(['a', 'b'])]);
    await activities.syncObject(input);
    expect(calls).toEqual([
      'applyObject',
      'delete b',
      'releaseFinalizer b',
      'removeTranslation b',
      'applyObject',
      'push a',
      'push b',
    ]);
  });

  it('finalizes the Translations no longer wanted once the wanted ones are pushed', async () => {
    const { activities, calls } = fakes([applied(['a'], [], ['old'])]);
    await activities.syncObject(input);
    expect(calls).toEqual(['applyObject', 'push a', 'delete old', 'releaseFinalizer old', 'removeTranslation old']);
  });

  it('finalizes them all the same when the rest waits for what MidoNet lacks, once all else is pushed; then fails', async () => {
    // Chaos seed 144: an Endpoints port its Service no longer has; the old endpoints' Translations stayed Terminating.
    const { activities, calls } = fakes([applied(['a', 'dns'], [], ['old'])], (name) => {
      if (name === 'dns') throw missing();
      return 1;
    });
    await expect(activities.syncObject(input)).rejects.toThrow('parent missing');
    expect(calls).toEqual([
      'applyObject',
      'push a',
      'push dns',
      'push dns',
      'delete old',
      'releaseFinalizer old',
      'removeTranslation old',
    ]);
  });

  it('keeps them while a push fails otherwise (MidoNet out of reach): made before broken', async () => {
    const unavailable = ApplicationFailure.create({ message: 'MidoNet 502', type: 'MidonetUnavailable' });
    const { activities, calls } = fakes([applied(['a', 'b'], [], ['old'])], (name) => {
      if (name === 'b') throw unavailable;
      return 1;
    });
    await expect(activities.syncObject(input)).rejects.toThrow('MidoNet 502');
    expect(calls).toEqual(['applyObject', 'push a', 'push b']);
  });

  it('pushes nothing while a Translation is held by another finalizer', async () => {
    const { activities, calls } = fakes([applied(['a'], ['a']), applied(['a'], ['a'])]);
    await expect(activities.syncObject(input)).resolves.not.toHaveProperty('pushed');
    expect(calls.filter((c) => c.startsWith('push'))).toEqual([]);
  });

  it('a translation that waits is answered as it is, nothing pushed; what it had pushed is no longer claimed Ready; an Event says what it waits for', async () => {
    const { activities, calls, statuses } = fakes([{ outcome: 'wait', reason: 'Node node-1 does not exist (yet)' }]);
    await expect(activities.syncObject(input)).resolves.toEqual({
      outcome: 'wait',
      reason: 'Node node-1 does not exist (yet)',
    });
    expect(calls).toEqual([
      'applyObject',
      `event ${pod.name} pod-uid Normal WaitingForDependency: Node node-1 does not exist (yet)`,
    ]);
    expect(statuses).toEqual([
      { name: 'a', ready: 'False', reason: 'WaitingForDependency', unverified: true },
      { name: 'b', ready: 'False', reason: 'WaitingForDependency', unverified: true },
    ]);
  });

  it('while it waits, a Translation being deleted is finalized all the same, once no lost attempt can still write', async () => {
    // Chaos seed 52: stale Translations whose finalization a killed worker cut short, their Pod's Node then deleted.
    const fenced = new Date(Date.now() + 40_000).toISOString();
    const owned = [written('live'), { ...written('stale'), deleting: true as const }];
    const withFence = { ...written('fenced'), deleting: true as const, unsettledUntil: fenced };
    const wait = { outcome: 'wait' as const, reason: 'Node node-1 does not exist (yet)' };
    const { activities, calls, statuses } = fakes([wait], undefined, undefined, [...owned, withFence]);
    await activities.syncObject(input);
    expect(calls).toEqual([
      'applyObject',
      'delete stale',
      'releaseFinalizer stale',
      `event ${pod.name} pod-uid Normal WaitingForDependency: Node node-1 does not exist (yet)`,
    ]);
    expect(statuses).toEqual([{ name: 'live', ready: 'False', reason: 'WaitingForDependency', unverified: true }]);
  });
});

describe("an object's finalization", () => {
  it("deletes each Translation's resources, last Translation first, lets each go, then its back-reference", async () => {
    const { activities, calls } = fakes([]);
    const dependency: ObjectRef = { kind: 'Node', name: 'node-1' };
    await expect(activities.finalizeObject({ ref: pod, uid: 'pod-uid', dependency, mode: 'delete' })).resolves.toEqual({
      finalized: 2,
    });
    expect(calls).toEqual([
      'delete b',
      'releaseFinalizer b',
      'removeTranslation b',
      'delete a',
      'releaseFinalizer a',
      'removeTranslation a',
      'removeReferrer',
    ]);
  });

  it('sends no delete for a Translation being deleted already (the garbage collector, after its owner): the release let it go', async () => {
    const { activities, calls } = fakes([], undefined, undefined, [{ ...written('a'), deleting: true }, written('b')]);
    await activities.finalizeObject({ ref: pod, uid: 'pod-uid', mode: 'delete' });
    expect(calls).toEqual(['delete b', 'releaseFinalizer b', 'removeTranslation b', 'delete a', 'releaseFinalizer a']);
  });

  it('orphan leaves the resources in MidoNet; force deletes skipping refusals; neither touches the dependency', async () => {
    const orphan = fakes([]);
    await orphan.activities.finalizeObject({ ref: pod, uid: 'pod-uid', dependency: pod, mode: 'orphan' });
    expect(orphan.calls).toEqual([
      'releaseFinalizer b',
      'removeTranslation b',
      'releaseFinalizer a',
      'removeTranslation a',
    ]);
    const force = fakes([]);
    await force.activities.finalizeObject({ ref: pod, uid: 'pod-uid', dependency: pod, mode: 'force' });
    expect(force.calls.filter((c) => c.startsWith('delete'))).toEqual(['delete b (force)', 'delete a (force)']);
    expect(force.calls).not.toContain('removeReferrer');
  });

  it('does nothing when the API server holds the object, not being deleted: its deletion was claimed falsely', async () => {
    const live = { found: true as const, uid: 'pod-uid', deleting: false };
    const { activities, calls } = fakes([], () => 2, undefined, undefined, live);
    await expect(activities.finalizeObject({ ref: pod, uid: 'pod-uid', mode: 'delete' })).resolves.toEqual({
      finalized: 0,
      live: true,
    });
    expect(calls).toEqual([]);
    // Being deleted, or another incarnation: proven.
    for (const held of [
      { ...live, deleting: true },
      { ...live, uid: 'other' },
    ]) {
      const proven = fakes([], () => 2, undefined, undefined, held);
      await expect(proven.activities.finalizeObject({ ref: pod, uid: 'pod-uid', mode: 'delete' })).resolves.toEqual({
        finalized: 2,
      });
    }
  });

  it("waits for nothing and does nothing while a lost push's writes may land for long: it says until when", async () => {
    const until = new Date(Date.now() + 40_000).toISOString();
    const { activities, calls } = fakes([], () => 2, until);
    await expect(activities.finalizeObject({ ref: pod, uid: 'pod-uid', mode: 'delete' })).resolves.toEqual({
      finalized: 0,
      unsettledUntil: until,
    });
    expect(calls).toEqual([]);
    // A short one is the deletion's own wait (activities/midonet/push.ts), and orphan writes nothing to MidoNet.
    const soon = fakes([], () => 2, new Date(Date.now() + 2_000).toISOString());
    await expect(soon.activities.finalizeObject({ ref: pod, uid: 'pod-uid', mode: 'delete' })).resolves.toEqual({
      finalized: 2,
    });
    const orphan = fakes([], () => 2, until);
    await expect(orphan.activities.finalizeObject({ ref: pod, uid: 'pod-uid', mode: 'orphan' })).resolves.toEqual({
      finalized: 2,
    });
  });
});
