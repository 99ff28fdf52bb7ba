// The pusher's activities against the real MidoNet emulator, in a mock activity context: a Translation is refused
// whole before any of it is pushed, deletion skips what could never have been pushed, force goes past refusals, and
// a host binding before its tunnel zone names the annotation that fixes it.
import { CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { StateDump } from '../../deploy/local/midonet';
import { startHarness, type Harness } from '../../deploy/local/midonet/testing/conformance';
import { identify, type BackendResource, type PushedResource } from '../../model/translation/types';
import { createTranslationIndex } from '../kubernetes/translation-index';
import { OWNER_UID_LABEL } from '../../model/translation/model';
import { afterFailedPush, outcomeOf, progressIn } from '../../model/translation/push-progress';
import { backendResource, createMidonetClient } from './client';
import { createPushActivities } from './push';

const CHAIN = 'd0000000-0000-4000-8000-000000000001';
const RULE = (n: number) => `e0000000-0000-4000-8000-00000000000${n}`;
const HOST = '90000000-0000-4000-8000-000000000001';
const PORT = 'a0000000-0000-4000-8000-000000000001';
const chain = backendResource('Chain', '', { id: CHAIN, name: 'KUBE-TEST', tenantId: 'midonetkube' });
const rule = (n: number) => backendResource('Rule', CHAIN, { id: RULE(n), type: 'accept' });

let emulator: Harness;
let push: ReturnType<typeof createPushActivities>;
/** A workflow's record of a resource, in this state. */
const recordOf = (r: BackendResource, state: PushedResource['state'] = 'synced'): PushedResource => ({
  ...r,
  ...identify(r),
  state,
});
const run = <T>(fn: () => Promise<T>, info?: ConstructorParameters<typeof MockActivityEnvironment>[0]): Promise<T> =>
  new MockActivityEnvironment(info).run(fn);
const ids = async (kind: keyof StateDump) => ((await emulator.admin.dump())[kind] ?? []).map((r) => r.id as string);

beforeAll(async () => (emulator = await startHarness()));
afterAll(() => emulator.emulator.close());
beforeEach(async () => {
  await emulator.admin.reset();
  push = createPushActivities({
    client: createMidonetClient({ baseUrl: emulator.emulator.url, username: 'admin', password: 'secret' }),
  });
});

describe('pushTranslation', () => {
  it('refuses a Translation with a bad resource in the middle before pushing any of it', async () => {
    const resources = [chain, rule(1), { kind: 'Rule', parent: CHAIN, body: '{"id": x}' } as BackendResource, rule(2)];
    const failure = await run(() => push.pushTranslation({ owner: 'translation/ns/t', resources, previous: [] })).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({
      type: 'InvalidTranslation',
      nonRetryable: true,
      message: expect.stringContaining('resources[2] (Rule) body: not JSON') as unknown,
    });
    expect(await ids('Chain')).toEqual([]);
  });

  it('refuses an ID listed twice as an invalid Translation, never as a conflict with what it pushed itself', async () => {
    const twice = backendResource('Rule', CHAIN, { id: RULE(1), type: 'drop' });
    const failure = await run(() =>
      push.pushTranslation({ owner: 'translation/ns/t', resources: [chain, rule(1), twice], previous: [] }),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      type: 'InvalidTranslation',
      nonRetryable: true,
      message: expect.stringContaining(
        `resources[2] (Rule) body.id: Rule ${RULE(1)} is listed twice (first at resources[1])`,
      ) as unknown,
    });
    expect((failure as Error).message).not.toContain('not pushed by this Translation');
    expect(await ids('Rule')).toEqual([]);
  });

  it('names the Node annotation that puts a host in a tunnel zone when a binding finds it in none', async () => {
    await emulator.admin.seedHost({ id: HOST, name: 'node-1' });
    const resources = [
      backendResource('Bridge', '', { id: 'b0000000-0000-4000-8000-000000000001', name: 'b' }),
      backendResource('Port', 'b0000000-0000-4000-8000-000000000001', { id: PORT, type: 'Bridge' }),
      backendResource('HostInterfacePort', HOST, { hostId: HOST, portId: PORT, interfaceName: 'midokube-mido' }),
    ];
    const failure = await run(() =>
      push.pushTranslation({ owner: 'translation/default/node.4.node-1', resources, previous: [] }),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      type: 'MidonetConflict',
      nonRetryable: false,
      message: expect.stringContaining('midonet.org/tunnel-endpoint-ip') as unknown,
    });
  });
});

describe('an attempt the server gave up on', () => {
  it('stops writing at its next heartbeat once it learns it (its replacement is running)', async () => {
    const env = new MockActivityEnvironment();
    env.on('heartbeat', ({ done }: { done: number }) => {
      if (done === 1) env.cancel('TIMED_OUT');
    });
    const failure = await env
      .run(() =>
        push.pushTranslation({
          owner: 'translation/ns/t',
          resources: [chain, rule(1), rule(2), rule(3)],
          previous: [],
        }),
      )
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CancelledFailure);
    expect(await ids('Rule')).toEqual([RULE(1)]);
  });
});

