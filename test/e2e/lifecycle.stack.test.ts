// The pusher end to end: Translations created, changed, paused and deleted in the real API server, pushed by the real
// starter and worker into the MidoNet emulator, deleted by the real garbage collector.
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { observationsIn } from '../support';
import { cleanupUpdate, stateQuery } from '../../model/messages';
import type { Translation } from '../../model/translation/types';
import {
  bridgeId,
  bridgeTranslation,
  createTranslation,
  deleteTranslation,
  emulatorCounts,
  emulatorIds,
  eventsOf,
  expectedIds,
  handleOf,
  harnessForFile,
  historyLength,
  listWorkflowIds,
  patchResources,
  readTranslation,
  recordTranslationHistory,
  routerResource,
  sampleGroups,
  stateOf,
  steward,
  stewardProcess,
  waitFor,
  waitForState,
} from '../support/pusher-harness';

const h = harnessForFile({ prefix: 'e2e-life' });

const isSynced = async (name: string) =>
  (await readTranslation(h, name))?.status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True') ??
  false;

describe('the sample cluster pushed through Translation resources', () => {
  let all: Translation[];

  it('creating the Translations puts exactly their resources into MidoNet, and each reports Ready and Synced', async () => {
    all = sampleGroups(h.namespace).flatMap((g) => g.translations);
    // One after the other, in the sample's order, so each finds its parents (a Pod's port needs its Node's bridge)
    // without spending the bounded retries that wait for them.
    for (const t of all) {
      await createTranslation(h, t);
      await waitFor(`${t.name} synced`, () => isSynced(t.name));
    }

    const ids = await emulatorIds(h);
    const wanted = expectedIds(all, [routerResource()]);
    for (const kind of Object.keys(wanted)) expect([kind, ids[kind]]).toEqual([kind, wanted[kind]]);
    // Kinds without IDs of their own, counted (sample-cluster.test.ts derives these numbers).
    const counts = await emulatorCounts(h);
    expect({
      PortLink: counts.PortLink,
      TunnelZoneHost: counts.TunnelZoneHost,
      HostInterfacePort: counts.HostInterfacePort,
      MACPort: counts.MACPort,
      IPv4MACPair: counts.IPv4MACPair,
    }).toEqual({
      PortLink: 2,
      TunnelZoneHost: 2,
      HostInterfacePort: 5,
      MACPort: 2,
      IPv4MACPair: 2,
    });

    for (const t of all) {
      const object = (await readTranslation(h, t.name))!;
      const conditions = Object.fromEntries((object.status?.conditions ?? []).map((c) => [c.type, c.status]));
      expect([t.name, conditions]).toEqual([t.name, { Ready: 'True', Synced: 'True' }]);
      expect([t.name, object.status?.childResources?.map((c) => [c.kind, c.state])]).toEqual([
        t.name,
        t.resources.map((r) => [r.kind, 'synced']),
      ]);
      expect([t.name, object.status?.observedGeneration]).toEqual([t.name, object.metadata.generation]);
    }
  });

  it('each Translation has a Synced Event, and its workflow says synced in the query and in the LifecycleState search attribute', async () => {
    for (const t of all) {
      const events = await eventsOf(h, t.name);
      expect([t.name, events.some((e) => e.reason === 'Synced' && e.type === 'Normal')]).toEqual([t.name, true]);
      const view = await stateOf(h, t.name);
      expect([t.name, view.state, view.resources.length]).toEqual([t.name, 'synced', t.resources.length]);
    }
    const wanted = all.map((t) => `translation/${h.namespace}/${t.name}`).sort();
    await waitFor(
      'visibility to list every Translation workflow as synced',
      async () =>
        JSON.stringify(await listWorkflowIds(h, `K8sNamespace="${h.namespace}" AND LifecycleState="synced"`)) ===
        JSON.stringify(wanted)
          ? true
          : undefined,
      30_000,
    );
    await recordTranslationHistory(h, 'synced', all[0]!.name);
  });

  it('deleting a Pod Translation removes its port and binding from MidoNet, then releases the finalizer so the Translation is gone', async () => {
    const pod = all.find((t) => t.name === 'pod.4.web-1')!;
    const before = await emulatorCounts(h);
    const portId = (JSON.parse(pod.resources[0]!.body) as { id: string }).id;
    expect((await emulatorIds(h)).Port).toContain(portId);

    await deleteTranslation(h, pod.name);
    await waitFor(
      'the Pod Translation to be gone from the API server',
      async () => (await readTranslation(h, pod.name)) === undefined,
      60_000,
    );
    expect((await emulatorIds(h)).Port).not.toContain(portId);
    const after = await emulatorCounts(h);
    expect({ Port: after.Port, HostInterfacePort: after.HostInterfacePort }).toEqual({
      Port: before.Port! - 1,
      HostInterfacePort: before.HostInterfacePort! - 1,
    });
    await expect(handleOf(h, pod.name).result()).resolves.toBeUndefined();
    expect((await stateOf(h, pod.name)).state).toBe('done');

    // The whole life of one Translation: created, synced, deleted, done (issue 4 asks for this figure).
    const events = await historyLength(h, pod.name);
    process.stdout.write(
      `history events for one Translation's whole life (create → synced → delete → done): ${events}\n`,
    );
    expect(events).toBeLessThan(60);
    await recordTranslationHistory(h, 'deleted', pod.name);
  });
});

