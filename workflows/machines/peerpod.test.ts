import { initialTransition } from 'xstate';
import type { Observation } from '../../model/messages';
import {
  expectGivingUpOnlyWhenEnding,
  expectOperatorActionsRecorded,
  machineEdges,
  scenarioRunner,
  timerAndOperatorEvents,
} from './testing/lifecycle-machine';
import { PEERPOD_FINALIZER } from '../../model/vocabulary';
import { peerPodLifecycleMachine, peerPodMachine, type PeerPodEvent } from './peerpod';
import { stateName } from './common';
import { lifecycleStates } from '.';
import { vmName } from '../../model/vm-naming';

const ref = { kind: 'PeerPod' as const, namespace: 'default', name: 'web' };
const at = '2026-01-01T00:00:00.000Z';
const request = { requestedBy: 'bob', reason: 'test' };
const vm = { provider: 'libvirt', instanceId: '0b0c6c39-5d3a-4b3e-9d0e-3f7f1c2a4e10' };

const pod = (overrides: Partial<Observation> = {}): Observation => ({
  ref,
  uid: 'pod-u1',
  generation: 0,
  deleting: false,
  gone: false,
  finalizers: [],
  projection: { source: 'Pod', runtimeClassName: 'kata-remote' },
  ...overrides,
});
const peerPod = (
  overrides: Partial<Observation> = {},
  spec: { instanceID?: string; ownerUid?: string; ownerName?: string } = {
    instanceID: vm.instanceId,
    ownerUid: 'pod-u1',
  },
): Observation => ({
  ref,
  uid: 'pp-u1',
  generation: 1,
  deleting: false,
  gone: false,
  finalizers: [PEERPOD_FINALIZER],
  projection: { source: 'PeerPod', cloudProvider: 'libvirt', ...spec },
  ...overrides,
});

/** One sample of every event, with the variations that lead to different transitions. */
const events: PeerPodEvent[] = [
  { type: 'observed', observation: pod(), at },
  { type: 'observed', observation: pod({ deleting: true }), at },
  { type: 'observed', observation: pod({ gone: true }), at },
  { type: 'observed', observation: pod({ uid: 'pod-u2' }), at },
  { type: 'observed', observation: peerPod(), at },
  { type: 'observed', observation: peerPod({ deleting: true }), at },
  { type: 'observed', observation: peerPod({ deleting: true, finalizers: [] }), at },
  { type: 'observed', observation: peerPod({ gone: true, finalizers: [] }), at },
  { type: 'vmCreated', vm, at },
  { type: 'peerPodRecorded', name: 'web', uid: 'pp-u1', at },
  { type: 'vmObserved', exists: true, at },
  { type: 'vmObserved', exists: false, at },
  { type: 'podRead', uid: 'pod-u1', at },
  { type: 'podRead', at },
  { type: 'vmDeleted', at },
  { type: 'released', at },
  { type: 'eventRecorded', at },
  { type: 'actionFailed', action: 'deleteVm', reason: 'CloudUnavailable', message: 'libvirtd is down', at },
  { type: 'backendChanged', notice: { by: 'the cloud answers again', ids: [] }, at },
  ...timerAndOperatorEvents(at, request, ['retry', 'orphan']),
  // cloud-api-adaptor's PeerPod (no cloud recorded, its owner named) being deleted.
  {
    type: 'observed',
    observation: peerPod({ deleting: true }, { instanceID: vm.instanceId, ownerUid: 'pod-u1', ownerName: 'web' }),
    at,
  },
  { type: 'vmMadeElsewhere', peerPod: 'web-resource-x7k2p', at },
  { type: 'olderRetired', at },
  { type: 'vmObserved', exists: true, state: 'stopped', at },
  { type: 'vmStarted', exists: true, at },
  { type: 'vmStarted', exists: false, at },
];

