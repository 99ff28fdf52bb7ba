import type { Observation } from '../../model/messages';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { WATCHED_KINDS } from '../../platform/kubernetes/kinds';
import type { HeldTranslation } from './projection';
import { goneObservation, planRepair, type RepairInput, type RunningObject, type WatchScope } from './repair';
import { observation } from './testing/fakes';

const everything: WatchScope = { kinds: WATCHED_KINDS };
const web: RunningObject = { kind: 'Pod', name: 'web', uid: 'uid-1', namespace: 'default' };
const idsOf = (list: Observation[]) => list.map((obs) => `${obs.ref.kind}/${obs.ref.name}#${obs.uid}`);

describe('planRepair', () => {
  const plan = (input: Partial<RepairInput>) =>
    planRepair({ running: new Map(), live: [], synced: true, confirmed: () => true, scope: everything, ...input });

  it.each<{ what: string; live: Observation; confirmed?: boolean; running?: string[]; resend: boolean }>([
    { what: 'a delivered object whose workflow is not running is sent again', live: observation(), resend: true },
    {
      what: 'an object whose workflow runs is left alone',
      live: observation(),
      running: ['pod/default/web'],
      resend: false,
    },
    {
      what: 'an object never confirmed as delivered is left to the queue and the re-list',
      live: observation(),
      confirmed: false,
      resend: false,
    },
    {
      what: 'an object being deleted with no finalizer of ours needs no workflow',
      live: observation({ deleting: true, finalizers: ['example.com/other'] }),
      resend: false,
    },
    {
      what: 'an object being deleted while a finalizer of ours waits needs its workflow',
      live: observation({ deleting: true, finalizers: [TRANSLATION_FINALIZER] }),
      resend: true,
    },
  ])('$what', ({ live, confirmed = true, running = [], resend }) => {
    const result = plan({
      live: [live],
      confirmed: () => confirmed,
      running: new Map(running.map((id) => [id, web])),
    });
    expect(result).toEqual({ resend: resend ? [live] : [], gone: [], orphaned: [] });
  });

  it('tells a running workflow whose object no list shows that it is gone, with its uid', () => {
    const result = plan({ running: new Map([['pod/default/web', web]]), confirmed: () => false });
    expect(result.resend).toEqual([]);
    expect(result.gone.map((obs) => ({ ref: obs.ref, uid: obs.uid, gone: obs.gone }))).toEqual([
      { ref: { kind: 'Pod', namespace: 'default', name: 'web' }, uid: 'uid-1', gone: true },
    ]);
  });

  it('tells no workflow it is gone before every kind is listed: the picture is not complete', () => {
    const result = plan({ running: new Map([['pod/default/web', web]]), confirmed: () => false, synced: false });
    expect(result).toEqual({ resend: [], gone: [], orphaned: [] });
  });

  it('does not tell a workflow again what it was told already (its gone was delivered)', () => {
    const result = plan({ running: new Map([['pod/default/web', web]]), confirmed: (obs) => obs.gone });
    expect(result.gone).toEqual([]);
  });

  it('tells only the workflows no live object has, and resends only the objects no running workflow has', () => {
    const db = observation({ ref: { kind: 'Pod', namespace: 'default', name: 'db' }, uid: 'uid-2' });
    const result = plan({
      live: [observation(), db],
      running: new Map([
        ['pod/default/web', web],
        ['node/node-1', { kind: 'Node', name: 'node-1', uid: 'n-1' }],
      ]),
      confirmed: (obs) => !obs.gone,
    });
    expect({ resend: idsOf(result.resend), gone: idsOf(result.gone) }).toEqual({
      resend: ['Pod/db#uid-2'],
      gone: ['Node/node-1#n-1'],
    });
  });
});