describe('ownership: the real garbage collector', () => {
  it('deleting the ConfigMap that owns a Translation gets the Translation deleted, after the workflow emptied MidoNet and released the finalizer', async () => {
    const owner = await h.core.createNamespacedConfigMap({
      namespace: h.namespace,
      body: { metadata: { name: 'owner' }, data: { a: 'b' } },
    });
    const t = bridgeTranslation(h.namespace, 'owned', [bridgeId(31), bridgeId(32)]);
    await createTranslation(h, t, [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }]);
    await waitFor('the owned Translation synced', () => isSynced(t.name));
    expect((await emulatorIds(h)).Bridge).toEqual(expect.arrayContaining([bridgeId(31), bridgeId(32)]));

    await h.core.deleteNamespacedConfigMap({ namespace: h.namespace, name: 'owner' });
    await waitFor(
      'the garbage collector and the pusher to delete the owned Translation',
      async () => (await readTranslation(h, t.name)) === undefined,
      90_000,
    );
    expect((await emulatorIds(h)).Bridge).not.toContain(bridgeId(31));
    expect((await emulatorIds(h)).Bridge).not.toContain(bridgeId(32));
    expect((await stateOf(h, t.name)).state).toBe('done');
  });
});

describe('operator actions', () => {
  const name = 'ops';
  const target = () => `${h.namespace}/${name}`;
  const id = () => `translation/${h.namespace}/${name}`;

  beforeAll(async () => {
    await createTranslation(h, bridgeTranslation(h.namespace, name, [bridgeId(41)]));
    await waitForState(h, name, 'synced');
  });

  it.each([
    {
      why: 'an unknown mode is refused before any call',
      args: ['--mode', 'sweep', '--reason', 'try'],
      message: `${'<id>'}: --mode: mode must be one of retry, orphan, force`,
      code: 2,
    },
    {
      why: 'a cleanup without a reason is refused before any call',
      args: ['--mode', 'retry'],
      message: `${'<id>'}: --reason: a reason is required`,
      code: 2,
    },
    {
      why: 'a cleanup on a synced lifecycle is rejected by the validator, naming the state',
      args: ['--mode', 'retry', '--reason', 'just because'],
      message: `${'<id>'} rejected: cleanup is not possible while the lifecycle is synced`,
      code: 1,
    },
  ])('the CLI: $why', async ({ args, message, code }) => {
    await expect(steward(h, 'cleanup', 'translation', target(), '--via', 'temporal', ...args)).rejects.toThrow(
      message.replace('<id>', id()),
    );
    // The same as a process: the message on stderr in the one error format, exit 2 for a usage error, else 1.
    const run = await stewardProcess(h, 'cleanup', 'translation', target(), '--via', 'temporal', ...args);
    expect([run.code, run.stderr]).toEqual([
      code,
      expect.stringContaining(`error: cleanup: ${message.replace('<id>', id())}`),
    ]);
  });

  it.each([
    {
      why: 'an unknown mode',
      request: { mode: 'sweep', reason: 'try', requestedBy: 'e2e' },
      message: 'invalid cleanup request: mode: mode must be one of retry, orphan, force',
    },
    {
      why: 'a missing reason',
      request: { mode: 'retry', reason: ' ', requestedBy: 'e2e' },
      message: 'invalid cleanup request: reason: a reason is required',
    },
    {
      why: 'a cleanup of a synced lifecycle',
      request: { mode: 'retry', reason: 'why not', requestedBy: 'e2e' },
      message: 'cleanup is not possible while the lifecycle is synced',
    },
  ])(
    'the Update validator, called through the Temporal client, rejects $why with the reason',
    async ({ request, message }) => {
      const update = handleOf(h, name).executeUpdate(cleanupUpdate, { args: [request as never] });
      await expect(update).rejects.toBeInstanceOf(WorkflowUpdateFailedError);
      await expect(
        update.catch((e: WorkflowUpdateFailedError) => Promise.reject(new Error(e.cause?.message))),
      ).rejects.toThrow(message);
      // Rejected updates leave no trace in the workflow's record.
      expect((await stateOf(h, name)).actions).toEqual([]);
    },
  );

  it('pause holds a change of the Translation back until resume pushes it', async () => {
    expect(
      await steward(
        h,
        'pause',
        'translation',
        target(),
        '--via',
        'temporal',
        '--reason',
        'maintenance',
        '--by',
        'alice',
      ),
    ).toContain('accepted in state synced');
    expect((await stateOf(h, name)).state).toBe('paused');
    // Its conditions say paused, by whom and why; Ready still says what MidoNet holds.
    const conditions = async () =>
      Object.fromEntries(
        ((await readTranslation(h, name))?.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason]]),
      );
    await waitFor('the paused conditions', async () => (await conditions()).Synced?.[1] === 'Paused');
    expect(await conditions()).toEqual({ Ready: ['True', 'Paused'], Synced: ['False', 'Paused'] });
    expect((await readTranslation(h, name))?.status?.conditions?.find((c) => c.type === 'Synced')?.message).toBe(
      'paused by alice (maintenance): changes and deletion wait for steward resume',
    );

    await patchResources(h, name, bridgeTranslation(h.namespace, name, [bridgeId(41), bridgeId(42)]).resources);
    // The starter delivers the change (the observation is in the workflow's record) but nothing is pushed.
    await waitFor('the workflow to see the new generation', async () => {
      const history = await handleOf(h, name).fetchHistory();
      return observationsIn(history).length >= 2 || undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await emulatorIds(h)).Bridge).not.toContain(bridgeId(42));
    expect((await stateOf(h, name)).state).toBe('paused');

    expect(
      await steward(h, 'resume', 'translation', target(), '--via', 'temporal', '--reason', 'done', '--by', 'alice'),
    ).toContain('accepted in state paused');
    await waitFor('the held change to be pushed', async () => (await emulatorIds(h)).Bridge?.includes(bridgeId(42)));
    const view = await waitForState(h, name, 'synced');
    expect(view.resources.map((r) => r.id)).toEqual([bridgeId(41), bridgeId(42)]);
    expect(await conditions()).toEqual({ Ready: ['True', 'Synced'], Synced: ['True', 'Synced'] });
    expect(view.actions.map((a) => [a.action, a.requestedBy, a.reason])).toEqual([
      ['pause', 'alice', 'maintenance'],
      ['resume', 'alice', 'done'],
    ]);
  });

  it('refresh re-creates a resource deleted out of band (drift repair)', async () => {
    const [first] = bridgeTranslation(h.namespace, name, [bridgeId(41)]).resources;
    await h.midonet.remove(first!);
    expect((await emulatorIds(h)).Bridge).not.toContain(bridgeId(41));

    expect(
      await steward(h, 'refresh', 'translation', target(), '--via', 'temporal', '--reason', 'someone deleted a bridge'),
    ).toContain('accepted in state synced');
    await waitFor('the bridge to be back', async () => (await emulatorIds(h)).Bridge?.includes(bridgeId(41)));
    await waitForState(h, name, 'synced');
  });

  it('a paused lifecycle can be resumed only once, and resume of a synced one names the state', async () => {
    await expect(
      steward(h, 'resume', 'translation', target(), '--via', 'temporal', '--reason', 'twice'),
    ).rejects.toThrow(
      `${id()} rejected: resume is not possible while the lifecycle is synced (only a paused lifecycle resumes)`,
    );
  });

  // Last: the lifecycle ends.
  it('orphan or force of a live object is refused (non-retryable, saying how to delete it) unless said even if live, which is recorded', async () => {
    await steward(h, 'pause', 'translation', target(), '--via', 'temporal', '--reason', 'maintenance');
    const refusal = `would end the lifecycle of Translation ${target()} while it is not being deleted: delete it first (kubectl delete translation -n ${h.namespace} ${name})`;
    for (const mode of ['force', 'orphan'])
      await expect(
        steward(h, 'cleanup', 'translation', target(), '--via', 'temporal', '--mode', mode, '--reason', 'r'),
      ).rejects.toThrow(`${id()} rejected: cleanup --mode ${mode} ${refusal}`);
    const rejected = await handleOf(h, name)
      .executeUpdate(cleanupUpdate, { args: [{ mode: 'force', reason: 'r', requestedBy: 'e2e' }] })
      .catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(WorkflowUpdateFailedError);
    const cause = (rejected as WorkflowUpdateFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect([(cause as ApplicationFailure).type, (cause as ApplicationFailure).nonRetryable]).toEqual([
      'NotAllowed',
      true,
    ]);
    expect((await stateOf(h, name)).state).toBe('paused');

    const { runId } = await handleOf(h, name).describe();
    expect(
      await steward(
        h,
        'cleanup',
        'translation',
        target(),
        '--via',
        'temporal',
        '--mode',
        'orphan',
        '--even-if-live',
        '--reason',
        'moving it',
        '--by',
        'bob',
      ),
    ).toContain('accepted in state paused');
    const run = h.client.workflow.getHandle(id(), runId);
    await run.result();
    expect((await run.query(stateQuery)).actions.at(-1)).toMatchObject({
      action: 'cleanup',
      mode: 'orphan',
      evenIfLive: true,
      requestedBy: 'bob',
      reason: 'moving it',
    });
  });
});