describe('deleteTranslation', () => {
  it('deletes what the record says was pushed; a pending resource only where MidoNet holds it as asked', async () => {
    const { pushed } = await run(() =>
      push.pushTranslation({ owner: 'translation/ns/t', resources: [chain, rule(1)], previous: [] }),
    );
    // Made by someone else with another body: a push of it would have been refused, and it stays.
    const client = createMidonetClient({ baseUrl: emulator.emulator.url, username: 'admin', password: 'secret' });
    await client.ensure(backendResource('Rule', CHAIN, { id: RULE(2), type: 'drop' }));
    const resources = [...pushed, recordOf(rule(2), 'pending'), recordOf(rule(3), 'pending')];
    const { removed } = await run(() => push.deleteTranslation({ owner: 'translation/ns/t', resources }));
    expect(removed.map((r) => [r.id, r.state])).toEqual([
      [RULE(3), 'absent'],
      [RULE(2), 'foreign'],
      [RULE(1), 'deleted'],
      [CHAIN, 'deleted'],
    ]);
    const deletes = (await emulator.admin.journal()).filter((e) => e.method === 'DELETE').map((e) => e.id);
    expect(deletes).not.toContain(RULE(2));
    expect(deletes).not.toContain(RULE(3));
  });

  it('deletes a pending resource that MidoNet holds as a later push asked it (a failed push wrote it), only that', async () => {
    // A first push created the chain and failed for good; a second, asking another name, wrote it and failed too.
    const renamed = backendResource('Chain', '', { id: CHAIN, name: 'KUBE-RENAMED', tenantId: 'midonetkube' });
    const client = createMidonetClient({ baseUrl: emulator.emulator.url, username: 'admin', password: 'secret' });
    await client.ensure(renamed);
    const pending = { ...recordOf(chain, 'pending'), alsoAsked: [renamed.body] };
    const { removed } = await run(() => push.deleteTranslation({ owner: 'translation/ns/t', resources: [pending] }));
    expect(removed.map((r) => [r.id, r.state])).toEqual([[CHAIN, 'deleted']]);
    // Held as neither: someone else's, left.
    const other = backendResource('Chain', '', { id: CHAIN, name: 'SOMEONE-ELSE', tenantId: 'midonetkube' });
    await client.ensure(other);
    const again = await run(() => push.deleteTranslation({ owner: 'translation/ns/t', resources: [pending] }));
    expect(again.removed.map((r) => [r.id, r.state])).toEqual([[CHAIN, 'foreign']]);
    expect(await ids('Chain')).toEqual([CHAIN]);
  });

  it('stops at a refused delete; with force it records it as failed and deletes the rest', async () => {
    await run(() =>
      push.pushTranslation({ owner: 'translation/ns/t', resources: [chain, rule(1), rule(2)], previous: [] }),
    );
    await emulator.admin.injectFault({ method: 'DELETE', path: `/rules/${RULE(2)}`, action: 'error', status: 403 });
    const input = { owner: 'translation/ns/t', resources: [chain, rule(1), rule(2)].map((r) => recordOf(r)) };
    await expect(run(() => push.deleteTranslation(input))).rejects.toMatchObject({ nonRetryable: true });
    const { removed } = await run(() => push.deleteTranslation({ ...input, force: true }));
    expect(removed.map((r) => [r.id, r.state])).toEqual([
      [RULE(2), 'failed'],
      [RULE(1), 'deleted'],
      [CHAIN, 'deleted'],
    ]);
    expect(await ids('Chain')).toEqual([]);
  });
});

