// Large Translations (issue 10, defect 2): one of 2,000 resources is pushed, edited and deleted with every payload
// of its workflow small (it travels by reference and keeps its record in its status), and one of 10,000 is refused
// whole with the limit named; `steward status` and `cleanup` work on both.
import { TRANSLATION_LIMITS } from '../../activities/midonet/validate';
import type { BackendResource } from '../../model/translation/types';
import * as e2e from '../support/pusher-harness';

const h = e2e.harnessForFile({ prefix: 'e2e-large' });

const CHAIN = 'e2ed0000-0000-4000-8000-000000000001';
const ruleId = (n: number) => `e2ef0000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const chain: BackendResource = {
  kind: 'Chain',
  parent: '',
  body: JSON.stringify({ id: CHAIN, name: 'large', tenantId: 'midonetkube' }),
};
const rule = (n: number): BackendResource => ({
  kind: 'Rule',
  parent: CHAIN,
  body: JSON.stringify({ id: ruleId(n), type: 'accept', nwDstAddress: '10.0.0.1' }),
});
const rules = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => rule(from + i));

/** The largest event of the workflow's history, in bytes of its JSON: what Temporal's payload limits apply to. */
async function largestEvent(name: string): Promise<{ bytes: number; events: number }> {
  const events = (await e2e.handleOf(h, name).fetchHistory()).events ?? [];
  return { bytes: Math.max(...events.map((e) => JSON.stringify(e).length)), events: events.length };
}

const synced = async (name: string) =>
  ((await e2e.readTranslation(h, name))?.status?.childResources ?? [])
    .filter((c) => c.state === 'synced')
    .map((c) => c.id);

describe('large Translations', () => {
  it(`${TRANSLATION_LIMITS.resources} resources are pushed, edited, shown and force-cleaned with no history event over 32 KiB`, async () => {
    const name = 'two-thousand';
    const resources = [chain, ...rules(1, TRANSLATION_LIMITS.resources)];
    await e2e.createTranslation(h, { ...e2e.bridgeTranslation(h.namespace, name, []), resources });
    await e2e.waitForState(h, name, 'synced', 240_000);
    expect((await e2e.emulatorIds(h)).Rule).toHaveLength(TRANSLATION_LIMITS.resources - 1);
    expect(await synced(name)).toHaveLength(TRANSLATION_LIMITS.resources);
    const view = await e2e.stateOf(h, name);
    expect(view.resources).toEqual([
      {
        kind: 'Translation',
        id: `${TRANSLATION_LIMITS.resources} resources, listed in status.childResources`,
        state: 'synced',
      },
    ]);
    const first = await largestEvent(name);

    // An edit: two rules removed, one added. Rules have no PUT, so what changes is deleted or created.
    const edited = [chain, ...rules(1, TRANSLATION_LIMITS.resources - 2), rule(5_000)];
    await e2e.patchResources(h, name, edited);
    await e2e.waitFor(
      'the edit to be pushed',
      async () => {
        const ids = (await e2e.emulatorIds(h)).Rule ?? [];
        return ids.includes(ruleId(5_000)) && !ids.includes(ruleId(TRANSLATION_LIMITS.resources - 1));
      },
      240_000,
    );
    await e2e.waitForState(h, name, 'synced', 240_000);
    await e2e.waitFor('the record to follow the edit', async () => (await synced(name)).includes(ruleId(5_000)));
    expect(await synced(name)).toHaveLength(edited.length);
    expect((await e2e.emulatorIds(h)).Rule).toHaveLength(edited.length - 1);
    const after = await largestEvent(name);
    expect(Math.max(first.bytes, after.bytes)).toBeLessThan(32 * 1024);
    console.log(
      `a ${resources.length}-resource Translation: ${first.events} history events to synced, ${after.events - first.events} for an edit, largest event ${after.bytes} bytes`,
    );

    const status = await e2e.steward(h, 'status', 'translation', `${h.namespace}/${name}`);
    expect(status).toContain('synced');
    expect(status).toContain(`${TRANSLATION_LIMITS.resources - 1} resources, listed in status.childResources`);

    // Deletion refused for one rule: stuck; force deletes the rest and releases.
    const refusal = await e2e.refuseDeletion(h, `/rules/${ruleId(7)}`, 'held');
    await e2e.deleteTranslation(h, name);
    await e2e.waitForState(h, name, 'stuck', 240_000);
    await e2e.forceCleanup(h, name, 'rule 7 is held');
    await e2e.expectGone(h, name);
    await h.admin.removeFault(refusal.id);
    const left = await e2e.emulatorIds(h);
    expect(left.Chain ?? []).not.toContain(CHAIN);
    expect(left.Rule ?? []).toEqual([]);
  }, 900_000);

  it('10,000 resources are refused whole, naming the limit, with a Warning; nothing is pushed; status answers and deletion is clean', async () => {
    const name = 'ten-thousand';
    const bridges = Array.from({ length: 10_000 }, (_, i) => e2e.bridgeId(100_000 + i));
    await e2e.createTranslation(h, e2e.bridgeTranslation(h.namespace, name, bridges));
    const view = await e2e.waitForState(h, name, 'invalid', 120_000);
    expect(view.lastError).toMatchObject({
      reason: 'InvalidTranslation',
      message: expect.stringContaining(
        `10000 resources; at most ${TRANSLATION_LIMITS.resources} are accepted`,
      ) as unknown,
    });
    await e2e.waitFor(
      'Ready=False InvalidTranslation',
      async () => (await e2e.readyCondition(h, name))?.reason === 'InvalidTranslation',
    );
    // The push says Ready=False itself; the Warning Event comes with the machine's `invalid` status, just after.
    await e2e.waitFor('a Warning Event InvalidTranslation', async () =>
      (await e2e.eventsOf(h, name)).some((e) => e.type === 'Warning' && e.reason === 'InvalidTranslation'),
    );
    expect((await e2e.emulatorIds(h)).Bridge ?? []).not.toContain(bridges[0]);
    expect((await largestEvent(name)).bytes).toBeLessThan(32 * 1024);
    expect(await e2e.steward(h, 'status', 'translation', `${h.namespace}/${name}`)).toContain('invalid');

    await e2e.deleteTranslation(h, name);
    await e2e.expectGone(h, name);
  }, 600_000);
});
