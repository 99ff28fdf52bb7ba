import { invalidTranslation, TRANSLATION_LIMITS, validateResources } from './validate';

const C = '11111111-1111-4111-8111-111111111111';
const R = '22222222-2222-4222-8222-222222222222';
const chain = { kind: 'Chain', parent: '', body: JSON.stringify({ id: C, name: 'c' }) };
const rule = (id: string, extra: Record<string, unknown> = {}) => ({
  kind: 'Rule',
  parent: C,
  body: JSON.stringify({ id, type: 'accept', ...extra }),
});

describe('a Translation is validated whole before any of it is pushed', () => {
  const cases: { what: string; resources: { kind: string; parent?: string; body: string }[]; problems: string[] }[] = [
    { what: 'a well-formed Translation has no problem', resources: [chain, rule(R)], problems: [] },
    {
      what: 'an unknown kind is named with its index',
      resources: [chain, { kind: 'Vtep', body: '{}' }],
      problems: ['1 Vtep kind unknown kind "Vtep"'],
    },
    {
      what: 'a body that is not JSON is no bare SyntaxError',
      resources: [chain, { kind: 'Rule', parent: C, body: '{id:' }],
      problems: ['1 Rule body not JSON'],
    },
    {
      what: 'a child kind without its parent',
      resources: [{ kind: 'Rule', parent: '', body: JSON.stringify({ id: R, type: 'accept' }) }],
      problems: ['0 Rule parent a parent is required'],
    },
    {
      what: 'a field of the body is named by its path',
      resources: [
        chain,
        rule(R, { natTargets: [{ addressFrom: 'x', addressTo: '10.0.0.1', portFrom: 1, portTo: 1 }] }),
      ],
      problems: ['1 Rule body.natTargets[0].addressFrom'],
    },
    {
      what: 'the same ID twice names both places',
      resources: [chain, rule(R), rule(R, { type: 'drop' })],
      problems: [`2 Rule body.id Rule ${R} is listed twice (first at resources[1])`],
    },
    {
      what: 'every problem is listed, in order',
      resources: [{ kind: 'Vtep', body: '{}' }, chain, { kind: 'Chain', body: 'x' }],
      problems: ['0 Vtep kind', '2 Chain body not JSON'],
    },
  ];
  it.each(cases)('$what', ({ resources, problems }) => {
    const found = validateResources(resources as never).map((p) => `${p.index} ${p.kind} ${p.field} ${p.message}`);
    expect(found).toHaveLength(problems.length);
    problems.forEach((want, i) => expect(found[i]!.startsWith(want)).toBe(true));
  });

  it(`refuses more than ${TRANSLATION_LIMITS.resources} resources as a whole, and a body over ${TRANSLATION_LIMITS.bodyBytes} bytes`, () => {
    const many = Array.from({ length: TRANSLATION_LIMITS.resources + 1 }, () => chain);
    expect(validateResources(many as never)).toEqual([
      {
        field: 'resources',
        message: `${many.length} resources; at most ${TRANSLATION_LIMITS.resources} are accepted in one Translation`,
      },
    ]);
    const big = {
      kind: 'Chain',
      parent: '',
      body: JSON.stringify({ id: C, name: 'x'.repeat(TRANSLATION_LIMITS.bodyBytes) }),
    };
    expect(validateResources([big] as never)).toMatchObject([
      { index: 0, field: 'body', message: expect.stringMatching(/bytes; at most 16384/) as unknown },
    ]);
  });

  it('the refusal is non-retryable InvalidTranslation, lists five problems and counts the rest', () => {
    const resources = Array.from({ length: 8 }, () => ({ kind: 'Vtep', body: '{}' }));
    const failure = invalidTranslation('translation/ns/t', validateResources(resources as never));
    expect(failure).toMatchObject({ type: 'InvalidTranslation', nonRetryable: true });
    expect(failure.message).toMatch(
      /^translation\/ns\/t is invalid, nothing of it was pushed: resources\[0\] \(Vtep\) kind: /,
    );
    expect(failure.message).toMatch(/; and 3 more$/);
  });
});