describe('with the other Translations known (one owner per resource)', () => {
  const owner = (name: string, recorded: BackendResource[]) => ({
    metadata: { name, namespace: 'ns', creationTimestamp: new Date('2026-01-01T00:00:00Z') },
    resources: recorded,
    status: { childResources: recorded.map((r) => ({ kind: r.kind, id: identify(r).id, state: 'synced' })) },
  });
  const told: { ids: string[]; by: string; to: string[] }[] = [];
  function withNeighbours(...others: ReturnType<typeof owner>[]) {
    const index = createTranslationIndex();
    for (const object of others) index.apply({ type: 'upsert', object });
    const client = createMidonetClient({ baseUrl: emulator.emulator.url, username: 'admin', password: 'secret' });
    return createPushActivities({
      client,
      neighbours: {
        index,
        records: { read: () => Promise.resolve(undefined), write: () => Promise.resolve() },
        synced: () => true,
        notify: (to, notice) => Promise.resolve(void told.push({ ...notice, to })),
        announce: () => Promise.resolve(),
        provenance: () => Promise.resolve(undefined),
        report: () => Promise.resolve(),
      },
    });
  }

  it("refuses whole a Translation listing another's resource, and neither its stale removal nor its deletion ever removes that resource", async () => {
    const pusher = withNeighbours(owner('first', [chain]), { ...owner('listing', []), resources: [chain] });
    await run(() => push.pushTranslation({ owner: 'translation/ns/first', resources: [chain], previous: [] }));
    const failure = await run(() =>
      pusher.pushTranslation({ owner: 'translation/ns/second', resources: [chain, rule(1)], previous: [] }),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({
      type: 'ResourceClaimed',
      nonRetryable: true,
      message: expect.stringContaining(`Chain ${CHAIN} (owned by translation/ns/first)`) as unknown,
    });
    expect(await ids('Rule')).toEqual([]);

    const pending = { ...chain, ...identify(chain), state: 'pending' as const };
    await run(() => pusher.pushTranslation({ owner: 'translation/ns/second', resources: [], previous: [pending] }));
    await run(() => pusher.deleteTranslation({ owner: 'translation/ns/second', resources: [pending] }));
    expect(await ids('Chain')).toEqual([CHAIN]);

    // Its owner's deletion tells whoever names it.
    told.length = 0;
    await run(() => pusher.deleteTranslation({ owner: 'translation/ns/first', resources: [recordOf(chain)] }));
    expect(await ids('Chain')).toEqual([]);
    expect(told).toEqual([{ by: 'translation/ns/first', ids: [CHAIN], to: ['translation/ns/listing'] }]);
  });

  it('a deletion retried after its worker died between the delete and the notice tells again, though nothing is left to delete', async () => {
    const pusher = withNeighbours({ ...owner('listing', []), resources: [chain] });
    await run(() => push.pushTranslation({ owner: 'translation/ns/first', resources: [chain], previous: [] }));
    await run(() => push.deleteTranslation({ owner: 'translation/ns/first', resources: [recordOf(chain)] }));
    told.length = 0;
    const retried = new MockActivityEnvironment({
      attempt: 2,
      heartbeatDetails: { done: 1, foreign: [], writing: false },
    });
    await retried.run(() => pusher.deleteTranslation({ owner: 'translation/ns/first', resources: [recordOf(chain)] }));
    expect(told).toEqual([{ by: 'translation/ns/first', ids: [CHAIN], to: ['translation/ns/listing'] }]);
  });

  it('what a push created before it failed is told at once to those it concerns (its retry resumes after it)', async () => {
    const dependent = { ...owner('dependent', [rule(1)]), resources: [rule(1)] };
    const pusher = withNeighbours(dependent);
    told.length = 0;
    const parentless = backendResource('Port', 'b0000000-0000-4000-8000-00000000dead', { id: PORT, type: 'Bridge' });
    const failure = await run(() =>
      pusher.pushTranslation({ owner: 'translation/ns/parent', resources: [chain, parentless], previous: [] }),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({ type: 'MidonetDependencyMissing' });
    expect(await ids('Chain')).toEqual([CHAIN]);
    expect(told).toEqual([{ by: 'translation/ns/parent', ids: [CHAIN], to: ['translation/ns/dependent'] }]);
  });

  // Chaos seed 108: a hand-written Translation's push made its bridge and chains, then failed; its machine pushed again
  // after a timer, in a new activity, which took them for someone else's, and its deletion left them in MidoNet.
  it('what a failed push made is its own to the next push (a new activity) and its deletion deletes it; what it found made by someone else stays so', async () => {
    const pusher = withNeighbours();
    const name = 'translation/ns/hand';
    const foreignChain = backendResource('Chain', '', { id: RULE(9), name: 'OTHERS', tenantId: 'other' });
    await run(() => push.pushTranslation({ owner: 'translation/ns/other', resources: [foreignChain], previous: [] }));
    const parentless = backendResource('Port', 'b0000000-0000-4000-8000-00000000dead', { id: PORT, type: 'Bridge' });
    const first = [foreignChain, chain, parentless];
    const asked = first.map((r) => recordOf(r, 'pending'));
    const failure = (await run(() => pusher.pushTranslation({ owner: name, resources: first, previous: asked })).catch(
      (e: unknown) => e,
    )) as { details?: unknown[] };
    expect(failure).toMatchObject({ type: 'MidonetDependencyMissing' });
    const outcome = outcomeOf(first, progressIn(failure.details), false);
    expect(outcome).toEqual({ made: [`Chain:${CHAIN}`], foreign: [`Chain:${RULE(9)}`], maybe: [`Port:${PORT}`] });
    const record = afterFailedPush(asked, outcome);
    expect(record.map((r) => [r.id, r.state, r.tried])).toEqual([
      [RULE(9), 'foreign', undefined],
      [CHAIN, 'unverified', undefined],
      [PORT, 'pending', true],
    ]);

    // The port is no longer asked for; the next push, a new activity's first attempt, finds the chain as its own.
    const { pushed } = await run(() =>
      pusher.pushTranslation({ owner: name, resources: [foreignChain, chain], previous: record }),
    );
    expect(pushed.map((r) => [r.id, r.state])).toEqual([
      [RULE(9), 'foreign'],
      [CHAIN, 'synced'],
    ]);
    await run(() => pusher.deleteTranslation({ owner: name, resources: pushed }));
    expect(await ids('Chain')).toEqual([RULE(9)]);
  });

  it('a retry resuming after a resource an earlier attempt found made by someone else keeps it so', async () => {
    await run(() => push.pushTranslation({ owner: 'translation/ns/other', resources: [chain], previous: [] }));
    const resources = [chain, rule(1)];
    const { pushed } = await run(
      () =>
        withNeighbours().pushTranslation({
          owner: 'translation/ns/hand',
          resources,
          previous: resources.map((r) => recordOf(r, 'pending')),
        }),
      { attempt: 2, heartbeatDetails: { done: 1, foreign: [0], writing: true } },
    );
    expect(pushed.map((r) => [r.id, r.state])).toEqual([
      [CHAIN, 'foreign'],
      [RULE(1), 'synced'],
    ]);
  });

  // Chaos seed 136: a push's first attempt made a chain and failed; its retry failed on its first call, the delete of a
  // chain no longer asked for, and said nothing of the new one. The record dropped it; the deletion left it in MidoNet.
  it('a retry that fails before it writes keeps what the attempts before it may have written, and the deletion deletes it', async () => {
    const name = 'translation/ns/retried';
    const old = backendResource('Chain', '', { id: RULE(8), name: 'OLD', tenantId: 'midonetkube' });
    await run(() => push.pushTranslation({ owner: name, resources: [old, chain], previous: [] }));
    const unreachable = createPushActivities({
      client: createMidonetClient({ baseUrl: 'http://127.0.0.1:1', username: 'admin', password: 'secret' }),
    });
    const previous = [recordOf(old), recordOf(chain, 'pending')];
    // The first attempt's heartbeat as it failed writing the chain, and as a lost one's may lag (not yet writing).
    for (const heartbeatDetails of [
      { done: 0, foreign: [], writing: true },
      { done: 0, foreign: [], writing: false },
    ]) {
      const failure = (await run(() => unreachable.pushTranslation({ owner: name, resources: [chain], previous }), {
        attempt: 2,
        heartbeatDetails,
      }).catch((e: unknown) => e)) as { details?: unknown[] };
      expect(failure).toMatchObject({ type: 'MidonetUnavailable' });
      const record = afterFailedPush(previous, outcomeOf([chain], progressIn(failure.details), false));
      expect(record.map((r) => [r.id, r.state, r.tried])).toEqual([
        [RULE(8), 'synced', undefined],
        [CHAIN, 'pending', true],
      ]);
      await run(() => push.deleteTranslation({ owner: name, resources: record }));
      expect(await ids('Chain')).toEqual([]);
      await run(() => push.pushTranslation({ owner: name, resources: [old, chain], previous: [] }));
    }
  });

  it('a resource recorded as pending (a push cut short) and no longer wanted is removed by the next push', async () => {
    await run(() => push.pushTranslation({ owner: 'translation/ns/t', resources: [chain, rule(1)], previous: [] }));
    const pending = [chain, rule(1)].map((r) => ({ ...r, ...identify(r), state: 'pending' as const }));
    const { removed } = await run(() =>
      withNeighbours().pushTranslation({ owner: 'translation/ns/t', resources: [chain], previous: pending }),
    );
    expect(removed.map((r) => [r.id, r.state])).toEqual([[RULE(1), 'deleted']]);
    expect(await ids('Rule')).toEqual([]);
  });
});

describe('taking over what another controller left (issue 11)', () => {
  const announced: { owner: string; reason: string; message: string }[] = [];
  /** A Translation as the worker's watch sees it, written by these field managers (Steward's applies). */
  const written = (
    name: string,
    managers: string[],
    childResources: { kind: string; id: string; state: string }[] = [],
    /** midonet-kubernetes' shape: owned by the object it translates, as its owner-uid label says. */
    ownedBy?: string,
  ) => ({
    metadata: {
      name,
      namespace: 'ns',
      ...(ownedBy
        ? {
            labels: { [OWNER_UID_LABEL]: ownedBy },
            ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: ownedBy }],
          }
        : {}),
      creationTimestamp: new Date('2026-01-01T00:00:00Z'),
      managedFields: managers.map((manager) => ({
        manager,
        operation: manager === 'steward' ? 'Apply' : 'Update',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:resources': {} },
      })),
    },
    status: { childResources },
  });
  /** midonet-kubernetes wrote it, then Steward's translation applied its own resources over it. */
  const MIGRATED = ['midonet-kube-controllers', 'steward'];
  function pusherSeeing(...translations: ReturnType<typeof written>[]) {
    const index = createTranslationIndex();
    for (const object of translations) index.apply({ type: 'upsert', object });
    const client = createMidonetClient({ baseUrl: emulator.emulator.url, username: 'admin', password: 'secret' });
    const records = { read: () => Promise.resolve(undefined), write: () => Promise.resolve() };
    return createPushActivities({
      client,
      neighbours: {
        index,
        records,
        synced: () => true,
        notify: () => Promise.resolve(),
        announce: (owner, e) => Promise.resolve(void announced.push({ owner, ...e })),
        provenance: () => Promise.resolve(undefined),
        report: () => Promise.resolve(),
      },
    });
  }
  /** Writes to resources (a login is a POST too, and not one). */
  const writes = async () => {
    const counts = { POST: 0, PUT: 0, DELETE: 0 };
    for (const [kind, methods] of Object.entries((await emulator.admin.counters()).byKind)) {
      if (kind !== 'Login')
        for (const method of ['POST', 'PUT', 'DELETE'] as const) counts[method] += methods[method] ?? 0;
    }
    return counts;
  };
  const positions = async () =>
    ((await emulator.admin.dump()).Rule ?? [])
      .map((r) => [r.id, r.position])
      .sort((a, b) => Number(a[1]) - Number(b[1]));
  beforeEach(() => (announced.length = 0));

  it('takes over what MidoNet holds exactly as asked without a single write, and says so', async () => {
    await run(() =>
      push.pushTranslation({ owner: 'translation/ns/left', resources: [chain, rule(1), rule(2)], previous: [] }),
    );
    await emulator.admin.resetCounters();
    const result = await run(() =>
      pusherSeeing(written('left', ['midonet-kube-controllers'], [], 'pod-uid')).pushTranslation({
        owner: 'translation/ns/left',
        resources: [chain, rule(1), rule(2)],
        previous: [],
      }),
    );
    expect(await writes()).toEqual({ POST: 0, PUT: 0, DELETE: 0 });
    expect(result).toMatchObject({ adopted: 3, count: 3 });
    expect(result.pushed.every((r) => r.adopted)).toBe(true);
    expect(announced).toEqual([
      {
        owner: 'translation/ns/left',
        type: 'Normal',
        reason: 'Adopted',
        message: expect.stringContaining(`3 resources found in MidoNet exactly as this Translation asks`) as unknown,
      },
    ]);
  });

  it('uses what a hand-written Translation finds as asked without taking it over: no write, said so, and its deletion leaves it', async () => {
    await run(() =>
      push.pushTranslation({ owner: 'translation/ns/tenant', resources: [chain, rule(1)], previous: [] }),
    );
    await emulator.admin.resetCounters();
    const handWritten = pusherSeeing(written('hand', ['kubectl-create']));
    const result = await run(() =>
      handWritten.pushTranslation({ owner: 'translation/ns/hand', resources: [chain, rule(1)], previous: [] }),
    );
    expect(result).not.toHaveProperty('adopted');
    expect(result.pushed.map((r) => [r.id, r.state, r.adopted])).toEqual([
      [CHAIN, 'foreign', undefined],
      [RULE(1), 'foreign', undefined],
    ]);
    expect(announced).toEqual([expect.objectContaining({ owner: 'translation/ns/hand', reason: 'FoundForeign' })]);
    await run(() => handWritten.deleteTranslation({ owner: 'translation/ns/hand', resources: result.pushed }));
    expect(await writes()).toEqual({ POST: 0, PUT: 0, DELETE: 0 });
    expect(await ids('Rule')).toEqual([RULE(1)]);
  });

  it("replaces a rule Steward's translation derives for this Translation where it stood in its chain, naming the fields and their known cause", async () => {
    const dnat = (address: string) =>
      backendResource('Rule', CHAIN, {
        id: RULE(2),
        type: 'dnat',
        flowAction: 'accept',
        natTargets: [{ addressFrom: address, addressTo: address, portFrom: 80, portTo: 80 }],
      });
    // Posted without positions, each at the head: rule 3, then the buggy DNAT, then rule 1.
    await run(() =>
      push.pushTranslation({
        owner: 'translation/ns/x',
        resources: [chain, rule(1), dnat('10.0.0.3'), rule(3)],
        previous: [],
      }),
    );
    const before = await positions();
    await emulator.admin.resetCounters();
    const owner = 'translation/ns/endpoints-port.4.web-http-10.96.0.1-10.0.0.1-80-tcp';
    const result = await run(() =>
      pusherSeeing(written('endpoints-port.4.web-http-10.96.0.1-10.0.0.1-80-tcp', MIGRATED)).pushTranslation({
        owner,
        resources: [chain, rule(1), dnat('10.0.0.1'), rule(3)],
        previous: [],
      }),
    );
    expect(await writes()).toEqual({ POST: 1, PUT: 0, DELETE: 1 });
    expect(await positions()).toEqual(before);
    expect(result).toMatchObject({ adopted: 3, corrected: [`Rule:${RULE(2)}`] });
    const corrected = announced.find((e) => e.reason === 'Corrected');
    expect(corrected?.message).toContain('natTargets[0].addressFrom: "10.0.0.3" → "10.0.0.1"');
    expect(corrected?.message).toContain("midonet-kubernetes' Endpoints bug");
  });

  it('refuses as a conflict a differing resource of a Translation nobody proves is its own, and one another Translation records', async () => {
    await run(() =>
      push.pushTranslation({
        owner: 'translation/ns/x',
        resources: [chain, backendResource('Rule', CHAIN, { id: RULE(1), type: 'drop' })],
        previous: [],
      }),
    );
    await emulator.admin.resetCounters();
    const handWritten = pusherSeeing(written('hand', ['kubectl-create']));
    // The machine pre-records what a push may create as pending: that is no claim on what MidoNet already holds.
    const preRecorded = [chain, rule(1)].map((r) => ({ ...r, ...identify(r), state: 'pending' as const }));
    await expect(
      run(() =>
        handWritten.pushTranslation({
          owner: 'translation/ns/hand',
          resources: [chain, rule(1)],
          previous: preRecorded,
        }),
      ),
    ).rejects.toMatchObject({
      type: 'ResourceConflict',
      message: expect.stringContaining('not pushed by this Translation') as unknown,
    });
    const recordedElsewhere = pusherSeeing(
      written('mine', MIGRATED),
      written('other', ['steward'], [{ kind: 'Rule', id: RULE(1), state: 'synced' }]),
    );
    await expect(
      run(() =>
        recordedElsewhere.pushTranslation({ owner: 'translation/ns/mine', resources: [chain, rule(1)], previous: [] }),
      ),
    ).rejects.toMatchObject({
      message: expect.stringContaining('another Translation records it') as unknown,
    });
    expect(await writes()).toEqual({ POST: 0, PUT: 0, DELETE: 0 });
  });

  it('rebuilds a lost workflow record from the status: what it pushed is neither pushed again nor refused, and what it no longer lists goes', async () => {
    await run(() =>
      push.pushTranslation({
        owner: 'translation/ns/t',
        resources: [chain, backendResource('Rule', CHAIN, { id: RULE(1), type: 'drop' }), rule(2)],
        previous: [],
      }),
    );
    await emulator.admin.resetCounters();
    const recorded = [chain, rule(1), rule(2)].map((r) => ({ kind: r.kind, id: identify(r).id, state: 'synced' }));
    const result = await run(() =>
      pusherSeeing(written('t', ['steward'], recorded)).pushTranslation({
        owner: 'translation/ns/t',
        resources: [chain, rule(1)],
        previous: [],
      }),
    );
    // Rule 1 changed (replaced: one DELETE, one POST), rule 2 is no longer listed (one DELETE), the chain is left alone.
    expect(await writes()).toEqual({ POST: 1, PUT: 0, DELETE: 2 });
    expect(result.removed.map((r) => r.id)).toEqual([RULE(2)]);
    expect(await ids('Rule')).toEqual([RULE(1)]);
  });
});

