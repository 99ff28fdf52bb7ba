// The pusher's decisions on plain values: no MidoNet, no Kubernetes, no activity context.
import { identify, type BackendResource, type PushedResource } from '../../model/translation/types';
import type { EnsureResult } from './client';
import {
  claimRefusal,
  conflictRefusal,
  findingOf,
  fromRecord,
  observeFirst,
  preRecord,
  previousRecord,
  pushedEntry,
  recordedAs,
  recordOf,
  removedIds,
  staleResources,
  stillFound,
  toDelete,
  type OwnerOf,
} from './push-plan';

const CHAIN = 'd0000000-0000-4000-8000-000000000001';
const RULE = (n: number) => `e0000000-0000-4000-8000-00000000000${n}`;
const HOST = '90000000-0000-4000-8000-000000000001';
const chain: BackendResource = { kind: 'Chain', parent: '', body: JSON.stringify({ id: CHAIN, name: 'KUBE-TEST' }) };
const rule = (n: number, type = 'accept'): BackendResource => ({
  kind: 'Rule',
  parent: CHAIN,
  body: JSON.stringify({ id: RULE(n), type }),
});
/** A binding: no ID of its own, known by parent and body. */
const binding: BackendResource = {
  kind: 'HostInterfacePort',
  parent: HOST,
  body: JSON.stringify({ hostId: HOST, portId: RULE(9), interfaceName: 'eth0' }),
};
const pushed = (r: BackendResource, state: PushedResource['state'], adopted?: true): PushedResource => ({
  ...r,
  ...identify(r),
  state,
  ...(adopted ? { adopted } : {}),
});
/** As a record in `status.childResources` brings it back: kind and ID only. */
const byId = (r: BackendResource, state: PushedResource['state'] = 'synced'): PushedResource => {
  const { id, key } = identify(r);
  return { kind: r.kind, parent: '', body: '', id, key, state };
};
const nobody: OwnerOf = () => undefined;
const owns =
  (owned: BackendResource[], by = 'translation/ns/other'): OwnerOf =>
  (key) =>
    owned.some((r) => identify(r).key === key) ? by : undefined;

describe('previousRecord', () => {
  const cases: {
    says: string;
    carried: PushedResource[];
    stored?: PushedResource[];
    indexed: string[];
    expected: PushedResource[];
  }[] = [
    {
      says: "the workflow's record is where a push starts; nothing is rebuilt from the index",
      carried: [pushed(chain, 'synced')],
      indexed: [`Rule:${RULE(1)}`],
      expected: [pushed(chain, 'synced')],
    },
    {
      says: "a workflow that lost its record rebuilds it from what the watch's index holds of its status",
      carried: [],
      indexed: [`Rule:${RULE(1)}`],
      expected: [byId(rule(1))],
    },
    {
      says: "a Translation read by reference adds what its status records and the workflow's record lacks",
      carried: [pushed(chain, 'synced')],
      stored: [byId(chain), byId(rule(1), 'pending')],
      indexed: [],
      expected: [pushed(chain, 'synced'), byId(rule(1), 'pending')],
    },
    {
      says: 'a Translation read by reference whose status records nothing rebuilds nothing from the index',
      carried: [],
      stored: [],
      indexed: [`Rule:${RULE(1)}`],
      expected: [],
    },
  ];
  it.each(cases)('$says', ({ carried, stored, indexed, expected }) => {
    expect(previousRecord(carried, stored, () => indexed)).toEqual(expected);
  });
});

describe('claimRefusal', () => {
  it('leaves a Translation none of whose resources another owns', () => {
    expect(claimRefusal('translation/ns/t', [chain, rule(1)], nobody)).toBeUndefined();
  });

  it('refuses a Translation whole for one resource another owns, naming it and its owner', () => {
    expect(claimRefusal('translation/ns/t', [chain, rule(1)], owns([rule(1)]))).toMatchObject({
      type: 'ResourceClaimed',
      nonRetryable: true,
      message: `translation/ns/t: 1 resources are pushed and recorded by another Translation: Rule ${RULE(1)} (owned by translation/ns/other)`,
    });
  });

  it('lists five claimed resources and counts the rest', () => {
    const rules = [1, 2, 3, 4, 5, 6].map((n) => rule(n));
    expect(claimRefusal('translation/ns/t', rules, owns(rules))?.message).toMatch(/: 6 resources .* and 1 more$/);
  });
});

