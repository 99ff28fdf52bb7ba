import type { KubeObject } from './objects';
import { normalizeReferrers, readReferrers, REFERRERS_ANNOTATION } from './referrers';

const objectWith = (annotation?: string): KubeObject => ({
  metadata: {
    name: 'n',
    uid: 'u',
    resourceVersion: '1',
    ...(annotation === undefined ? {} : { annotations: { [REFERRERS_ANNOTATION]: annotation } }),
  },
});

describe('referrers annotation', () => {
  it('sorts by kind, namespace and name, and keeps one entry per object', () => {
    expect(
      normalizeReferrers([
        { kind: 'Pod', namespace: 'b', name: 'x' },
        { kind: 'Endpoints', namespace: 'z', name: 'a' },
        { kind: 'Pod', namespace: 'a', name: 'y' },
        { kind: 'Pod', namespace: 'b', name: 'x' },
      ]),
    ).toEqual([
      { kind: 'Endpoints', namespace: 'z', name: 'a' },
      { kind: 'Pod', namespace: 'a', name: 'y' },
      { kind: 'Pod', namespace: 'b', name: 'x' },
    ]);
  });

  const cases: { what: string; annotation?: string; expected: object[] }[] = [
    { what: 'no annotation means no referrers', expected: [] },
    {
      what: 'a listed referrer is read back',
      annotation: '[{"kind":"Pod","namespace":"a","name":"p"}]',
      expected: [{ kind: 'Pod', namespace: 'a', name: 'p' }],
    },
    {
      what: 'text that is not JSON reads as empty, so the next write repairs it',
      annotation: 'not json',
      expected: [],
    },
    { what: 'JSON that is not a list reads as empty', annotation: '{"kind":"Pod"}', expected: [] },
    {
      what: 'entries of an unknown kind or without a name are dropped, the others kept',
      annotation: '[{"kind":"Deployment","name":"d"},{"kind":"Pod"},{"kind":"Node","name":"n1"}]',
      expected: [{ kind: 'Node', name: 'n1' }],
    },
  ];
  it.each(cases)('$what', ({ annotation, expected }) => {
    expect(readReferrers(objectWith(annotation))).toEqual(expected);
  });
});
