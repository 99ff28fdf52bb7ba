import type { KubeObject } from './objects';
import { finalizerNames, LEGACY_REFERRERS, REFERRERS_FINALIZER } from '../../model/vocabulary';
import { normalizeReferrers, readReferrers, referrersFinalizers, REFERRERS_ANNOTATION } from './referrers';

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

describe('referrers written by an earlier Steward under steward.midonet.org/', () => {
  it('reads the old annotation when the new one is absent, and the new one first', () => {
    const refs = JSON.stringify([{ kind: 'Pod', namespace: 'a', name: 'old' }]);
    const old: KubeObject = {
      metadata: { name: 'n', uid: 'u', resourceVersion: '1', annotations: { [LEGACY_REFERRERS]: refs } },
    };
    expect(readReferrers(old)).toEqual([{ kind: 'Pod', namespace: 'a', name: 'old' }]);
    old.metadata.annotations![REFERRERS_ANNOTATION] = JSON.stringify([{ kind: 'Pod', namespace: 'a', name: 'new' }]);
    expect(readReferrers(old)).toEqual([{ kind: 'Pod', namespace: 'a', name: 'new' }]);
  });

  it.each<[string, string[], boolean, boolean, string[] | undefined]>([
    ['held under its name: unchanged', ['x', REFERRERS_FINALIZER], false, true, undefined],
    ['not held and not wanted: unchanged', ['x'], false, false, undefined],
    ['wanted: added last', ['x'], false, true, ['x', REFERRERS_FINALIZER]],
    ['no longer wanted: removed', [REFERRERS_FINALIZER, 'x'], false, false, ['x']],
    ['held under the old name: renamed', [LEGACY_REFERRERS, 'x'], false, true, ['x', REFERRERS_FINALIZER]],
    [
      'held under the old name while deleting: kept, since none may be added',
      ['x', LEGACY_REFERRERS],
      true,
      true,
      undefined,
    ],
    ['under both names: the old one goes', [LEGACY_REFERRERS, REFERRERS_FINALIZER], false, true, [REFERRERS_FINALIZER]],
    ['the old name is released with the last referrer', [LEGACY_REFERRERS, 'x'], true, false, ['x']],
  ])('%s', (_what, finalizers, deleting, hold, expected) => {
    expect(referrersFinalizers(finalizers, deleting, hold)).toEqual(expected);
  });

  it('releasing the referrers finalizer releases its old name too', () => {
    expect(finalizerNames(REFERRERS_FINALIZER)).toEqual([REFERRERS_FINALIZER, LEGACY_REFERRERS]);
    expect(finalizerNames('midonet.org/deleter')).toEqual(['midonet.org/deleter']);
  });
});
