// Changes that reach the pusher while a push is under way (MidoNet slowed by injected latency): the pusher must act
// on the newest observation once the push ends, as a level-based controller does.
import {
  bridgeId,
  bridgeTranslation,
  createTranslation,
  deleteTranslation,
  emulatorIds,
  harnessForFile,
  patchResources,
  readTranslation,
  stateOf,
  waitFor,
  waitForState,
} from '../support/pusher-harness';

const h = harnessForFile({ prefix: 'e2e-race' });
afterEach(() => h.admin.clearFaults());

/** Creates a Translation of three bridges whose push takes about six seconds, and waits until it is under way. */
async function slowPush(name: string, first: number): Promise<string[]> {
  const ids = [bridgeId(first), bridgeId(first + 1), bridgeId(first + 2)];
  await h.admin.injectFault({ method: 'POST', path: '/bridges', action: 'latency', latencyMs: 2_000 });
  await createTranslation(h, bridgeTranslation(h.namespace, name, ids));
  await waitFor(
    'the push to be under way',
    async () => (await stateOf(h, name)).state === 'pushing' || undefined,
    30_000,
  );
  return ids;
}

/** Once the push ended (whatever the machine decided next), the state the workflow settled in. */
const afterPush = (name: string) =>
  waitFor(
    `the push of ${name} to end`,
    async () =>
      ['observing', 'pushing', 'reporting'].includes((await stateOf(h, name)).state) ? undefined : stateOf(h, name),
    30_000,
  );

// The precondition of the two tests below: a slowed push ends synced, on its own.
it('a push slowed by latency ends synced with every resource', async () => {
  const name = 'slow';
  const ids = await slowPush(name, 61);
  const view = await afterPush(name);
  expect([view.state, view.resources.map((r) => r.id)]).toEqual(['synced', ids]);
});

// Regression (found here, fixed in c49c4e5): an observation taken in while `pushing` was only stored, and the push
// ended in `synced` with the new generation marked pushed, so the change waited for the drift check.
it('a change made during a push is pushed once that push ends', async () => {
  const name = 'changed-mid-push';
  const ids = await slowPush(name, 71);
  await patchResources(h, name, bridgeTranslation(h.namespace, name, [...ids, bridgeId(74)]).resources);
  await afterPush(name);
  await waitFor(
    'the change to reach MidoNet',
    async () => (await emulatorIds(h)).Bridge?.includes(bridgeId(74)),
    20_000,
  );
  const view = await waitForState(h, name, 'synced');
  expect(view.resources.map((r) => r.id)).toEqual([...ids, bridgeId(74)]);
});

// Regression, same cause: a deletion seen during a push was never acted on; the starter sends nothing more, so the
// Translation stayed Terminating with its resources left in MidoNet.
it('a deletion requested during a push deletes the resources and releases the finalizer once that push ends', async () => {
  const name = 'deleted-mid-push';
  const ids = await slowPush(name, 81);
  await deleteTranslation(h, name);
  await afterPush(name);
  await waitFor('the Translation to be gone', async () => (await readTranslation(h, name)) === undefined, 20_000);
  const bridges = (await emulatorIds(h)).Bridge ?? [];
  expect(ids.filter((id) => bridges.includes(id))).toEqual([]);
});

// The late-create race the pusher's settling guards against, now that the emulator carries out a POST whose client
// left (as Jetty does): the bridge's POST outlives the client's 10 s timeout and lands at 12 s, after the deletion was
// asked for. Were the push's failure reported at the timeout, the deletion would meet 404 and release the finalizer,
// and the late POST would then leave the bridge behind with no Translation to remove it.
it('a POST carried out after its client gave up is deleted with the Translation: nothing leaks', async () => {
  const name = 'late-create';
  const id = bridgeId(91);
  await h.admin.injectFault({ method: 'POST', path: '/bridges', action: 'latency', latencyMs: 12_000, times: 1 });
  await createTranslation(h, bridgeTranslation(h.namespace, name, [id]));
  await waitFor('the POST to be under way', async () => (await h.admin.faults()).length === 0 || undefined, 30_000);
  await deleteTranslation(h, name);
  await waitFor('the Translation to be gone', async () => (await readTranslation(h, name)) === undefined, 90_000);
  const journal = await h.admin.journal(id);
  const created = journal.find((e) => e.method === 'POST' && e.status === 201);
  expect(created).toMatchObject({ clientGone: true, delayMs: 12_000 });
  const deleted = journal.find((e) => e.method === 'DELETE' && e.status === 204);
  expect(deleted?.receivedAt).toBeGreaterThan(created!.answeredAt);
  expect((await emulatorIds(h)).Bridge ?? []).not.toContain(id);
});
