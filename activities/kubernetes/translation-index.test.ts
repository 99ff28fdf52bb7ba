import { identify } from '../midonet/client';
import { sampleClusterTranslations } from '../../model/translation/sample-cluster';
import type { BackendResource } from '../../model/translation/types';
import { createTranslationIndex, type TranslationIndex } from './translation-index';

const id = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
const chain = (n: number): BackendResource => ({
  kind: 'Chain',
  parent: '',
  body: JSON.stringify({ id: id(n), name: `c${n}` }),
});
const port = (n: number, bridge: number): BackendResource => ({
  kind: 'Port',
  parent: id(bridge),
  body: JSON.stringify({ id: id(n), type: 'Bridge' }),
});

interface Options {
  created?: string;
  recorded?: BackendResource[];
  pending?: BackendResource[];
  /** Pending and tried by a failed push (status state `tried`). */
  tried?: BackendResource[];
  deleting?: boolean;
  ready?: { status: string; reason: string };
}

function translation(
  name: string,
  resources: BackendResource[],
  { created = '2026-01-01T00:00:00Z', recorded = [], pending = [], tried = [], deleting = false, ready }: Options = {},
) {
  return {
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: new Date(created),
      ...(deleting ? { deletionTimestamp: new Date(created) } : {}),
    },
    resources,
    status: {
      childResources: [
        ...recorded.map((r) => ({ kind: r.kind, id: identify(r).id, state: 'synced' })),
        ...pending.map((r) => ({ kind: r.kind, id: identify(r).id, state: 'pending' })),
        ...tried.map((r) => ({ kind: r.kind, id: identify(r).id, state: 'tried' })),
      ],
      conditions: ready ? [{ type: 'Ready', ...ready }] : [],
    },
  };
}

const key = (r: BackendResource) => identify(r).key;

/** An index given each Translation as its event carries it: whole, or as the digest the worker's watch keeps. */
const forms: [string, (index: TranslationIndex) => TranslationIndex][] = [
  ['whole', (index) => index],
  [
    'as the digests the worker’s watch keeps',
    (index) => ({ ...index, apply: ({ type, object }) => index.apply({ type, object: index.digest(object) }) }),
  ],
];

