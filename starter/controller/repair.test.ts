import type { Observation } from '../../model/messages';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { WATCHED_KINDS } from '../../platform/kubernetes/kinds';
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
    expect(result).toEqual({ resend: resend ? [live] : [], gone: [] });
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
    expect(result).toEqual({ resend: [], gone: [] });
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
