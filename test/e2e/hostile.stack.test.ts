// Hostile but realistic Translations (issue 10): written by hand without the finalizer, refused whole for a bad
// resource, partly pushed then broken, and a deletion MidoNet refuses that only `cleanup --mode force` gets past.
// Each ends with nothing Steward pushed left in MidoNet and no finalizer left on a deleted object.
import { temporal } from '@temporalio/proto';
import { observedSignal } from '../../model/messages';
import type { BackendResource } from '../../model/translation/types';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import * as e2e from '../support/pusher-harness';

const h = e2e.harnessForFile({ prefix: 'e2e-hostile' });

const { chainId, ruleId, chain, rule } = e2e.chainsAndRules({ chain: 'e2ec', rule: 'e2ee' }, 'hostile');

const expectGone = (name: string) => e2e.expectGone(h, name);
const readyCondition = (name: string) => e2e.readyCondition(h, name);

describe('hostile Translations', () => {
  it('one written by hand without the finalizer gets it before anything is pushed, so its deletion removes what was pushed', async () => {
    const name = 'no-finalizer';
    await e2e.createTranslation(h, {
      ...e2e.bridgeTranslation(h.namespace, name, [e2e.bridgeId(301), e2e.bridgeId(302)]),
      finalizers: [],
    });
    await e2e.waitForState(h, name, 'synced');
    expect((await e2e.readTranslation(h, name))?.metadata.finalizers).toEqual([TRANSLATION_FINALIZER]);
    expect((await e2e.emulatorIds(h)).Bridge).toEqual(expect.arrayContaining([e2e.bridgeId(301), e2e.bridgeId(302)]));

    await e2e.deleteTranslation(h, name);
    await expectGone(name);
    expect((await e2e.emulatorIds(h)).Bridge ?? []).not.toEqual(expect.arrayContaining([e2e.bridgeId(301)]));
    expect((await e2e.emulatorIds(h)).Bridge ?? []).not.toEqual(expect.arrayContaining([e2e.bridgeId(302)]));
  });

  it('one with a bad resource in the middle is refused whole: invalid, Ready=False InvalidTranslation naming index, kind and field, a Warning, nothing pushed; deletion is clean', async () => {
    const name = 'refused-whole';
    const resources: BackendResource[] = [
      chain(1),
      rule(1, 1),
      { kind: 'Rule', parent: chainId(1), body: '{"id": not json}' },
      { kind: 'Vtep' as BackendResource['kind'], parent: '', body: '{}' },
      rule(1, 2),
    ];
    await e2e.createTranslation(h, { ...e2e.bridgeTranslation(h.namespace, name, []), resources });
    const view = await e2e.waitForState(h, name, 'invalid');
    expect(view.lastError).toMatchObject({
      reason: 'InvalidTranslation',
      message: expect.stringContaining('resources[2] (Rule) body: not JSON') as unknown,
    });
    expect(view.lastError?.message).toContain('resources[3] (Vtep) kind: unknown kind "Vtep"');
    expect(view.lastError?.message).not.toMatch(/SyntaxError/);
    await e2e.waitFor(
      'the Ready condition to say InvalidTranslation',
      async () => (await readyCondition(name))?.reason === 'InvalidTranslation',
    );
    expect(await readyCondition(name)).toMatchObject({
      status: 'False',
      message: expect.stringContaining('resources[2] (Rule) body') as unknown,
    });
    expect((await e2e.eventsOf(h, name)).filter((e) => e.type === 'Warning').map((e) => e.reason)).toContain(
      'InvalidTranslation',
    );
    expect((await e2e.emulatorIds(h)).Chain ?? []).not.toContain(chainId(1));

    await e2e.deleteTranslation(h, name);
    await expectGone(name);
  });

  it('one pushed, then broken by an edit, keeps its pushed resources recorded and its deletion removes them', async () => {
    const name = 'pushed-then-broken';
    await e2e.createTranslation(h, {
      ...e2e.bridgeTranslation(h.namespace, name, []),
      resources: [chain(3), rule(3, 31)],
    });
    await e2e.waitForState(h, name, 'synced');
    expect((await e2e.emulatorIds(h)).Rule).toContain(ruleId(31));

    await e2e.patchResources(h, name, [
      chain(3),
      { kind: 'Rule', parent: '', body: JSON.stringify({ id: ruleId(32), type: 'accept' }) },
      rule(3, 31),
    ]);
    const view = await e2e.waitForState(h, name, 'invalid');
    expect(view.lastError?.message).toContain('resources[1] (Rule) parent: a parent is required');
    expect(view.resources.map((r) => [r.kind, r.id, r.state])).toEqual([
      ['Chain', chainId(3), 'synced'],
      ['Rule', ruleId(31), 'synced'],
    ]);

    await e2e.deleteTranslation(h, name);
    await expectGone(name);
    const left = await e2e.emulatorIds(h);
    expect(left.Chain ?? []).not.toContain(chainId(3));
    expect(left.Rule ?? []).not.toContain(ruleId(31));
  });

  it('a deletion MidoNet refuses is stuck; `cleanup --mode force` deletes the rest, ignoring the refusal, and releases the finalizer', async () => {
    const name = 'force-delete';
    await e2e.startWithTimings(h, name, { stuckRetryMs: 60 * 60_000 });
    await e2e.createTranslation(h, {
      ...e2e.bridgeTranslation(h.namespace, name, []),
      resources: [chain(5), rule(5, 51), rule(5, 52)],
    });
    await e2e.waitForState(h, name, 'synced');

    const refusal = await e2e.refuseDeletion(h, `/rules/${ruleId(52)}`, 'refused by policy');
    await e2e.deleteTranslation(h, name);
    const stuck = await e2e.waitForState(h, name, 'stuck', 60_000);
    expect(stuck.lastError?.message).toMatch(/403/);

    await e2e.forceCleanup(h, name, 'rule 52 is held by policy');
    await expectGone(name);
    const left = await e2e.emulatorIds(h);
    expect(left.Rule ?? []).not.toContain(ruleId(51));
    expect(left.Chain ?? []).not.toContain(chainId(5));
    await h.admin.removeFault(refusal.id);
    expect((await e2e.stateOf(h, name)).state).toBe('done');
  });

  it('signals are a trust boundary: a malformed observed signal, or one about another object, is dropped; the workflow goes on', async () => {
    const name = 'bad-signals';
    await e2e.createTranslation(h, e2e.bridgeTranslation(h.namespace, name, [e2e.bridgeId(401)]));
    await e2e.waitForState(h, name, 'synced');
    const handle = e2e.handleOf(h, name);
    const raw = (payload: unknown) =>
      h.client.workflow.getHandle(handle.workflowId).signal(observedSignal as never, payload as never);
    await raw({ bad: 1 });
    await raw({
      ref: { kind: 'Translation', namespace: h.namespace, name: 'someone-else' },
      uid: 'u',
      generation: 9,
      deleting: true,
      gone: true,
      finalizers: [],
      projection: { resources: [] },
    });
    await raw({
      ref: { kind: 'Translation', namespace: h.namespace, name },
      uid: 'u',
      generation: 'two',
      deleting: false,
      gone: false,
      finalizers: [],
      projection: { resources: 'all' },
    });

    await e2e.patchResources(h, name, [
      ...e2e.bridgeTranslation(h.namespace, name, [e2e.bridgeId(401), e2e.bridgeId(402)]).resources,
    ]);
    await e2e.waitFor('the next real change to be pushed', async () =>
      (await e2e.emulatorIds(h)).Bridge?.includes(e2e.bridgeId(402)),
    );
    await e2e.waitForState(h, name, 'synced');
    const history = await handle.fetchHistory();
    const taskFailures = (history.events ?? []).filter(
      (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    );
    expect(taskFailures).toEqual([]);
    expect((await e2e.stateOf(h, name)).uid).not.toBe('u');

    await e2e.deleteTranslation(h, name);
    await expectGone(name);
  });
});