describe.each(forms)('the Translation index, given Translations %s', (_form, given) => {
  const newIndex = () => given(createTranslationIndex());
  test('a resource recorded by another Translation is owned by it; one only listed, or recorded by itself, is not', () => {
    const index = newIndex();
    index.apply({ type: 'upsert', object: translation('a', [chain(1)], { recorded: [chain(1)] }) });
    index.apply({
      type: 'upsert',
      object: translation('b', [chain(1), chain(2)], { created: '2026-01-02T00:00:00Z' }),
    });
    expect(index.ownerOf(key(chain(1)), 'translation/ns/b')).toBe('translation/ns/a');
    expect(index.ownerOf(key(chain(1)), 'translation/ns/a')).toBeUndefined();
    expect(index.ownerOf(key(chain(2)), 'translation/ns/b')).toBeUndefined();
    // Unknown to the index yet (its watch event has not arrived): whoever records it owns it.
    expect(index.ownerOf(key(chain(1)), 'translation/ns/new')).toBe('translation/ns/a');
  });

  test('two that both record a resource resolve to the one created first, whichever asks', () => {
    const index = newIndex();
    index.apply({
      type: 'upsert',
      object: translation('late', [chain(1)], { created: '2026-01-02T00:00:00Z', recorded: [chain(1)] }),
    });
    index.apply({
      type: 'upsert',
      object: translation('early', [chain(1)], { created: '2026-01-01T00:00:00Z', recorded: [chain(1)] }),
    });
    expect(index.ownerOf(key(chain(1)), 'translation/ns/late')).toBe('translation/ns/early');
    expect(index.ownerOf(key(chain(1)), 'translation/ns/early')).toBeUndefined();
  });

  test("what Steward derives for an object is its Translation's, though a hand-written one pushed it first: that one yields it", () => {
    const index = newIndex();
    const squatter = translation('squatter', [port(5, 1)], { recorded: [port(5, 1)] });
    const ofPod = (t: ReturnType<typeof translation>) => ({
      ...t,
      metadata: {
        ...t.metadata,
        labels: { 'midonet.org/owner-uid': 'uid-web' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'uid-web' }],
      },
    });
    const created = '2026-01-02T00:00:00Z';
    const owned = ofPod(translation('pod.4.web', [port(5, 1)], { created }));
    index.apply({ type: 'upsert', object: squatter });
    // Not seen by the watch yet: ranked by what the API server says it is.
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/pod.4.web')).toBe('translation/ns/squatter');
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/pod.4.web', { takeover: true })).toBeUndefined();
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/pod.4.web', { takeover: false })).toBe(
      'translation/ns/squatter',
    );
    expect([...index.yielding([key(port(5, 1))], 'translation/ns/pod.4.web', { takeover: true })]).toEqual([
      ['translation/ns/squatter', [key(port(5, 1))]],
    ]);

    index.apply({ type: 'upsert', object: owned });
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/pod.4.web')).toBeUndefined();
    expect(index.recordedByOthers(key(port(5, 1)), 'translation/ns/pod.4.web')).toBe(false);
    expect([...index.yielding([key(port(5, 1)), key(port(6, 1))], 'translation/ns/pod.4.web')]).toEqual([
      ['translation/ns/squatter', [key(port(5, 1))]],
    ]);
    // Once the derived one is about to push it (pending), the hand-written one is refused it, and its deletion leaves
    // it; a hand-written one's pending claims nothing.
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/squatter')).toBeUndefined();
    // Tried by a failed push of its own, it claims it as pending does.
    index.apply({
      type: 'upsert',
      object: ofPod(translation('pod.4.web', [port(5, 1)], { created, tried: [port(5, 1)] })),
    });
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/squatter')).toBe('translation/ns/pod.4.web');
    index.apply({ type: 'upsert', object: owned });
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/squatter')).toBeUndefined();
    index.apply({
      type: 'upsert',
      object: ofPod(translation('pod.4.web', [port(5, 1)], { created, pending: [port(5, 1)] })),
    });
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/squatter')).toBe('translation/ns/pod.4.web');
    index.apply({ type: 'upsert', object: translation('other', [port(7, 1)], { created, pending: [port(7, 1)] }) });
    expect(index.ownerOf(key(port(7, 1)), 'translation/ns/squatter')).toBeUndefined();
    index.apply({
      type: 'upsert',
      object: ofPod(translation('pod.4.web', [port(5, 1)], { created, recorded: [port(5, 1)] })),
    });
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/squatter')).toBe('translation/ns/pod.4.web');
    expect(index.recordedByOthers(key(port(5, 1)), 'translation/ns/squatter')).toBe(true);
    expect(index.yielding([key(port(5, 1))], 'translation/ns/squatter').size).toBe(0);
    // Two hand-written ones: the senior owns it, as before.
    index.apply({
      type: 'upsert',
      object: translation('late', [port(5, 1)], { created: '2026-01-03T00:00:00Z', recorded: [port(5, 1)] }),
    });
    expect(index.ownerOf(key(port(5, 1)), 'translation/ns/late')).toBe('translation/ns/squatter');
  });

  test('a Translation being deleted or gone owns nothing; an update replaces what it recorded', () => {
    const index = newIndex();
    index.apply({ type: 'upsert', object: translation('a', [chain(1)], { recorded: [chain(1)], deleting: true }) });
    expect(index.ownerOf(key(chain(1)), 'translation/ns/b')).toBeUndefined();
    index.apply({ type: 'upsert', object: translation('a', [chain(1)], { recorded: [chain(1)] }) });
    expect(index.ownerOf(key(chain(1)), 'translation/ns/b')).toBe('translation/ns/a');
    index.apply({ type: 'upsert', object: translation('a', [chain(2)], { recorded: [chain(2)] }) });
    expect(index.ownerOf(key(chain(1)), 'translation/ns/b')).toBeUndefined();
    index.apply({ type: 'delete', object: translation('a', [chain(2)], { recorded: [chain(2)] }) });
    expect(index.ownerOf(key(chain(2)), 'translation/ns/b')).toBeUndefined();
  });

  test('finds who names an ID as a resource, a parent or inside a body, and for a created ID those it concerns', () => {
    const index = newIndex();
    const route: BackendResource = {
      kind: 'Route',
      parent: id(90),
      body: JSON.stringify({ id: id(7), nextHopPort: id(5) }),
    };
    index.apply({
      type: 'upsert',
      object: translation('bridge', [{ kind: 'Bridge', parent: '', body: JSON.stringify({ id: id(1) }) }]),
    });
    index.apply({
      type: 'upsert',
      object: translation('pod', [port(5, 1)], { ready: { status: 'False', reason: 'MidonetDependencyMissing' } }),
    });
    index.apply({ type: 'upsert', object: translation('route', [route]) });
    expect(index.mentioning([id(1)], 'translation/ns/bridge')).toEqual(['translation/ns/pod']);
    expect(index.mentioning([id(5)], 'translation/ns/pod').sort()).toEqual(['translation/ns/route']);
    expect(index.mentioning([id(5), id(1)], 'translation/ns/x').sort()).toEqual([
      'translation/ns/bridge',
      'translation/ns/pod',
      'translation/ns/route',
    ]);
    // Created: those waiting for it, and none that has pushed nothing yet (it pushes after the creation anyway).
    expect(index.mentioning([id(5), id(1)], 'translation/ns/x', { created: true })).toEqual(['translation/ns/pod']);
    // One whose record says its route is pushed, though the port it names was missing (MidoNet took the route with
    // the port, or refused it): told, or it stays Ready without its route until its drift check.
    index.apply({
      type: 'upsert',
      object: translation('route', [route], { recorded: [route], ready: { status: 'True', reason: 'Synced' } }),
    });
    expect(index.mentioning([id(5)], 'translation/ns/x', { created: true }).sort()).toEqual([
      'translation/ns/pod',
      'translation/ns/route',
    ]);
    expect(index.mentioning([id(99)], 'translation/ns/x')).toEqual([]);
  });

  test("midonet-kubernetes' own translation never has two Translations list one resource: none is refused for a claim", () => {
    const index = newIndex();
    const all = sampleClusterTranslations();
    for (const t of all)
      index.apply({
        type: 'upsert',
        object: {
          ...translation(t.name, t.resources, { recorded: t.resources }),
          metadata: { name: t.name, namespace: t.namespace },
        },
      });
    const claimed = all.flatMap((t) =>
      t.resources
        .filter((r) => index.ownerOf(key(r), `translation/${t.namespace}/${t.name}`))
        .map((r) => `${t.name}: ${key(r)}`),
    );
    expect(claimed).toEqual([]);
    expect(all.reduce((n, t) => n + t.resources.length, 0)).toBeGreaterThan(50);
  });

  test("names the workflow that pushes each one: its owner's for an owned Translation, never the teller's own", () => {
    const index = newIndex();
    const owned = (name: string, owner: string, resources: BackendResource[]) => {
      const t = translation(name, resources, { recorded: resources });
      return {
        ...t,
        metadata: {
          ...t.metadata,
          labels: { 'midonet.org/owner-uid': `uid-${owner}` },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: owner, uid: `uid-${owner}` }],
        },
      };
    };
    index.apply({ type: 'upsert', object: owned('pod.4.web', 'web', [port(11, 1)]) });
    index.apply({ type: 'upsert', object: owned('pod-mac.4.web', 'web', [port(12, 1)]) });
    index.apply({ type: 'upsert', object: owned('pod.4.db', 'db', [port(13, 1)]) });
    index.apply({ type: 'upsert', object: translation('hand', [port(14, 1)], { recorded: [port(14, 1)] }) });
    // The bridge went: each pushing workflow once, and not web's, which tells.
    expect(index.mentioning([id(1)], 'translation/ns/pod.4.web').sort()).toEqual(['pod/ns/db', 'translation/ns/hand']);
  });

  test('is seen Ready while its last event says Ready=True and not being deleted', () => {
    const index = newIndex();
    const ref = (name: string) => ({ namespace: 'ns', name });
    const ready = { status: 'True', reason: 'Pushed' };
    index.apply({ type: 'upsert', object: translation('up', [chain(1)], { ready }) });
    index.apply({ type: 'upsert', object: translation('down', [chain(2)], { ready: { ...ready, status: 'False' } }) });
    index.apply({ type: 'upsert', object: translation('going', [chain(3)], { ready, deleting: true }) });
    index.apply({ type: 'upsert', object: translation('silent', [chain(4)]) });
    expect(['up', 'down', 'going', 'silent', 'unseen'].map((n) => index.seenReady(ref(n)))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    index.apply({ type: 'upsert', object: translation('up', [chain(1)], { ready: { ...ready, status: 'False' } }) });
    expect(index.seenReady(ref('up'))).toBe(false);
    index.apply({ type: 'upsert', object: translation('down', [chain(2)], { ready }) });
    index.apply({ type: 'delete', object: translation('down', [chain(2)], { ready }) });
    expect(index.seenReady(ref('down'))).toBe(false);
  });
});

test('a digest keeps only what the informer follows a Translation by, and the entry the index reads', () => {
  const index = createTranslationIndex();
  const whole = {
    ...translation('a', [chain(1)], { recorded: [chain(1)] }),
    metadata: { name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '7', labels: { x: 'y' } },
  };
  const digest = index.digest(whole);
  expect(Object.keys(digest)).toEqual(['metadata', 'entry']);
  expect(digest.metadata).toEqual({ name: 'a', namespace: 'ns', uid: 'uid-a', resourceVersion: '7' });
  expect(digest.entry.records).toEqual([key(chain(1))]);
});
