// One owner per MidoNet resource, and no Translation left saying Ready about what a cascade removed (issue 10,
// defect 1 and the chaos run's stale-Ready finding): a second Translation listing a resource another one records is
// refused, naming the owner, and takes it over when the owner is deleted; a Translation whose resources a deletion
// cascaded away stops saying Ready at once, and is pushed again as soon as what it needs is back; and one whose
// resources went with a parent nobody deleted through Steward is told when that parent is put back.
import type { BackendResource } from '../../model/translation/types';
import * as e2e from '../support/pusher-harness';

const h = e2e.harnessForFile({ prefix: 'e2e-owner' });

const { chainId, ruleId, chain, rule } = e2e.chainsAndRules({ chain: 'e2ea', rule: 'e2eb' }, 'owned');
const translation = (name: string, resources: BackendResource[]) => ({
  ...e2e.bridgeTranslation(h.namespace, name, []),
  resources,
});
const recorded = async (name: string) =>
  ((await e2e.readTranslation(h, name))?.status?.childResources ?? [])
    .filter((c) => c.state === 'synced')
    .map((c) => c.id);

/** A Chain and a Rule in it, each in its own Translation, both synced; only being told can move the child's. */
async function parentAndChild(parent: string, child: string, chainN: number, ruleN: number): Promise<void> {
  await e2e.createTranslation(h, translation(parent, [chain(chainN)]));
  await e2e.waitForState(h, parent, 'synced');
  // Neither a retry nor a drift check can move the child: only being told.
  await e2e.startWithTimings(h, child, { stuckRetryMs: 60 * 60_000, driftCheckMs: 60 * 60_000 });
  await e2e.createTranslation(h, translation(child, [rule(chainN, ruleN)]));
  await e2e.waitForState(h, child, 'synced');
}

describe('who owns a MidoNet resource', () => {
  it('a second Translation listing a resource the first records is refused whole, naming the first; deleting the first hands it over', async () => {
    await e2e.createTranslation(h, translation('first', [chain(1), rule(1, 11)]));
    await e2e.waitFor('first to record chain 1', async () => (await recorded('first')).includes(chainId(1)));
    // Only a notice (or an operator) can move the second on: its own retry timer is an hour.
    await e2e.startWithTimings(h, 'second', { stuckRetryMs: 60 * 60_000 });
    await e2e.createTranslation(h, translation('second', [chain(1), chain(2)]));

    const refused = await e2e.waitForState(h, 'second', 'stuck');
    expect(refused.lastError).toMatchObject({
      reason: 'ResourceClaimed',
      message: expect.stringContaining(`Chain ${chainId(1)} (owned by translation/${h.namespace}/first)`) as unknown,
    });
    await e2e.waitFor(
      'Ready=False ResourceClaimed on second',
      async () => (await e2e.readyCondition(h, 'second'))?.reason === 'ResourceClaimed',
    );
    expect((await e2e.emulatorIds(h)).Chain).not.toContain(chainId(2));
    expect(await recorded('second')).toEqual([]);

    await e2e.deleteTranslation(h, 'first');
    await e2e.expectGone(h, 'first');
    // The first deleted chain 1 (it owned it) and told the second, which pushed it again and owns it now.
    await e2e.waitForState(h, 'second', 'synced');
    expect((await e2e.emulatorIds(h)).Chain).toEqual(expect.arrayContaining([chainId(1), chainId(2)]));
    expect((await e2e.emulatorIds(h)).Rule ?? []).not.toContain(ruleId(11));
    await e2e.waitFor('second to record chain 1', async () => (await recorded('second')).includes(chainId(1)));
    const told =
      (await e2e.handleOf(h, 'second').fetchHistory()).events?.filter(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'backendChanged',
      ) ?? [];
    expect(told.length).toBeGreaterThanOrEqual(1);

    await e2e.deleteTranslation(h, 'second');
    await e2e.expectGone(h, 'second');
    expect((await e2e.emulatorIds(h)).Chain ?? []).not.toEqual(expect.arrayContaining([chainId(1)]));
  });

  it("a Translation whose resources another one's deletion cascaded away stops saying Ready, and is pushed again when they can be", async () => {
    await parentAndChild('parent', 'child', 3, 31);
    await e2e.waitFor('Ready=True on child', async () => (await e2e.readyCondition(h, 'child'))?.status === 'True');

    await e2e.deleteTranslation(h, 'parent');
    await e2e.expectGone(h, 'parent');
    expect((await e2e.emulatorIds(h)).Rule ?? []).not.toContain(ruleId(31));
    const waiting = await e2e.waitForState(h, 'child', 'stuck');
    expect(waiting.lastError?.reason).toBe('MidonetDependencyMissing');
    await e2e.waitFor('Ready=False on child', async () => (await e2e.readyCondition(h, 'child'))?.status === 'False');

    await e2e.createTranslation(h, translation('parent', [chain(3)]));
    await e2e.waitForState(h, 'child', 'synced');
    expect((await e2e.emulatorIds(h)).Rule).toContain(ruleId(31));
    await e2e.waitFor(
      'Ready=True on child again',
      async () => (await e2e.readyCondition(h, 'child'))?.status === 'True',
    );
  });

  it("a parent that MidoNet lost, taking a Ready child's resources with it, is put back by its Translation and the child is told", async () => {
    await parentAndChild('lost-parent', 'unaware-child', 5, 51);

    // Gone without a deletion anyone is told of (by hand, or a write MidoNet carried out after its answer was lost):
    // the chain takes the rule with it, and the child still says Ready.
    await h.midonet.remove(chain(5));
    expect((await e2e.emulatorIds(h)).Rule ?? []).not.toContain(ruleId(51));
    // The parent's drift repair, as its drift check would: creating the chain again tells the child, whose record
    // says its rule is pushed, though nothing of it can have outlived the chain.
    expect(
      await e2e.steward(
        h,
        'refresh',
        'translation',
        `${h.namespace}/lost-parent`,
        '--via',
        'temporal',
        '--reason',
        'MidoNet lost a chain',
      ),
    ).toContain('accepted');
    await e2e.waitFor('the rule to be pushed again', async () => (await e2e.emulatorIds(h)).Rule?.includes(ruleId(51)));
    await e2e.waitForState(h, 'unaware-child', 'synced');
    await e2e.waitFor(
      'Ready=True on the child',
      async () => (await e2e.readyCondition(h, 'unaware-child'))?.status === 'True',
    );
  });
});