describe('planRepair: Translations held by our finalizer', () => {
  const plan = (input: Partial<RepairInput>) =>
    planRepair({ running: new Map(), live: [], synced: true, confirmed: () => true, scope: everything, ...input });
  // The seed-82 case: Pod web's first incarnation (uid-1) deleted, its workflow failed before it finalized; the
  // garbage collector deleted its Translations and our finalizer holds them.
  const held: HeldTranslation = {
    observation: observation({
      ref: { kind: 'Translation', namespace: 'default', name: 'pod-mac.4.web-mac-0a580a22f304' },
      uid: 't-1',
      deleting: true,
      finalizers: [TRANSLATION_FINALIZER],
      projection: { resources: [] },
    }),
    owner: { kind: 'Pod', namespace: 'default', name: 'web', uid: 'uid-1' },
  };
  const secondWeb = observation({ uid: 'uid-2' });

  it.each<{ what: string; input: Partial<RepairInput>; orphaned: boolean }>([
    { what: 'its owner gone and no workflow running for the name: orphaned', input: {}, orphaned: true },
    {
      what: 'a new incarnation of its owner live, its workflow serving that one: orphaned (it only finalizes its own)',
      input: { live: [secondWeb], running: new Map([['pod/default/web', { ...web, uid: 'uid-2' }]]) },
      orphaned: true,
    },
    {
      what: 'a new incarnation of its owner live, its workflow not running yet: left to the next repair (the run this one starts lets go of the one of its own name first)',
      input: { live: [secondWeb] },
      orphaned: false,
    },
    {
      what: 'its owner gone and its workflow serving it: that workflow finalizes it',
      input: { running: new Map([['pod/default/web', web]]) },
      orphaned: false,
    },
    {
      what: 'its owner live with that uid: its workflow, started again if it must be, finalizes it',
      input: { live: [observation()] },
      orphaned: false,
    },
    {
      what: 'its own workflow running already: left to it',
      input: {
        running: new Map([['translation/default/pod-mac.4.web-mac-0a580a22f304', { kind: 'Translation', uid: 't-1' }]]),
      },
      orphaned: false,
    },
    { what: 'before every kind is listed: the picture is not complete', input: { synced: false }, orphaned: false },
  ])('$what', ({ input, orphaned }) => {
    expect(plan({ ...input, held: [held] }).orphaned).toEqual(orphaned ? [held] : []);
  });

  it('the Translation workflow started for it is not told its Translation is gone: the list shows it', () => {
    const id = 'translation/default/pod-mac.4.web-mac-0a580a22f304';
    const running = new Map<string, RunningObject>([
      [id, { kind: 'Translation', name: held.observation.ref.name, namespace: 'default', uid: 't-1' }],
    ]);
    expect(plan({ running, held: [held], confirmed: () => false }).gone).toEqual([]);
    expect(idsOf(plan({ running, confirmed: () => false }).gone)).toEqual([
      `Translation/${held.observation.ref.name}#t-1`,
    ]);
  });
});

describe('goneObservation', () => {
  it.each<{ what: string; id: string; object: RunningObject; scope?: WatchScope; told: boolean }>([
    { what: 'a watched Pod is told', id: 'pod/default/web', object: web, told: true },
    {
      what: 'a Node is told whatever namespace is watched (Nodes are not namespaced)',
      id: 'node/node-1',
      object: { kind: 'Node', name: 'node-1', uid: 'n-1' },
      scope: { kinds: WATCHED_KINDS, namespace: 'team-a' },
      told: true,
    },
    {
      what: 'a Pod outside the watched namespace is not ours to tell',
      id: 'pod/default/web',
      object: web,
      scope: { kinds: WATCHED_KINDS, namespace: 'team-a' },
      told: false,
    },
    {
      what: 'a kind this starter does not watch is not ours to tell',
      id: 'pod/default/web',
      object: web,
      scope: { kinds: ['Node'] },
      told: false,
    },
    {
      what: 'a peer pod is left to its own checks',
      id: 'peerpod/default/web',
      object: { ...web, kind: 'PeerPod' },
      told: false,
    },
    {
      what: 'a workflow whose search attributes do not name its object (no uid) is left alone',
      id: 'pod/default/web',
      object: { ...web, uid: undefined },
      told: false,
    },
    {
      what: 'a workflow whose id is not its object’s is left alone',
      id: 'pod/default/other',
      object: web,
      told: false,
    },
  ])('$what', ({ id, object, scope = everything, told }) => {
    const gone = goneObservation(id, object, scope);
    expect(gone === undefined ? undefined : { uid: gone.uid, gone: gone.gone }).toEqual(
      told ? { uid: object.uid, gone: true } : undefined,
    );
  });
});
