// MidoNet down (fault injection): the pusher's bounded retries run out, the lifecycle shows `stuck` everywhere an
// operator looks, and the operator's cleanup finishes it: `retry` once the backend is back, `orphan` to let go.
import { cleanupUpdate, stateQuery } from '../../model/messages';
import {
  bridgeId,
  bridgeTranslation,
  createTranslation,
  deleteTranslation,
  emulatorIds,
  eventsOf,
  expectGone,
  handleOf,
  harnessForFile,
  listWorkflowIds,
  readTranslation,
  recordTranslationHistory,
  startWithTimings,
  stateOf,
  steward,
  stewardProcess,
  waitFor,
  waitForState,
} from '../support/pusher-harness';
import { executeUpdateWhenReady } from '../../platform/temporal-update';
import { apiServerRelay, relayedKubeconfig, type Relay } from '../support/relay';

// Retries of a stuck lifecycle pushed out of the test's reach: only the operator's cleanup may move it on.
const NO_AUTOMATIC_RETRY = { stuckRetryMs: 60 * 60_000 };
// The activities' bounded retries (1 + 2 + 4 + 8 s between five attempts) and a margin.
const STUCK_WITHIN_MS = 60_000;

const h = harnessForFile({ prefix: 'e2e-stuck' }, (h) => h.admin.setDown(false));

/** Stuck in the state query, the LifecycleState search attribute, the Translation's conditions and a Warning Event. */
async function expectStuckEverywhere(name: string): Promise<void> {
  const view = await stateOf(h, name);
  expect(view.state).toBe('stuck');
  expect(view.lastError?.reason).toMatch(/^Midonet/);
  await waitFor(
    'visibility to list the workflow as stuck',
    async () =>
      (await listWorkflowIds(h, `K8sNamespace="${h.namespace}" AND K8sName="${name}" AND LifecycleState="stuck"`))
        .length === 1 || undefined,
    30_000,
  );
  const object = (await readTranslation(h, name))!;
  const conditions = Object.fromEntries((object.status?.conditions ?? []).map((c) => [c.type, [c.status, c.reason]]));
  expect(conditions.Ready).toEqual(['False', view.lastError?.reason]);
  const warnings = (await eventsOf(h, name)).filter((e) => e.type === 'Warning');
  expect(warnings.map((e) => e.reason)).toContain(view.lastError?.reason);
  expect(warnings.map((e) => e.message).join('\n')).toContain('stuck while');
}

/** A Translation of one bridge created while MidoNet is down, stuck with no automatic retry; MidoNet stays down. */
async function stuckWhileCreatedWithMidonetDown(name: string, bridge: number): Promise<void> {
  await h.admin.setDown(true);
  await startWithTimings(h, name, NO_AUTOMATIC_RETRY);
  await createTranslation(h, bridgeTranslation(h.namespace, name, [bridgeId(bridge)]));
  await waitForState(h, name, 'stuck', STUCK_WITHIN_MS);
}

/**
 * A Translation of these bridges created while MidoNet answers its creation with errors of its own (it is not down, so
 * no return of MidoNet wakes anything), stuck with no automatic retry. Returns the fault, still in place.
 */
async function stuckWhileCreatedOnMidonetErrors(name: string, bridges: number[]): Promise<{ id: string }> {
  const failing = await h.admin.injectFault({ method: 'POST', path: '/bridges', action: 'error', status: 500 });
  await startWithTimings(h, name, NO_AUTOMATIC_RETRY);
  await createTranslation(h, bridgeTranslation(h.namespace, name, bridges.map(bridgeId)));
  await waitForState(h, name, 'stuck', STUCK_WITHIN_MS);
  return failing;
}