describe('a local attempt (an object pushing its own Translation) fences its writes', () => {
  const ref = { kind: 'Translation' as const, namespace: 'ns', name: 't' };
  const reference = { ref, uid: 'uid-t', readResources: true, readRecord: true };
  const local = <T>(fn: () => Promise<T>): Promise<T> => new MockActivityEnvironment({ isLocal: true }).run(fn);
  /**
   * Records in memory: the Translation's resources, its record, and its fence as `status.unsettledWrites` keeps it;
   * a report (a status write) is a write too, with its conditions.
   */
  function withRecords(
    resources: BackendResource[],
    fence: { attempt: string; until: string }[] = [],
    stored: { record: { kind: string; id: string; state: string }[] } = { record: [] },
    onWrite = () => {},
  ) {
    const writes: { record?: number; fence?: unknown; ready?: string; generation?: number }[] = [];
    const client = createMidonetClient({ baseUrl: emulator.emulator.url, username: 'admin', password: 'secret' });
    const pusher = createPushActivities({
      client,
      neighbours: {
        index: createTranslationIndex(),
        records: {
          read: () =>
            Promise.resolve({
              generation: 7,
              resources,
              record: stored.record,
              ...(fence.length
                ? {
                    unsettledUntil: fence
                      .map((f) => f.until)
                      .sort()
                      .at(-1)!,
                  }
                : {}),
            }),
          write: (_ref, _uid, next, change) => {
            if (next) stored.record = next;
            onWrite();
            writes.push({ ...(next ? { record: next.length } : {}), ...(change ? { fence: change } : {}) });
            return Promise.resolve();
          },
        },
        synced: () => true,
        notify: () => Promise.resolve(),
        announce: () => Promise.resolve(),
        provenance: () => Promise.resolve(undefined),
        report: ({ childResources, settles, ready, generation }) => {
          if (childResources) stored.record = childResources;
          writes.push({
            ...(childResources ? { record: childResources.length } : {}),
            ...(settles ? { fence: { remove: settles } } : {}),
            ready: `${ready.status} ${ready.reason}`,
            generation,
          });
          return Promise.resolve();
        },
      },
    });
    return { pusher, writes, stored };
  }

  it('adds its entry with what may be created before its first write, and reports with the final record, Ready and its removal in one write', async () => {
    const { pusher, writes } = withRecords([chain, rule(1)]);
    const before = Date.now();
    const result = await local(() =>
      pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }),
    );
    const [first, last] = [writes[0] as { fence: { add: { attempt: string; until: string } } }, writes.at(-1)];
    expect(first).toMatchObject({ record: 2, fence: { add: { attempt: expect.any(String) as unknown } } });
    const until = Date.parse(first.fence.add.until);
    expect(until - before).toBeGreaterThanOrEqual(50_000);
    // The generation of the resources read (7), which the report names: not the one an apply wrote before.
    expect(last).toEqual({
      record: 2,
      fence: { remove: first.fence.add.attempt },
      ready: 'True Synced',
      generation: 7,
    });
    expect(writes).toHaveLength(2);
    expect(result).toMatchObject({
      generation: 7,
      named: [
        { kind: 'Chain', id: CHAIN },
        { kind: 'Rule', id: RULE(1) },
      ],
    });
    expect(await ids('Rule')).toEqual([RULE(1)]);
  });

  it('records what it found made by someone else as foreign, through a failed push too, and its deletion leaves it', async () => {
    await run(() => push.pushTranslation({ owner: 'translation/ns/tenant', resources: [chain], previous: [] }));
    const hand = withRecords([chain, rule(1)]);
    await local(() =>
      hand.pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }),
    );
    expect(hand.stored.record.map((r) => r.state)).toEqual(['foreign', 'synced']);
    // A change whose push fails at its second resource: the chain is still not this Translation's.
    const missing = backendResource('Rule', 'f0000000-0000-4000-8000-000000000009', { id: RULE(2), type: 'accept' });
    const failing = withRecords([chain, missing], [], hand.stored);
    await expect(
      local(() =>
        failing.pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }),
      ),
    ).rejects.toThrow();
    // The rule it was writing when it failed may be in MidoNet: tried.
    expect(hand.stored.record.map((r) => r.state)).toEqual(['foreign', 'unverified', 'tried']);
    const deleter = withRecords([chain, rule(1)], [], hand.stored);
    await local(() =>
      deleter.pusher.deleteTranslation({
        owner: 'translation/ns/t',
        resources: [],
        reference: { ...reference, readResources: false },
      }),
    );
    expect(await ids('Chain')).toEqual([CHAIN]);
  });

  it('a failed attempt reports why, with the record it leaves, and removes its entry in the same write: its writes were answered or waited out', async () => {
    const bad = backendResource('Rule', 'f0000000-0000-4000-8000-000000000009', { id: RULE(2), type: 'accept' });
    const { pusher, writes } = withRecords([chain, bad]);
    await expect(
      local(() => pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference })),
    ).rejects.toThrow();
    const added = (writes[0] as { fence: { add: { attempt: string } } }).fence.add.attempt;
    expect(writes.slice(1)).toEqual([
      { record: 2, fence: { remove: added }, ready: 'False MidonetDependencyMissing', generation: 7 },
    ]);
  });

  // The gap seed 108's fix left for a Translation whose record is in its status: the next push (a new activity's first
  // attempt) read the pre-record's `pending` and took what the failed push made for someone else's.
  it('what a failed push made is its own to the next push (a new activity) and its deletion deletes it; what it never reached leaves the record', async () => {
    const missing = backendResource('Rule', 'f0000000-0000-4000-8000-000000000009', { id: RULE(2), type: 'accept' });
    const first = withRecords([chain, missing, rule(1)]);
    await expect(
      run(() => first.pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference })),
    ).rejects.toThrow();
    expect(first.stored.record.map((r) => [r.id, r.state])).toEqual([
      [CHAIN, 'unverified'],
      [RULE(2), 'tried'],
    ]);
    const next = withRecords([chain], [], first.stored);
    await run(() => next.pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }));
    expect(first.stored.record.map((r) => [r.id, r.state])).toEqual([[CHAIN, 'synced']]);
    const deleter = withRecords([chain], [], first.stored);
    await run(() =>
      deleter.pusher.deleteTranslation({
        owner: 'translation/ns/t',
        resources: [],
        reference: { ...reference, readResources: false },
      }),
    );
    expect(await ids('Chain')).toEqual([]);
  });

  it('a push after one lost with its worker reads the record it left by its last heartbeat: what it made is its own, what it found made by someone else stays so', async () => {
    const others = backendResource('Chain', '', { id: RULE(9), name: 'OTHERS', tenantId: 'other' });
    // The lost push found the first chain made by someone else, made the second and was writing the rule.
    await run(() => push.pushTranslation({ owner: 'translation/ns/other', resources: [others, chain], previous: [] }));
    const resources = [others, chain, rule(1)];
    const leftByLost = () => ({
      record: resources.map((r) => ({ kind: r.kind, id: identify(r).id, state: 'pending' })),
    });
    const lostPush = { done: 2, foreign: [0], writing: true, generation: 7 };
    const states = (stored: { record: { id: string; state: string }[] }) => stored.record.map((r) => [r.id, r.state]);

    const told = withRecords(resources, [], leftByLost());
    await run(() =>
      told.pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference, lostPush }),
    );
    expect(states(told.stored)).toEqual([
      [RULE(9), 'foreign'],
      [CHAIN, 'synced'],
      [RULE(1), 'synced'],
    ]);
    // Its heartbeat names another generation: its indices name other resources, nothing is read by them, and what is
    // found as asked is taken for someone else's: left in MidoNet rather than maybe deleted from under another.
    const stale = withRecords(resources, [], leftByLost());
    await run(() =>
      stale.pusher.pushTranslation({
        owner: 'translation/ns/t',
        resources: [],
        previous: [],
        reference,
        lostPush: { ...lostPush, generation: 6 },
      }),
    );
    expect(states(stale.stored)).toEqual([
      [RULE(9), 'foreign'],
      [CHAIN, 'foreign'],
      [RULE(1), 'foreign'],
    ]);
  });

  it("a retry whose earlier attempt read another generation starts over: that heartbeat's indices name other resources", async () => {
    const { pusher, stored } = withRecords([chain, rule(1)]);
    await run(() => pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }), {
      attempt: 2,
      heartbeatDetails: { done: 1, foreign: [], writing: false, generation: 6 },
    });
    expect(stored.record.map((r) => [r.id, r.state])).toEqual([
      [CHAIN, 'synced'],
      [RULE(1), 'synced'],
    ]);
    expect(await ids('Chain')).toEqual([CHAIN]);
  });

  it('an attempt its workflow gave up reports nothing: only its entry goes (the attempt after it reports)', async () => {
    const env = new MockActivityEnvironment({ isLocal: true });
    const bad = backendResource('Rule', 'f0000000-0000-4000-8000-000000000009', { id: RULE(2), type: 'accept' });
    // Given up while it pushes (its local activity timed out): its failure comes after.
    const { pusher, writes } = withRecords([chain, bad], [], { record: [] }, () => env.cancel('TIMED_OUT'));
    await expect(
      env.run(() => pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference })),
    ).rejects.toThrow();
    const added = (writes[0] as { fence: { add: { attempt: string } } }).fence.add.attempt;
    expect(writes.slice(1)).toEqual([{ fence: { remove: added } }]);
  });

  it("a regular attempt (a pusher workflow's) writes no fence: its workflow waits for its fate", async () => {
    const { pusher, writes } = withRecords([chain]);
    await run(() => pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }));
    expect(writes.every((w) => w.fence === undefined)).toBe(true);
  });

  it('a deletion waits a short fence out, and refuses a long one in a local activity (its workflow waits with a timer)', async () => {
    const soon = new Date(Date.now() + 1_500).toISOString();
    const { pusher } = withRecords([chain], [{ attempt: 'lost', until: soon }]);
    await run(() => pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }));
    const started = Date.now();
    await local(() => pusher.deleteTranslation({ owner: 'translation/ns/t', resources: [], reference }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(await ids('Chain')).toEqual([]);

    const later = new Date(Date.now() + 60_000).toISOString();
    const long = withRecords([chain], [{ attempt: 'lost', until: later }]);
    await expect(
      local(() => long.pusher.deleteTranslation({ owner: 'translation/ns/t', resources: [], reference })),
    ).rejects.toMatchObject({ type: 'WritesUnsettled', message: expect.stringContaining(later) as unknown });
  });

  it('a deletion writes no record: its caller lets the Translation go right after, and a retry deletes again', async () => {
    const recorded = withRecords([chain, rule(1)]);
    await local(() =>
      recorded.pusher.pushTranslation({ owner: 'translation/ns/t', resources: [], previous: [], reference }),
    );
    const before = recorded.writes.length;
    const { count } = await local(() =>
      recorded.pusher.deleteTranslation({ owner: 'translation/ns/t', resources: [], reference }),
    );
    expect(count).toBe(2);
    expect(recorded.writes.slice(before)).toEqual([]);
    expect(await ids('Rule')).toEqual([]);
    expect(await ids('Chain')).toEqual([]);
    const again = await local(() =>
      recorded.pusher.deleteTranslation({ owner: 'translation/ns/t', resources: [], reference }),
    );
    expect(again.removed.length + again.count).toBe(2);
  });
});