type Snapshot = ReturnType<typeof initialTransition<typeof peerPodMachine>>[0];
const key = (s: Snapshot) => {
  const c = s.context;
  return JSON.stringify([
    s.value,
    c.uid,
    c.pod,
    c.peerPod,
    !!c.intent,
    !!c.vm,
    c.recorded,
    !!c.orphanedVm,
    c.resumeTo,
    !!c.nextIncarnation,
    !!c.lastError,
    c.trackedBy,
    c.owner,
    c.vmState,
  ]);
};
const edges = machineEdges(peerPodMachine, { ref }, events, key);
const value = (s: Snapshot) => stateName(s.value);
/** The VM may exist: created, recorded by a PeerPod, or asked for with the reply still out. */
const mayHaveVm = (s: Snapshot) => s.context.vm !== undefined || s.context.intent !== undefined;
/** Someone else (cloud-api-adaptor) removed the finalizer of a PeerPod we never served: its VM is theirs. */
const givenUp = (s: Snapshot) => s.context.actions.some((a) => a.action === 'cleanup' && a.mode !== 'retry');
const releasedByOthers = (s: Snapshot) =>
  s.context.pod === undefined && s.context.peerPod !== undefined && !s.context.peerPod.held;
const ending = (s: Snapshot) =>
  (s.context.pod?.gone ?? false) || (s.context.peerPod?.deleting ?? false) || (s.context.peerPod?.gone ?? false);

describe('peer-pod machine: every transition', () => {
  it('reaches every state it declares (the deciding ones, ending and resuming are passed through)', () => {
    const reached = new Set(edges.map((e) => value(e.to)));
    const declared = lifecycleStates('PeerPod').filter(
      (s) => !['deciding', 'ending', 'resuming'].includes(s.split('.').at(-1)!),
    );
    expect([...reached].sort()).toEqual(declared.sort());
    expect(edges.length).toBeGreaterThan(200);
  });

  it('never finishes while a VM may exist, unless an operator gave it up (then it is recorded as orphaned)', () => {
    const leaks = edges.filter(
      (e) => value(e.to) === 'done' && mayHaveVm(e.to) && !releasedByOthers(e.to) && !givenUp(e.to),
    );
    expect(leaks.map((e) => `${value(e.from)} --${e.event.type}-->`)).toEqual([]);
    const orphaned = edges.filter((e) => value(e.to) === 'done' && e.to.context.orphanedVm);
    for (const e of orphaned)
      expect(e.to.context.actions.some((a) => a.action === 'cleanup' && a.mode !== 'retry')).toBe(true);
  });

  it('releases the PeerPod only once the VM is deleted, or given up by an operator', () => {
    const early = edges.filter((e) => e.actions.includes('release') && mayHaveVm(e.to) && !givenUp(e.to));
    expect(early.map((e) => `${value(e.from)} --${e.event.type}--> ${value(e.to)}`)).toEqual([]);
  });

  it('starts a VM found shut off only for a live Pod whose VM Steward made; one it did not make is said, not started', () => {
    const starts = edges.filter((e) => e.actions.includes('startVm'));
    expect(starts.length).toBeGreaterThan(0);
    for (const e of starts) {
      expect(ending(e.to)).toBe(false);
      expect(e.to.context.pod?.gone).toBe(false);
      expect(e.to.context.trackedBy).toBeUndefined();
    }
    const saidOnly = edges.filter(
      (e) =>
        e.event.type === 'vmObserved' &&
        e.event.state === 'stopped' &&
        value(e.from) === 'tracked.checkingVm' &&
        value(e.to) === 'tracked.tracking' &&
        !ending(e.to),
    );
    expect(saidOnly.length).toBeGreaterThan(0);
    for (const e of saidOnly) {
      expect(e.actions).not.toContain('startVm');
      expect(e.to.context.lastError?.reason).toBe('VmShutOff');
    }
  });

  it('never creates a VM for a pod that is going, nor for a PeerPod alone', () => {
    const creates = edges.filter((e) => e.actions.includes('createVm'));
    expect(creates.length).toBeGreaterThan(0);
    for (const e of creates) {
      expect(ending(e.to)).toBe(false);
      expect(e.to.context.pod).toBeDefined();
      // The intent (the name) is recorded before the cloud is called, and it is the same name on every retry; a VM
      // made again after one was lost has a name of its own.
      expect(e.to.context.intent?.name).toBe(vmName('web', e.to.context.uid ?? '', e.to.context.vmReplacements));
    }
  });

  it('never makes a second VM, nor writes a PeerPod, for a Pod whose VM someone else made', () => {
    const tracked = edges.filter((e) => e.from.context.trackedBy !== undefined);
    expect(tracked.length).toBeGreaterThan(0);
    expect(
      tracked
        .filter((e) => e.actions.includes('createVm') || e.actions.includes('recordPeerPod'))
        .map((e) => `${value(e.from)} --${e.event.type}--> ${value(e.to)}`),
    ).toEqual([]);
  });

  it('once the pod goes, it deletes the VM after the step in flight', () => {
    const idle = edges.filter((e) => ending(e.to) && mayHaveVm(e.to) && value(e.to).endsWith('tracking'));
    expect(idle.map((e) => `${value(e.from)} --${e.event.type}--> ${value(e.to)}`)).toEqual([]);
  });

  it('records every operator action it accepts, with who asked and why', () => {
    expectOperatorActionsRecorded(edges, { requestedBy: 'bob', reason: 'test', at });
  });

  it('gives up (orphan, force) only a lifecycle whose object is on its way out, or when told even if live', () => {
    expectGivingUpOnlyWhenEnding(
      edges,
      (c) => (c.pod?.gone ?? false) || (c.peerPod?.deleting ?? false) || (c.peerPod?.gone ?? false),
    );
  });
});

