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

  it.each([3_000, 15_000])(
    'a Translation stuck on a missing parent (its rule names a chain that does not exist), deleted %i ms after creation, is gone within 5 s (issue 43, item 9)',
    async (afterMs) => {
      const name = `missing-chain-${afterMs}`;
      const ruleN = 90 + afterMs / 1_000;
      await e2e.createTranslation(h, { ...e2e.bridgeTranslation(h.namespace, name, []), resources: [rule(9, ruleN)] });
      const created = Date.now();
      await e2e.waitFor('its push to start', async () => (await e2e.stateOf(h, name).catch(() => undefined))?.state);
      await new Promise((resolve) => setTimeout(resolve, afterMs - (Date.now() - created)));
      // Not pushed, and no deletion needs a backend call to have its rule removed: it was never created.
      expect((await readyCondition(name))?.status).not.toBe('True');
      expect((await e2e.emulatorIds(h)).Rule ?? []).not.toContain(ruleId(ruleN));

      const deleted = Date.now();
      await e2e.deleteTranslation(h, name);
      await e2e.waitFor('it to be gone', async () => (await e2e.readTranslation(h, name)) === undefined, 60_000);
      const tookMs = Date.now() - deleted;
      expect(tookMs).toBeLessThanOrEqual(5_000);
      expect((await e2e.stateOf(h, name)).state).toBe('done');
      expect((await e2e.emulatorIds(h)).Rule ?? []).not.toContain(ruleId(ruleN));
    },
  );

  it('a rule flipped 100 times in 10 s under 300 ms of MidoNet latency: Ready never names a generation MidoNet does not hold (issue 43, item 4)', async () => {
    const name = 'flipped';
    const flipped = (n: number) => ({
      kind: 'Rule' as const,
      parent: chainId(7),
      body: JSON.stringify({ id: ruleId(71), type: n % 2 === 0 ? 'accept' : 'drop' }),
    });
    await e2e.createTranslation(h, {
      ...e2e.bridgeTranslation(h.namespace, name, []),
      resources: [chain(7), flipped(0)],
    });
    await e2e.waitForState(h, name, 'synced');
    // What each generation asks of the rule, from the API server's own answers.
    const asked = new Map<number, string>([[(await e2e.readTranslation(h, name))!.metadata.generation, 'accept']]);
    const latency = await h.admin.injectFault({ action: 'latency', latencyMs: 300 });
    const held = async () =>
      ((await h.admin.dump()).Rule ?? []).find((r) => r.id === ruleId(71))?.type as string | undefined;
    let flipping = true;
    const samples = { consistent: 0, claims: 0, false: [] as string[] };
    const sampler = (async () => {
      // A sample counts when the status read before and after MidoNet's is the same object version.
      while (flipping) {
        const before = await e2e.readTranslation(h, name);
        const rule = await held();
        const after = await e2e.readTranslation(h, name);
        const version = (t?: e2e.TranslationObject) => (t?.metadata as { resourceVersion?: string })?.resourceVersion;
        if (!before || version(before) !== version(after)) continue;
        samples.consistent++;
        const ready = before.status?.conditions?.find((c) => c.type === 'Ready');
        if (ready?.status !== 'True') continue;
        samples.claims++;
        const generation = before.status?.observedGeneration ?? -1;
        if (asked.get(generation) !== rule || !ready.message.includes(`(generation ${generation})`))
          samples.false.push(
            `Ready for generation ${generation} (${asked.get(generation)}) while MidoNet held ${rule}`,
          );
      }
    })();
    try {
      for (let n = 1; n <= 100; n++) {
        await e2e.patchResources(h, name, [chain(7), flipped(n)]);
        asked.set((await e2e.readTranslation(h, name))!.metadata.generation, n % 2 === 0 ? 'accept' : 'drop');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const last = Math.max(...asked.keys());
      await e2e.waitFor(
        'the last generation to be Ready',
        async () => {
          const t = await e2e.readTranslation(h, name);
          const ready = t?.status?.conditions?.find((c) => c.type === 'Ready');
          return t?.status?.observedGeneration === last && ready?.status === 'True';
        },
        120_000,
      );
    } finally {
      flipping = false;
      await sampler;
      await h.admin.removeFault(latency.id);
    }
    expect(await held()).toBe(asked.get(Math.max(...asked.keys())));
    expect(samples.consistent).toBeGreaterThan(50);
    expect(samples.claims).toBeGreaterThan(0);
    expect(samples.false).toEqual([]);

    await e2e.deleteTranslation(h, name);
    await expectGone(name);
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