describe('MidoNet down', () => {
  // Only the operator moves it on.
  it('while a Translation is created: stuck after the bounded retries, then `steward cleanup --mode retry` after recovery syncs it', async () => {
    const name = 'down-on-create';
    const failing = await stuckWhileCreatedOnMidonetErrors(name, [51, 52]);
    await expectStuckEverywhere(name);

    await h.admin.removeFault(failing.id);
    const run = await stewardProcess(
      h,
      'cleanup',
      'translation',
      `${h.namespace}/${name}`,
      '--via',
      'temporal',
      '--mode',
      'retry',
      '--reason',
      'MidoNet is back',
      '--by',
      'oncall',
    );
    expect([run.code, run.stdout]).toEqual([0, expect.stringContaining('accepted in state stuck')]);

    const view = await waitForState(h, name, 'synced');
    expect(view.actions).toEqual([
      expect.objectContaining({ action: 'cleanup', mode: 'retry', requestedBy: 'oncall', reason: 'MidoNet is back' }),
    ]);
    expect(view.lastError).toBeUndefined();
    expect((await emulatorIds(h)).Bridge).toEqual(expect.arrayContaining([bridgeId(51), bridgeId(52)]));
    await waitFor(
      'the Translation to report Ready again',
      async () =>
        (await readTranslation(h, name))?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
    );
    await recordTranslationHistory(h, 'stuck-retry', name);
  });

  it('MidoNet back after an outage: a Translation stuck while created is pushed at once, with no operator and an hour-long retry timer', async () => {
    const name = 'woken-on-return';
    await stuckWhileCreatedWithMidonetDown(name, 54);

    const back = Date.now();
    await h.admin.setDown(false);
    const view = await waitForState(h, name, 'synced', 60_000);
    console.log(`MidoNet back: the stuck Translation synced after ${Date.now() - back} ms (its retry timer: 1 h)`);
    expect(view.actions).toEqual([]);
    expect((await emulatorIds(h)).Bridge).toContain(bridgeId(54));
  });

  it("MidoNet back while no worker runs: the next worker's first answer from MidoNet wakes what was left stuck, without its hour-long retry timer", async () => {
    // What a worker killed between MidoNet's return and its wakes leaves: lifecycles stuck that no running worker saw
    // fail, so none sees MidoNet return.
    const name = 'woken-by-a-new-worker';
    await stuckWhileCreatedWithMidonetDown(name, 55);
    await waitFor(
      'visibility to list it as stuck',
      async () =>
        (await listWorkflowIds(h, `K8sNamespace="${h.namespace}" AND K8sName="${name}" AND LifecycleState="stuck"`))
          .length === 1 || undefined,
      30_000,
    );
    await h.stopWorker();
    await h.admin.setDown(false);

    const started = Date.now();
    await h.startWorker();
    const view = await waitForState(h, name, 'synced', 30_000);
    console.log(
      `a new worker: the stuck Translation synced ${Date.now() - started} ms after its start (retry timer: 1 h)`,
    );
    expect(view.actions).toEqual([]);
    expect((await emulatorIds(h)).Bridge).toContain(bridgeId(55));
  });

  it('a Translation stuck while created is gone within 5 s of its deletion, MidoNet still failing: its deletion needs no creation, and its hour-long retry timer is not waited for', async () => {
    const name = 'stuck-then-deleted';
    const failing = await stuckWhileCreatedOnMidonetErrors(name, [53]);

    const deleted = Date.now();
    await deleteTranslation(h, name);
    await expectGone(h, name);
    const goneAfterMs = Date.now() - deleted;
    console.log(`a stuck Translation deleted: gone after ${goneAfterMs} ms (its retry timer: 1 h)`);
    expect(goneAfterMs).toBeLessThan(5_000);
    await h.admin.removeFault(failing.id);
    expect((await emulatorIds(h)).Bridge ?? []).not.toContain(bridgeId(53));
  });

  // MidoNet's errors gone, nothing wakes the lifecycle but what the operator asks (no return of MidoNet: it answered).
  it.each([
    {
      asked: 'a refresh',
      name: 'stuck-then-refreshed',
      bridge: 56,
      wake: (target: string) =>
        steward(h, 'refresh', 'translation', target, '--via', 'temporal', '--reason', 'MidoNet is fixed'),
    },
    {
      asked: 'a pause, then a resume',
      name: 'stuck-then-resumed',
      bridge: 57,
      wake: async (target: string) => {
        await steward(h, 'pause', 'translation', target, '--via', 'temporal', '--reason', 'looking into it');
        return steward(h, 'resume', 'translation', target, '--via', 'temporal', '--reason', 'MidoNet is fixed');
      },
    },
  ])(
    '$asked pushes a stuck Translation at once: its hour-long retry timer is not waited for',
    async ({ asked, name, bridge, wake }) => {
      const failing = await stuckWhileCreatedOnMidonetErrors(name, [bridge]);
      await h.admin.removeFault(failing.id);

      const asking = Date.now();
      expect(await wake(`${h.namespace}/${name}`)).toContain('accepted in state');
      const view = await waitForState(h, name, 'synced', 30_000);
      console.log(`${asked}: the stuck Translation synced after ${Date.now() - asking} ms (its retry timer: 1 h)`);
      expect(view.lastError).toBeUndefined();
      expect((await emulatorIds(h)).Bridge).toContain(bridgeId(bridge));
    },
  );

  it('while a Translation is deleted: stuck, then `--mode orphan` releases the finalizer and records the resources left in MidoNet', async () => {
    const name = 'down-on-delete';
    await startWithTimings(h, name, NO_AUTOMATIC_RETRY);
    await createTranslation(h, bridgeTranslation(h.namespace, name, [bridgeId(61), bridgeId(62)]));
    await waitForState(h, name, 'synced');

    await h.admin.setDown(true);
    await deleteTranslation(h, name);
    await waitForState(h, name, 'stuck', STUCK_WITHIN_MS);
    await expectStuckEverywhere(name);

    // Orphaning needs no backend: MidoNet stays down until the Translation is gone.
    await executeUpdateWhenReady(handleOf(h, name), cleanupUpdate, {
      mode: 'orphan',
      reason: 'MidoNet is being rebuilt',
      requestedBy: 'oncall',
    });
    await waitFor(
      'the Translation to be gone from the API server',
      async () => (await readTranslation(h, name)) === undefined,
    );
    await expect(handleOf(h, name).result()).resolves.toBeUndefined();

    // The closed workflow still answers the query (replayed from its history): its record lists what it left behind.
    const view = await handleOf(h, name).query(stateQuery);
    expect(view.state).toBe('done');
    expect(view.resources.map((r) => [r.kind, r.id, r.state])).toEqual([
      ['Bridge', bridgeId(61), 'orphaned'],
      ['Bridge', bridgeId(62), 'orphaned'],
    ]);
    expect(view.actions).toEqual([
      expect.objectContaining({ action: 'cleanup', mode: 'orphan', requestedBy: 'oncall' }),
    ]);

    await h.admin.setDown(false);
    expect((await emulatorIds(h)).Bridge).toEqual(expect.arrayContaining([bridgeId(61), bridgeId(62)]));
    await recordTranslationHistory(h, 'stuck-orphan', name);
  });
});