const run = scenarioRunner(peerPodMachine, { ref }, (a) => ({ type: a.type, params: a.params }));
const types = (r: ReturnType<typeof run>) => r.actions.map((a) => a.type);
const [
  podSeen,
  podDeleting,
  ,
  otherPod,
  peerPodSeen,
  peerPodDeleting,
  peerPodReleasedByOthers,
  ,
  created,
  recorded,
  vmFound,
  vmMissing,
  podLivesOn,
  podGoneUnseen,
  deleted,
  released,
  ,
  failed,
  cloudBack,
  retry,
  driftCheck,
] = events as [PeerPodEvent, ...PeerPodEvent[]];
const cleanup = (mode: 'retry' | 'orphan'): PeerPodEvent => ({ type: 'cleanup', request: { ...request, mode }, at });
const olderRetired = events.find((e) => e.type === 'olderRetired')!;
const madeElsewhere = events.find((e) => e.type === 'vmMadeElsewhere')!;
const createdAndRecorded: PeerPodEvent = { type: 'vmCreated', vm, peerPod: { name: 'web', uid: 'pp-u1' }, at };

describe('peer-pod machine: scenarios', () => {
  it.each([
    ['a peer pod gets a VM under the name recorded first', [podSeen], 'own.creatingVm', ['createVm']],
    ['then its PeerPod', [podSeen, created!], 'own.recordingPeerPod', ['recordPeerPod']],
    ['then it is tracked, with a drift timer', [podSeen, created!, recorded!], 'own.tracking', ['startTimer']],
    [
      'the pod going deletes the VM',
      [podSeen, created!, recorded!, podDeleting!],
      'deletingVm',
      ['cancelTimer', 'deleteVm'],
    ],
    ['then releases the PeerPod', [podSeen, created!, recorded!, podDeleting!, deleted!], 'releasing', ['release']],
    ['and ends', [podSeen, created!, recorded!, podDeleting!, deleted!, released!], 'done', []],
    [
      'a pod deleted while its VM is created still gets it deleted',
      [podSeen, podDeleting!, created!],
      'deletingVm',
      ['deleteVm'],
    ],
    [
      'a pod deleted before its PeerPod was written: the VM is deleted, nothing to release',
      [podSeen, created!, podDeleting!, failed!],
      'stuck',
      ['recordEvent', 'startTimer'],
    ],
    [
      "a PeerPod alone (cloud-api-adaptor's) first has the older PeerPods of its Pod deleted (upstream #1510)",
      [peerPodSeen!],
      'tracked.retiringOlder',
      ['retireOlderPeerPods'],
    ],
    ['then the VM it names is looked for', [peerPodSeen!, olderRetired], 'tracked.checkingVm', ['observeVm']],
    [
      'then it is tracked, never given a VM',
      [peerPodSeen!, olderRetired, vmFound!],
      'tracked.tracking',
      ['startTimer'],
    ],
    [
      'a PeerPod alone naming a VM the cloud does not have says so (Warning Event, last error) and makes none',
      [peerPodSeen!, olderRetired, vmMissing!],
      'tracked.tracking',
      ['recordEvent', 'startTimer'],
    ],
    [
      'its deletion with the finalizer still there deletes the VM it names (the failure path)',
      [peerPodSeen!, olderRetired, vmFound!, peerPodDeleting!],
      'deletingVm',
      ['cancelTimer', 'deleteVm'],
    ],
    [
      'a PeerPod released by someone else needs nothing',
      [peerPodSeen!, olderRetired, vmFound!, peerPodReleasedByOthers!],
      'done',
      ['cancelTimer'],
    ],
    [
      'a failed VM deletion is stuck, shown by a Warning Event, retried by a timer',
      [peerPodSeen!, olderRetired, vmFound!, peerPodDeleting!, failed!],
      'stuck',
      ['recordEvent', 'startTimer'],
    ],
    [
      'the stuck timer retries the deletion',
      [peerPodSeen!, olderRetired, vmFound!, peerPodDeleting!, failed!, retry!],
      'deletingVm',
      ['cancelTimer', 'deleteVm'],
    ],
    [
      'the cloud answering again retries now',
      [peerPodSeen!, olderRetired, vmFound!, peerPodDeleting!, failed!, cloudBack!],
      'deletingVm',
      ['cancelTimer', 'deleteVm'],
    ],
    [
      'cleanup retry retries now',
      [peerPodSeen!, olderRetired, vmFound!, peerPodDeleting!, failed!, cleanup('retry')],
      'deletingVm',
      ['cancelTimer', 'deleteVm'],
    ],
    [
      'cleanup orphan leaves the VM to the sweeper, says so, and releases',
      [peerPodSeen!, olderRetired, vmFound!, peerPodDeleting!, failed!, cleanup('orphan')],
      'givingUp',
      ['cancelTimer', 'recordEvent'],
    ],
    [
      'a drift check looks at the VM',
      [podSeen, created!, recorded!, driftCheck!],
      'own.checkingVm',
      ['cancelTimer', 'observeVm'],
    ],
    [
      'a Pod whose VM cloud-api-adaptor made (its PeerPod exists) is tracked, told in an Event, and gets no VM',
      [podSeen, madeElsewhere],
      'own.madeElsewhere',
      ['recordEvent'],
    ],
    ['and its deletion leaves that VM to its PeerPod', [podSeen, madeElsewhere, podDeleting!], 'done', []],
    [
      'a VM gone from the cloud under a live pod is made again',
      [podSeen, created!, recorded!, driftCheck!, vmMissing!],
      'own.creatingVm',
      ['recordEvent', 'createVm'],
    ],
    [
      'a create that wrote its PeerPod too goes straight to tracking',
      [podSeen, createdAndRecorded],
      'own.tracking',
      ['startTimer'],
    ],
    [
      'and its pod going deletes the VM, then releases that PeerPod',
      [podSeen, createdAndRecorded, podDeleting!, deleted!],
      'releasing',
      ['release'],
    ],
  ] as const)('%s', (_, sequence, state, actions) => {
    const result = run(...(sequence as unknown as PeerPodEvent[]));
    expect(result.state).toBe(state);
    expect(types(result)).toEqual(actions);
  });

  it('a failed create keeps its intent: the retry asks for the same name (the provider finds the VM a lost reply made)', () => {
    const first = run(podSeen);
    const retried = run(podSeen, { ...failed!, action: 'createVm' } as PeerPodEvent, retry!);
    expect(retried.actions.find((a) => a.type === 'createVm')?.params).toEqual(
      first.actions.find((a) => a.type === 'createVm')?.params,
    );
    expect(retried.context.intent?.at).toBe(at);
  });

  it('deletes by the pod UID tag when no VM is recorded, so a VM whose create reply was lost is found too', () => {
    const result = run(podSeen, podDeleting!, { ...failed!, action: 'createVm' } as PeerPodEvent, retry!);
    expect(result.actions.find((a) => a.type === 'deleteVm')?.params).toEqual({ podUid: 'pod-u1' });
  });

  it("a VM found missing is made again, and said so, only for a live Pod whose VM is Steward's; otherwise said, not promised", () => {
    const told = (...sequence: PeerPodEvent[]) => {
      const result = run(...sequence);
      return {
        state: result.state,
        event: result.actions.find((a) => a.type === 'recordEvent')?.params,
        lastError: result.context.lastError,
      };
    };
    const own = told(podSeen, created!, recorded!, driftCheck!, vmMissing!);
    expect(own.state).toBe('own.creatingVm');
    expect(own.event).toMatchObject({
      reason: 'VmMissing',
      message: `the VM of this peer pod (${vm.instanceId}) is gone from the cloud; creating it again`,
    });
    const alone = told(peerPodSeen!, olderRetired, vmMissing!);
    expect(alone.state).toBe('tracked.tracking');
    const message = `PeerPod web names VM ${vm.instanceId}, which the cloud does not have: nothing here makes it again (only a live Pod's own VM is made by Steward)`;
    expect(alone.event).toMatchObject({ type: 'Warning', reason: 'VmMissing', message });
    expect(alone.lastError).toMatchObject({ reason: 'VmMissing', message });
    // Looked for once: a later observation of the same PeerPod does not bring the VM back, nor look again.
    expect(run(peerPodSeen!, olderRetired, vmMissing!, peerPodSeen!)).toMatchObject({
      state: 'tracked.tracking',
      actions: [],
    });
  });

  it("a VM found shut off is started again, and said so, only for a live Pod whose VM is Steward's; otherwise said", () => {
    const shutOff: PeerPodEvent = { type: 'vmObserved', exists: true, state: 'stopped', at };
    const started: PeerPodEvent = { type: 'vmStarted', exists: true, at };
    const goneBeforeStart: PeerPodEvent = { type: 'vmStarted', exists: false, at };
    const refresh: PeerPodEvent = { type: 'refresh', request, at };

    // Its host restarted: a refresh (or the drift check) finds it shut off, says so while it starts it.
    const starting = run(podSeen, createdAndRecorded, refresh, shutOff);
    expect(starting.state).toBe('own.startingVm');
    expect(types(starting).slice(-1)).toEqual(['startVm']);
    expect(starting.context.lastError).toMatchObject({ reason: 'VmShutOff' });
    expect(starting.context.vmState).toBe('stopped');
    const back = run(podSeen, createdAndRecorded, refresh, shutOff, started);
    expect(back.state).toBe('own.tracking');
    expect(back.context.lastError).toBeUndefined();
    expect(back.context.vmState).toBe('running');
    expect(back.actions.find((a) => a.type === 'recordEvent')?.params).toMatchObject({
      type: 'Warning',
      reason: 'VmStarted',
      message: `this peer pod's VM ${vm.instanceId} was stopped: started again`,
    });
    // Seen within seconds, by the worker's watch of the VMs (a backendChanged notice), as by a refresh.
    const seen: PeerPodEvent = { type: 'backendChanged', notice: { by: 'the cloud: VM i stopped', ids: [] }, at };
    expect(run(podSeen, createdAndRecorded, seen).state).toBe('own.checkingVm');
    expect(run(podSeen, createdAndRecorded, seen, shutOff).state).toBe('own.startingVm');
    // Told while the VM was still being made or recorded (the watch says a change once): looked at once that ends.
    const vmCreated = events.find((e) => e.type === 'vmCreated')!;
    const peerPodRecorded = events.find((e) => e.type === 'peerPodRecorded')!;
    expect(run(podSeen, seen, vmCreated, peerPodRecorded).state).toBe('own.checkingVm');
    expect(run(podSeen, vmCreated, seen, peerPodRecorded).state).toBe('own.checkingVm');
    expect(run(podSeen, vmCreated, seen, peerPodRecorded, shutOff).state).toBe('own.startingVm');
    // Once looked at, it is forgotten: the next rest is an ordinary one.
    expect(run(podSeen, vmCreated, seen, peerPodRecorded, vmFound!).context.vmChangedInFlight).toBeUndefined();
    // Gone before it could be started: made again, as a VM found missing is.
    expect(run(podSeen, createdAndRecorded, refresh, shutOff, goneBeforeStart).state).toBe('own.creatingVm');
    // A start that fails leaves the shut-off said, counted; the next check or refresh tries again.
    const failedStart = run(podSeen, createdAndRecorded, refresh, shutOff, {
      ...failed!,
      action: 'startVm',
    } as PeerPodEvent);
    expect(failedStart.state).toBe('own.tracking');
    expect(failedStart.context.lastError).toMatchObject({ failures: 1 });

    // A PeerPod alone (its VM not made here): said, never started.
    const alone = run(peerPodSeen!, olderRetired, shutOff);
    expect(alone.state).toBe('tracked.tracking');
    expect(types(alone)).not.toContain('startVm');
    expect(alone.context.lastError).toMatchObject({ reason: 'VmShutOff' });
    expect(alone.actions.find((a) => a.type === 'recordEvent')?.params).toMatchObject({ reason: 'VmShutOff' });
    // Running again (started by whoever made it): no longer said.
    expect(run(peerPodSeen!, olderRetired, shutOff, refresh, olderRetired, vmFound!).context.lastError).toBeUndefined();
  });

  it("cloud-api-adaptor's PeerPod (no cloud in it, an owner named): a lost VM is told on the owner Pod, never made", () => {
    const theirs = (overrides: Partial<Observation> = {}): PeerPodEvent => ({
      type: 'observed',
      observation: peerPod(
        { ref: { ...ref, name: 'web-resource-x7k2p' }, ...overrides },
        { instanceID: vm.instanceId, ownerUid: 'pod-u1', ownerName: 'web' },
      ),
      at,
    });
    const lostVm = `this Pod lost its VM ${vm.instanceId}`;
    const onPod = { ref: { kind: 'Pod', namespace: 'default', name: 'web' }, uid: 'pod-u1', type: 'Warning' };

    // Gone from the cloud: a Warning on the Pod, no VM made.
    const missing = run(theirs(), olderRetired, vmMissing!);
    expect(missing.state).toBe('tracked.tracking');
    const missingEvent = missing.actions.find((a) => a.type === 'recordEvent')?.params as { message: string };
    expect(missingEvent).toMatchObject({ ...onPod, reason: 'PodVmLost' });
    expect(missingEvent.message).toContain(`${lostVm} (it is gone from the cloud); it was made by cloud-api-adaptor`);
    expect(missing.actions.map((a) => a.type)).not.toContain('createVm');

    // Deleted by hand: the owner is read; a live one is told, then the VM goes with its PeerPod.
    const deleting = [theirs(), olderRetired, vmFound!, theirs({ deleting: true })];
    expect(run(...deleting).actions.at(-1)).toEqual({
      type: 'readPod',
      params: { namespace: 'default', name: 'web' },
    });
    const told = run(...deleting, podLivesOn!);
    expect(told.actions.map((a) => a.type)).toEqual(['recordEvent']);
    const toldEvent = told.actions[0]!.params as { message: string };
    expect(toldEvent).toMatchObject({ ...onPod, reason: 'PodVmLost' });
    expect(toldEvent.message).toContain(`${lostVm} (its PeerPod was deleted while the Pod runs`);
    expect(run(...deleting, podLivesOn!, { type: 'eventRecorded', at }).actions).toEqual([
      expect.objectContaining({ type: 'deleteVm' }),
    ]);
    // Tracked for good: its Pod, observed too (a PeerPod of the Pod's own name), makes no VM of Steward's.
    const podToo = run(theirs(), olderRetired, vmFound!, podSeen);
    expect([podToo.state, types(podToo)]).toEqual(['tracked.tracking', []]);
    // Its Pod gone (the garbage collector deleted the PeerPod): nothing to tell.
    expect(run(...deleting, podGoneUnseen!).actions.map((a) => a.type)).toEqual(['deleteVm']);
  });

  it('a PeerPod deleted while its pod seems to live: the API server is asked; a live pod gets its VM deleted, the PeerPod released, then a new VM and PeerPod', () => {
    const peerPodDeleted: PeerPodEvent = { type: 'observed', observation: peerPod({ deleting: true }), at };
    const asked = run(podSeen, createdAndRecorded, peerPodDeleted);
    expect([asked.state, asked.actions.at(-1)]).toEqual([
      'own.checkingPod',
      { type: 'readPod', params: { namespace: 'default', name: 'web' } },
    ]);
    const lived = [podSeen, createdAndRecorded, peerPodDeleted, podLivesOn!];
    expect(run(...lived).actions).toEqual([expect.objectContaining({ type: 'deleteVm' })]);
    const vmGone = run(...lived, deleted!);
    expect(vmGone.state).toBe('releasing');
    expect(vmGone.actions).toEqual([
      { type: 'release', params: { namespace: 'default', name: 'web', uid: 'pp-u1', livePodUid: 'pod-u1' } },
    ]);
    const remade = run(...lived, deleted!, released!);
    expect(remade.state).toBe('own.creatingVm');
    expect(remade.actions).toEqual([
      {
        type: 'createVm',
        params: {
          name: vmName('web', 'pod-u1', 1),
          podUid: 'pod-u1',
          namespace: 'default',
          podName: 'web',
          replaces: { instanceId: vm.instanceId, why: 'its PeerPod web was deleted, and the VM with it' },
        },
      },
    ]);
    // The released PeerPod's last observations change nothing; the new VM's record ends the loss.
    const gone: PeerPodEvent = { type: 'observed', observation: peerPod({ gone: true, finalizers: [] }), at };
    expect(run(...lived, deleted!, released!, gone).state).toBe('own.creatingVm');
    const again = run(...lived, deleted!, released!, gone, {
      type: 'vmCreated',
      vm: { ...vm, instanceId: 'vm-2' },
      peerPod: { name: 'web', uid: 'pp-u2' },
      at,
    });
    expect([again.state, again.context.lostVm, again.context.vm?.instanceId]).toEqual([
      'own.tracking',
      undefined,
      'vm-2',
    ]);
  });

  it("a PeerPod written into while being deleted (an older incarnation's, never released) is let go like one deleted by hand, and another written: never tracked as live (chaos seed 10)", () => {
    const intoDeleting: PeerPodEvent = {
      type: 'vmCreated',
      vm,
      peerPod: { name: 'web', uid: 'pp-old', deleting: true },
      at,
    };
    const asked = run(podSeen, intoDeleting);
    expect([asked.state, asked.context.peerPod]).toEqual([
      'own.checkingPod',
      { uid: 'pp-old', name: 'web', held: true, deleting: true, gone: false },
    ]);
    const released = run(podSeen, intoDeleting, podLivesOn!, deleted!);
    expect(released.actions).toEqual([
      { type: 'release', params: { namespace: 'default', name: 'web', uid: 'pp-old', livePodUid: 'pod-u1' } },
    ]);
    // Written by the recording step alike.
    const recordedInto: PeerPodEvent = { type: 'peerPodRecorded', name: 'web', uid: 'pp-old', deleting: true, at };
    expect(run(podSeen, created!, recordedInto).state).toBe('own.checkingPod');
    // An observation of another PeerPod of the name says nothing about the one written.
    const older: PeerPodEvent = { type: 'observed', observation: peerPod({ uid: 'pp-older', gone: true }), at };
    expect(run(podSeen, older, createdAndRecorded).context.peerPod).toMatchObject({
      uid: 'pp-u1',
      held: true,
      gone: false,
    });
  });

  it('a PeerPod deleted (by the garbage collector) after its pod, whose deletion was not observed: the VM goes, nothing is made again', () => {
    const peerPodDeleted: PeerPodEvent = { type: 'observed', observation: peerPod({ deleting: true }), at };
    const ended = run(podSeen, createdAndRecorded, peerPodDeleted, podGoneUnseen!, deleted!, released!);
    expect([ended.state, ended.context.lostVm, ended.context.pod?.gone]).toEqual(['done', undefined, true]);
  });

  it('looks for older PeerPods of the Pod only from a PeerPod alone, once on entering, and again on a refresh', () => {
    const retires = (r: ReturnType<typeof run>) => r.actions.filter((a) => a.type === 'retireOlderPeerPods');
    expect(retires(run(peerPodSeen!))).toEqual([
      { type: 'retireOlderPeerPods', params: { namespace: 'default', name: 'web', uid: 'pp-u1' } },
    ]);
    const tracked = [peerPodSeen!, olderRetired, vmFound!];
    expect(retires(run(...tracked, driftCheck!))).toEqual([]);
    expect(retires(run(...tracked, peerPodSeen!))).toEqual([]);
    expect(retires(run(...tracked, { type: 'refresh', request, at }))).toHaveLength(1);
    // A failure is said, and tracking goes on: the VM is looked at all the same.
    const failedRetire = run(peerPodSeen!, { ...failed!, action: 'retireOlderPeerPods' } as PeerPodEvent);
    expect([failedRetire.state, types(failedRetire)]).toEqual(['tracked.checkingVm', ['observeVm']]);
    // A Pod's own lifecycle never looks.
    expect(edges.filter((e) => e.actions.includes('retireOlderPeerPods') && e.to.context.pod)).toEqual([]);
  });

  it('deletes the recorded VM by its id', () => {
    expect(run(podSeen, created!, recorded!, podDeleting!).actions.find((a) => a.type === 'deleteVm')?.params).toEqual({
      vm,
    });
  });

  it('releases the PeerPod it wrote, by its UID', () => {
    const result = run(podSeen, created!, recorded!, podDeleting!, deleted!);
    expect(result.actions.find((a) => a.type === 'release')?.params).toEqual({
      namespace: 'default',
      name: 'web',
      uid: 'pp-u1',
    });
    // The same when the create wrote it, and when the watcher's observation of it came first (it says more).
    const sameCall = run(podSeen, createdAndRecorded, podDeleting!, deleted!);
    expect(sameCall.actions.find((a) => a.type === 'release')?.params).toEqual({
      namespace: 'default',
      name: 'web',
      uid: 'pp-u1',
    });
    const observedFirst = run(podSeen, peerPodSeen!, createdAndRecorded);
    expect(observedFirst.context.peerPod).toEqual({
      uid: 'pp-u1',
      name: 'web',
      held: true,
      deleting: false,
      gone: false,
    });
    expect(observedFirst.state).toBe('own.tracking');
  });

  it('keeps a new Pod with the same name for after this one is finished', () => {
    const { context } = run(podSeen, otherPod!);
    expect(context.uid).toBe('pod-u1');
    expect(context.nextIncarnation?.uid).toBe('pod-u2');
  });

  it('ignores a PeerPod owned by another incarnation of the Pod', () => {
    const { context } = run(podSeen, {
      type: 'observed',
      observation: peerPod({ uid: 'pp-old' }, { instanceID: 'other', ownerUid: 'pod-u0' }),
      at,
    });
    expect(context.peerPod).toBeUndefined();
  });

  it('names VMs as cloud-api-adaptor does, within 63 characters', () => {
    expect(vmName('Web_1', '0b0c6c39-5d3a-4b3e')).toBe('podvm-web-1-0b0c6c39');
    expect(vmName('x'.repeat(80), 'abcdef12-3456').length).toBeLessThanOrEqual(63);
    // A VM made again for the same pod: a name of its own, as long at most.
    expect(vmName('Web_1', '0b0c6c39-5d3a-4b3e', 2)).toBe('podvm-web-1-0b0c6c39-2');
    for (const n of [1, 12, 123]) expect(vmName('x'.repeat(80), 'abcdef12-3456', n)).toHaveLength(63);
  });
});

describe('peer-pod machine: persisted record', () => {
  it('is still at version 1: a record of it is read as it is', () => {
    const record = { version: 1, value: 'tracking', context: run(podSeen, created!, recorded!).context };
    expect(peerPodLifecycleMachine.migrate(record)).toEqual(record);
  });
});