describe('staleResources', () => {
  const cases: { says: string; previous: PushedResource[]; ownerOf?: OwnerOf; stale: PushedResource[] }[] = [
    {
      says: 'a recorded resource still asked for is not stale',
      previous: [pushed(chain, 'synced'), pushed(rule(1), 'synced')],
      stale: [],
    },
    {
      says: 'one no longer asked for is stale whether synced, pending or unverified (it may be in MidoNet)',
      previous: [pushed(rule(2), 'synced'), pushed(rule(3), 'pending'), byId(rule(4), 'unverified')],
      stale: [pushed(rule(2), 'synced'), pushed(rule(3), 'pending'), byId(rule(4), 'unverified')],
    },
    {
      says: 'one recorded as deleted, absent or failed is not removed again',
      previous: [pushed(rule(2), 'deleted'), pushed(rule(3), 'absent'), pushed(rule(4), 'failed')],
      stale: [],
    },
    {
      says: "another Translation's resource is never removed by this one, even one it recorded",
      previous: [pushed(rule(2), 'synced'), byId(rule(3))],
      ownerOf: owns([rule(2), rule(3)]),
      stale: [],
    },
  ];
  it.each(cases)('$says', ({ previous, ownerOf = nobody, stale }) => {
    expect(staleResources([chain, rule(1)], previous, ownerOf)).toEqual(stale);
  });
});

describe('preRecord', () => {
  it('records what was pushed as unverified and what may be created as pending, each once', () => {
    const previous = [pushed(chain, 'synced'), byId(rule(2))];
    expect(preRecord(previous, [chain, rule(1)])).toEqual([
      { kind: 'Chain', id: CHAIN, state: 'unverified' },
      { kind: 'Rule', id: RULE(2), state: 'unverified' },
      { kind: 'Rule', id: RULE(1), state: 'pending' },
    ]);
  });

  it("keeps what was found made by someone else foreign: a push cut short must not make it this Translation's to delete", () => {
    const previous = [pushed(chain, 'foreign'), pushed(rule(1), 'synced'), pushed(rule(2), 'pending')];
    expect(preRecord(previous, [chain, rule(1), rule(2)])).toEqual([
      { kind: 'Chain', id: CHAIN, state: 'foreign' },
      { kind: 'Rule', id: RULE(1), state: 'unverified' },
      { kind: 'Rule', id: RULE(2), state: 'pending' },
    ]);
  });

  it('keeps what a failed push tried as tried, which a status reads back as pending and tried', () => {
    const tried = { ...pushed(rule(2), 'pending'), tried: true as const };
    const record = preRecord([tried], [rule(2)]);
    expect(record).toEqual([{ kind: 'Rule', id: RULE(2), state: 'tried' }]);
    expect(record.map(fromRecord)).toEqual([
      expect.objectContaining({ key: `Rule:${RULE(2)}`, state: 'pending', tried: true }),
    ]);
    expect(recordOf(record.map(fromRecord))).toEqual(record);
  });
});

describe('recordedAs', () => {
  const cases: { says: string; previous: PushedResource[]; mine?: PushedResource }[] = [
    {
      says: "a pushed resource's record is this Translation's record of it",
      previous: [pushed(rule(1), 'synced')],
      mine: pushed(rule(1), 'synced'),
    },
    {
      says: 'its own pre-record (pending, with the body it asks for now) says nothing about MidoNet',
      previous: [pushed(rule(1), 'pending')],
    },
    {
      says: 'nor does one with another body that no push tried',
      previous: [pushed(rule(1, 'drop'), 'pending')],
    },
    {
      says: 'nor does one read from a status (no body) that no push tried',
      previous: [{ ...pushed(rule(1), 'pending'), body: '' }],
    },
    {
      says: 'a pending record a failed push was writing is a record, whatever body it asked',
      previous: [{ ...pushed(rule(1, 'drop'), 'pending'), tried: true }],
      mine: { ...pushed(rule(1, 'drop'), 'pending'), tried: true },
    },
    { says: 'a resource never recorded has no record', previous: [pushed(chain, 'synced')] },
    {
      says: "one found made by someone else is not this Translation's to correct",
      previous: [pushed(rule(1, 'drop'), 'foreign')],
    },
  ];
  it.each(cases)('$says', ({ previous, mine }) => {
    expect(recordedAs(previous)(rule(1))).toEqual(mine);
  });
});