// Issue 43, item 3: a chain made directly in MidoNet (another tenant's, an operator's) that a hand-written
// Translation names is never deleted by that Translation's deletion, whatever the Translation is (of any size); and the deletion
// of one that pushed nothing sends MidoNet no request.
describe('what a Translation did not push is not its to delete', () => {
  const theirs = e2e.chainsAndRules({ chain: 'e2ef', rule: 'e2ed' }, 'theirs');
  /** Made over MidoNet's API, not through any Translation. */
  const madeElsewhere = (n: number, name = `theirs-${n}`) =>
    h.midonet.ensure({
      kind: 'Chain',
      parent: '',
      body: JSON.stringify({ id: theirs.chainId(n), name, tenantId: 'midonetkube' }),
    });
  const deletesOf = async (prefix: string) =>
    (await h.admin.journal()).filter((e) => e.method === 'DELETE' && e.path.includes(prefix)).length;

  it('an invalid one (2,001 resources) naming it: refused, and its deletion leaves the chain and sends no DELETE', async () => {
    await madeElsewhere(1);
    const resources = Array.from({ length: 2_001 }, (_, i) => theirs.chain(i + 1));
    await e2e.createTranslation(h, translation('too-many', resources));
    await e2e.waitForState(h, 'too-many', 'invalid');
    await e2e.deleteTranslation(h, 'too-many');
    await e2e.expectGone(h, 'too-many');
    expect((await e2e.emulatorIds(h)).Chain).toContain(theirs.chainId(1));
    expect(await deletesOf('e2ef0000')).toBe(0);
  });

  it('one naming it exactly as it is: Ready without taking it over, and its deletion leaves it', async () => {
    await madeElsewhere(2, 'theirs-2');
    await e2e.createTranslation(h, translation('identical', [theirs.chain(2)]));
    await e2e.waitForState(h, 'identical', 'synced');
    const reasons = (await e2e.eventsOf(h, 'identical')).map((e) => e.reason);
    await e2e.deleteTranslation(h, 'identical');
    await e2e.expectGone(h, 'identical');
    expect((await e2e.emulatorIds(h)).Chain).toContain(theirs.chainId(2));
    expect(await deletesOf(theirs.chainId(2))).toBe(0);
    expect(reasons).toContain('FoundForeign');
    expect(reasons).not.toContain('Adopted');
  });

  it('one naming it exactly as it is, large enough to travel by reference: its record in status says foreign, and its deletion leaves it', async () => {
    await madeElsewhere(4, 'theirs-4');
    // Over 64 KiB of resources: pushed by reference, its record kept in its status (not in its workflow).
    const mine = e2e.chainsAndRules({ chain: 'e2f1', rule: 'e2f2' }, 'mine');
    const rules = Array.from({ length: 800 }, (_, i) => mine.rule(1, i + 1));
    await e2e.createTranslation(h, translation('large-identical', [theirs.chain(4), mine.chain(1), ...rules]));
    await e2e.waitForState(h, 'large-identical', 'synced');
    const record = (await e2e.readTranslation(h, 'large-identical'))?.status?.childResources ?? [];
    expect(record).toHaveLength(802);
    expect(record.find((c) => c.id === theirs.chainId(4))?.state).toBe('foreign');
    await e2e.deleteTranslation(h, 'large-identical');
    await e2e.expectGone(h, 'large-identical');
    const chains = (await e2e.emulatorIds(h)).Chain;
    expect(chains).toContain(theirs.chainId(4));
    expect(chains).not.toContain(mine.chainId(1));
    expect(await deletesOf(theirs.chainId(4))).toBe(0);
  });

  it('one naming it with another body: refused as ResourceConflict, and its deletion leaves it and is not held', async () => {
    await madeElsewhere(3, 'an-operators');
    await e2e.startWithTimings(h, 'conflicting', { stuckRetryMs: 60 * 60_000 });
    await e2e.createTranslation(h, translation('conflicting', [theirs.chain(3)]));
    const stuck = await e2e.waitForState(h, 'conflicting', 'stuck');
    expect(stuck.lastError?.reason).toBe('ResourceConflict');
    await e2e.deleteTranslation(h, 'conflicting');
    await e2e.expectGone(h, 'conflicting');
    expect((await e2e.emulatorIds(h)).Chain).toContain(theirs.chainId(3));
    expect(await deletesOf(theirs.chainId(3))).toBe(0);
  });
});