describe('the Kubernetes API out of reach of the worker', () => {
  // The worker reaches the API server through a relay the test cuts; the starter and the test reach it directly.
  let relay: Relay;
  beforeAll(async () => {
    relay = apiServerRelay(h.info.kubernetes.kubeconfig);
    await relay.start();
    await h.stopWorker();
    await h.startWorker({ kubeconfig: relayedKubeconfig(h.info.kubernetes.kubeconfig, relay) });
  });
  afterAll(async () => {
    await relay?.stop();
    await h.stopWorker();
    await h.startWorker();
  });

  it('back after an outage: a Translation stuck meanwhile is synced without an operator, long before its hour-long retry timer', async () => {
    const name = 'woken-by-the-api-server';
    await relay.stop();
    await startWithTimings(h, name, NO_AUTOMATIC_RETRY);
    await createTranslation(h, bridgeTranslation(h.namespace, name, [bridgeId(71)]));
    // Its push waits for the worker's index of Translations, which cannot list them: five attempts of 10 s each.
    const stuck = await waitForState(h, name, 'stuck', 2 * STUCK_WITHIN_MS);
    expect(stuck.lastError?.reason).toBe('TranslationsNotListed');

    const back = Date.now();
    await relay.start();
    const view = await waitForState(h, name, 'synced', 60_000);
    console.log(
      `the API server back: the stuck Translation synced after ${Date.now() - back} ms (its retry timer: 1 h)`,
    );
    expect(view.actions).toEqual([]);
    expect((await emulatorIds(h)).Bridge).toContain(bridgeId(71));
  });
});