describe('observeFirst', () => {
  const cases: [string, PushedResource | undefined, boolean | undefined, boolean][] = [
    ['what a record says was pushed is looked at before writing', pushed(chain, 'synced'), false, true],
    ['anything a Translation someone else wrote asks for is looked at before writing', undefined, true, true],
    ["a resource of Steward's own Translation it has no record of is just created", undefined, false, false],
    ['without Kubernetes (no provenance) and no record, it is just created', undefined, undefined, false],
  ];
  it.each(cases)('%s', (_says, mine, foreign, expected) => {
    expect(observeFirst(mine, foreign)).toBe(expected);
  });
});

describe('conflictRefusal', () => {
  const conflict = { diff: [{ field: 'type', desired: 'accept', observed: 'drop' }], reason: 'no PUT' };
  const cases: { says: string; recorded: boolean; translated: boolean; recordedByOther: boolean; refused?: string }[] =
    [
      {
        says: 'a resource this Translation recorded is replaced',
        recorded: true,
        translated: false,
        recordedByOther: false,
      },
      {
        says: "one Steward's translation derives for it, and nobody else records, is replaced",
        recorded: false,
        translated: true,
        recordedByOther: false,
      },
      {
        says: 'one another Translation records is refused, saying so',
        recorded: false,
        translated: true,
        recordedByOther: true,
        refused: 'another Translation records it',
      },
      {
        says: "one of a Translation Steward's translation did not write is refused: its ID is not known to be its own",
        recorded: false,
        translated: false,
        recordedByOther: false,
        refused: 'not pushed by this Translation',
      },
    ];
  it.each(cases)('$says', ({ recorded, translated, recordedByOther, refused }) => {
    const refusal = conflictRefusal('translation/ns/t', rule(1), conflict, { recorded, translated, recordedByOther });
    if (refused === undefined) expect(refusal).toBeUndefined();
    else
      expect(refusal).toMatchObject({
        type: 'ResourceConflict',
        nonRetryable: true,
        message: expect.stringContaining(refused) as unknown,
      });
  });

  it('names the resource, why MidoNet could not update it and what differs', () => {
    const flags = { recorded: false, translated: false, recordedByOther: true };
    expect(conflictRefusal('translation/ns/t', rule(1), conflict, flags)?.message).toBe(
      `translation/ns/t: Rule ${RULE(1)} exists in MidoNet with another body and another Translation records it (no PUT); differences: ${JSON.stringify(conflict.diff)}`,
    );
  });
});

describe('findingOf', () => {
  const diff = [{ field: 'type', desired: 'accept', observed: 'drop' }];
  const cases: { says: string; result: EnsureResult; mine?: PushedResource; adopted: boolean; corrected: boolean }[] = [
    {
      says: 'found as asked with no record: adopted',
      result: { outcome: 'unchanged' },
      adopted: true,
      corrected: false,
    },
    {
      says: 'found as asked, recorded as adopted: still adopted',
      result: { outcome: 'unchanged' },
      mine: pushed(rule(1), 'synced', true),
      adopted: true,
      corrected: false,
    },
    {
      says: 'found as Steward pushed it: neither',
      result: { outcome: 'unchanged' },
      mine: pushed(rule(1), 'synced'),
      adopted: false,
      corrected: false,
    },
    { says: 'created: neither', result: { outcome: 'created' }, adopted: false, corrected: false },
    {
      says: 'updated though the body asked is the one it pushed (drift): corrected',
      result: { outcome: 'updated', diff },
      mine: pushed(rule(1), 'synced'),
      adopted: false,
      corrected: true,
    },
    {
      says: 'updated because Steward asks another body than it pushed: an ordinary change',
      result: { outcome: 'updated', diff },
      mine: pushed(rule(1, 'drop'), 'synced'),
      adopted: false,
      corrected: false,
    },
    {
      says: 'an adopted resource changed to another body: still a correction',
      result: { outcome: 'updated', diff },
      mine: pushed(rule(1, 'drop'), 'synced', true),
      adopted: false,
      corrected: true,
    },
    {
      says: 'another body found where it has no record (replaced): corrected',
      result: { outcome: 'conflict', diff, reason: 'no PUT' },
      adopted: false,
      corrected: true,
    },
  ];
  it.each(cases)('$says', ({ result, mine, adopted, corrected }) => {
    expect(findingOf(result, mine, rule(1))).toEqual(corrected ? { adopted, correction: diff } : { adopted });
  });
  it("found as asked with no record, by a Translation Steward's translation did not write: someone else's, not adopted", () => {
    expect(findingOf({ outcome: 'unchanged' }, undefined, rule(1), 'others')).toEqual({
      adopted: false,
      foreign: true,
    });
  });
  it('found as asked where an earlier attempt of this push may have made it: its own, neither adopted nor foreign', () => {
    expect(findingOf({ outcome: 'unchanged' }, undefined, rule(1), 'ours')).toEqual({ adopted: false });
  });
  it("someone else's found with another body is no finding of ownership: the conflict decides", () => {
    expect(findingOf({ outcome: 'conflict', diff, reason: 'no PUT' }, undefined, rule(1), 'others')).toEqual({
      adopted: false,
      correction: diff,
    });
  });
});

