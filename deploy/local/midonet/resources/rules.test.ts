/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access -- tests read response JSON loosely */
// Ref §1.4 Rule (positions, types, fragmentPolicy defaults) and §2.4 (the rule order midonet-kubernetes
// relies on); checklist §4.6.
import { id, T } from '../testing/conformance';
import { useEmulator } from '../testing/emulator';

const h = useEmulator(async () => {
  await h.api.create('/chains', T.chain, { id: id(1), name: 'KUBE-MAIN' });
  await h.api.create('/chains', T.chain, { id: id(2), name: 'KUBE-PRE' });
  await h.api.create('/chains', T.chain, { id: id(3), name: 'KUBE-SERVICES' });
});

const order = async (chain: number): Promise<[string, number][]> =>
  ((await h.api.get(`/chains/${id(chain)}/rules`, T.rules)).json as { id: string; position: number }[]).map((r) => [
    r.id,
    r.position,
  ]);

describe('§1.4 Rule positions', () => {
  test('a POST without position inserts at the head: the global chains come out as midonet-kubernetes expects (§2.4)', async () => {
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { id: id(10), type: 'jump', jumpChainId: id(3) });
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { id: id(11), type: 'jump', jumpChainId: id(2) });
    await h.api.create(`/chains/${id(2)}/rules`, T.rule, { id: id(12), type: 'rev_dnat', flowAction: 'accept' });
    await h.api.create(`/chains/${id(2)}/rules`, T.rule, { id: id(13), type: 'rev_snat', flowAction: 'continue' });
    // KUBE-MAIN [jump→PRE, jump→SERVICES]; KUBE-PRE [rev_snat, rev_dnat]
    expect(await order(1)).toEqual([
      [id(11), 1],
      [id(10), 2],
    ]);
    expect(await order(2)).toEqual([
      [id(13), 1],
      [id(12), 2],
    ]);
    expect((await h.api.get(`/rules/${id(10)}`, T.rule)).json).toMatchObject({
      position: 2,
      chainId: id(1),
      jumpChainId: id(3),
    });
  });

  test('an explicit position inserts there; size+1 appends', async () => {
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { id: id(10), type: 'accept' });
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { id: id(11), type: 'accept', position: 2 });
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { id: id(12), type: 'drop', position: 2 });
    expect((await order(1)).map(([r]) => r)).toEqual([id(10), id(12), id(11)]);
  });

  test.each([
    ['position 0', 0],
    ['a negative position', -1],
    ['a position beyond size+1', 3],
  ])('%s → 400 "Position exceeds number of rules in chain"', async (_w, position) => {
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { type: 'accept' });
    const res = await h.api.post(`/chains/${id(1)}/rules`, T.rule, { type: 'accept', position });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe('Position exceeds number of rules in chain');
  });
});

describe('§1.4 Rule types', () => {
  test.each([
    ['a jump without jumpChainId → 400', { type: 'jump' }, 400],
    ['a dnat without natTargets → 400', { type: 'dnat', flowAction: 'accept' }, 400],
    ['a dnat with empty natTargets → 400', { type: 'dnat', flowAction: 'accept', natTargets: [] }, 400],
    [
      'a snat without flowAction → 400',
      { type: 'snat', natTargets: [{ addressFrom: '10.0.0.1', addressTo: '10.0.0.1', portFrom: 1, portTo: 2 }] },
      400,
    ],
    ['a rev_snat with a bad flowAction → 400', { type: 'rev_snat', flowAction: 'drop' }, 400],
    ['an unknown type → 400', { type: 'masquerade' }, 400],
    ['a missing type → 400', {}, 400],
    [
      'l4 fields with fragmentPolicy any → 400',
      { type: 'accept', tpDst: { start: 80, end: 80 }, fragmentPolicy: 'any' },
      400,
    ],
    ['each plain type is accepted (reject)', { type: 'reject' }, 201],
    ['each plain type is accepted (return)', { type: 'return' }, 201],
  ])('%s', async (_w, body, status) => {
    expect((await h.api.post(`/chains/${id(1)}/rules`, T.rule, body)).status).toBe(status);
  });

  test('the service jump rule of midonet-kubernetes round-trips with its condition fields', async () => {
    const body = {
      id: id(20),
      type: 'jump',
      dlType: 2048,
      nwDstAddress: '10.96.0.20',
      nwDstLength: 32,
      nwProto: 6,
      tpDst: { start: 80, end: 80 },
      jumpChainId: id(2),
    };
    await h.api.create(`/chains/${id(3)}/rules`, T.rule, body);
    const got = (await h.api.get(`/rules/${id(20)}`, T.rule)).json;
    expect(got).toMatchObject({ ...body, position: 1, fragmentPolicy: 'header', invNwDst: false, nwSrcAddress: null });
  });

  test.each([
    ['a plain rule without L4 match defaults to any', { type: 'accept' }, 'any'],
    ['a plain rule with tpDst defaults to header', { type: 'accept', tpDst: { start: 53, end: 53 } }, 'header'],
    [
      'forward NAT defaults to unfragmented',
      {
        type: 'dnat',
        flowAction: 'accept',
        natTargets: [{ addressFrom: '10.1.1.5', addressTo: '10.1.1.5', portFrom: 8080, portTo: 8080 }],
      },
      'unfragmented',
    ],
    [
      'a floating-IP style NAT (one target, from == to, ports 0, no L4) defaults to any',
      {
        type: 'snat',
        flowAction: 'continue',
        natTargets: [{ addressFrom: '10.1.1.5', addressTo: '10.1.1.5', portFrom: 0, portTo: 0 }],
      },
      'any',
    ],
  ])('fragmentPolicy: %s', async (_w, body, policy) => {
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, { id: id(30), ...body });
    expect((await h.api.get(`/rules/${id(30)}`, T.rule)).json.fragmentPolicy).toBe(policy);
  });

  test('the endpoint SNAT rule keeps its natTargets and flowAction', async () => {
    const natTargets = [{ addressFrom: '10.96.0.20', addressTo: '10.96.0.20', portFrom: 30000, portTo: 60000 }];
    await h.api.create(`/chains/${id(1)}/rules`, T.rule, {
      id: id(31),
      type: 'snat',
      dlType: 2048,
      nwSrcAddress: '10.1.1.5',
      nwSrcLength: 32,
      natTargets,
      flowAction: 'continue',
    });
    expect((await h.api.get(`/rules/${id(31)}`, T.rule)).json).toMatchObject({
      type: 'snat',
      natTargets,
      flowAction: 'continue',
    });
  });
});