describe('stillFound and pushedEntry', () => {
  const cases: [string, PushedResource | undefined, 'adopted' | 'foreign' | undefined][] = [
    ['an adopted resource asked with the same body stays adopted', pushed(rule(1), 'synced', true), 'adopted'],
    ["one asked with a body of Steward's own is no longer adopted", pushed(rule(1, 'drop'), 'synced', true), undefined],
    ['one Steward pushed was never adopted', pushed(rule(1), 'synced'), undefined],
    ['one without a record is not adopted (an earlier attempt pushed it)', undefined, undefined],
    ["one found made by someone else stays someone else's", pushed(rule(1), 'foreign'), 'foreign'],
  ];
  it.each(cases)('%s', (_says, mine, expected) => {
    expect(stillFound(mine, rule(1))).toBe(expected);
    const entry = pushedEntry(rule(1), expected);
    expect(entry).toEqual(
      pushed(rule(1), expected === 'foreign' ? 'foreign' : 'synced', expected === 'adopted' ? true : undefined),
    );
  });
});

describe('removedIds', () => {
  const all = [pushed(chain, 'synced'), byId(rule(1)), pushed(binding, 'synced')];
  const removed = [
    { ...pushed(binding, 'synced'), state: 'deleted' as const },
    { ...byId(rule(1)), state: 'deleted' as const },
    { ...pushed(chain, 'synced'), state: 'absent' as const },
  ];
  const cases: [string, boolean, string[]][] = [
    ['a first attempt tells what it deleted, by the IDs others can name', false, [RULE(1)]],
    ['a retry tells everything it may have removed (an earlier attempt may have)', true, [CHAIN, RULE(1)]],
  ];
  it.each(cases)('%s', (_says, retried, ids) => {
    expect(removedIds(removed, all, retried)).toEqual(ids);
  });
});

describe('toDelete', () => {
  const cases: {
    says: string;
    given: PushedResource[];
    stored?: { resources?: BackendResource[]; record: PushedResource[] };
    ownerOf?: OwnerOf;
    expected: PushedResource[];
  }[] = [
    {
      says: "what the workflow's record says was pushed is deleted",
      given: [pushed(chain, 'synced'), pushed(rule(1), 'unverified')],
      expected: [pushed(chain, 'synced'), pushed(rule(1), 'unverified')],
    },
    {
      says: 'the record in the workflow, then what the status adds, each once; nothing only asked for',
      given: [pushed(chain, 'synced')],
      stored: { resources: [chain, rule(1)], record: [byId(rule(2)), byId(chain)] },
      expected: [pushed(chain, 'synced'), byId(rule(2))],
    },
    {
      says: "found made by someone else, or already gone: not this Translation's to delete",
      given: [pushed(chain, 'foreign'), pushed(rule(1), 'deleted'), pushed(rule(2), 'absent')],
      expected: [],
    },
    {
      says: 'a pending resource known by its ID takes the body asked for, to be checked before it is deleted',
      given: [],
      stored: { resources: [chain], record: [byId(chain, 'pending'), byId(rule(1), 'pending')] },
      expected: [{ ...byId(chain, 'pending'), body: chain.body }],
    },
    {
      says: "another Translation's resource is never deleted",
      given: [pushed(chain, 'synced'), pushed(rule(1), 'synced')],
      stored: { record: [byId(rule(2))] },
      ownerOf: owns([rule(1), rule(2)]),
      expected: [pushed(chain, 'synced')],
    },
  ];
  it.each(cases)('$says', ({ given, stored, ownerOf = nobody, expected }) => {
    expect(toDelete(given, stored, ownerOf)).toEqual(expected);
  });
});
