import * as k8s from '@kubernetes/client-node';
import { GLOBAL_LABEL, GLOBAL_NAMESPACE, type Translation } from '../../model/translation/types';
import { TEMPORAL_UI_ANNOTATION, TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { createKubernetesActivities } from './activities';
import { createTranslationRecords } from './translation-record';
import { createEventRecorder } from './events';
import { createObjects } from './objects';
import { createRest } from '../../platform/kubernetes/rest';
import type { RecordTranslationStatusInput } from './translations';
import {
  adminConfig,
  bridgeId,
  createNamespace,
  createService,
  eventually,
  translationOf,
  uniqueName,
} from '../../test/support/kubernetes';

const kc = adminConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
let now = new Date('2030-01-01T10:00:00Z');
const k = createKubernetesActivities({ kubeConfig: kc, clock: () => now });
const ref = (t: Translation) => ({ kind: 'Translation' as const, namespace: t.namespace, name: t.name });
const key = (t: Translation) => `${t.namespace}/${t.name}`;

/** A Service in `namespace` and its one-Bridge Translation, applied unless `apply` is false. */
async function serviceWithTranslation(namespace: string, { apply = true } = {}) {
  const owner = await createService(kc, namespace);
  const t = translationOf(owner, `service.4.${owner.name}`, [bridgeId(1)]);
  if (apply) await k.applyTranslations({ owner, translations: [t] });
  return { owner, t };
}

describe('applyTranslations', () => {
  let namespace: string;
  beforeAll(async () => {
    namespace = await createNamespace(kc, 'k8sact-tr');
  });

  it('applies labels, ownerReferences, finalizers and resources; re-applying changes nothing; a smaller set deletes the stale one', async () => {
    const owner = await createService(kc, namespace);
    const [a, b, c] = ['a', 'b', 'c'].map((n, i) =>
      translationOf(owner, `service.4.${owner.name}-${n}`, [bridgeId(i)]),
    ) as [Translation, Translation, Translation];
    const bystander = translationOf(await createService(kc, namespace), uniqueName('bystander'), [bridgeId(9)]);
    await k.applyTranslations({
      owner: {
        kind: 'Service',
        namespace,
        name: bystander.ownerReferences[0]!.name,
        uid: bystander.ownerReferences[0]!.uid,
      },
      translations: [bystander],
    });

    const first = await k.applyTranslations({ owner, translations: [a, b, c] });
    expect(first).toMatchObject({ applied: [a, b, c].map(key), deleted: [], stale: [], terminating: [] });
    // Each with its UID and generation: what its owner's workflow pushes.
    expect(first.written.map(({ key, generation }) => [key, generation])).toEqual([a, b, c].map((t) => [key(t), 1]));
    const read = await k.readObject({ ref: ref(a) });
    if (!read.found) throw new Error('Translation a not written');
    expect(read.object.metadata).toMatchObject({
      labels: a.labels,
      finalizers: [TRANSLATION_FINALIZER],
      ownerReferences: a.ownerReferences,
    });
    expect(read.object.resources).toEqual(a.resources);

    // Idempotent: the same apply again is a no-op for the API server too (same resourceVersion).
    expect(await k.applyTranslations({ owner, translations: [a, b, c] })).toMatchObject({
      applied: [a, b, c].map(key),
      written: first.written,
      deleted: [],
      terminating: [],
    });
    expect(await k.readObject({ ref: ref(a) })).toMatchObject({
      object: { metadata: { resourceVersion: read.object.metadata.resourceVersion } },
    });

    const grownB = { ...b, resources: [...b.resources, ...translationOf(owner, b.name, [bridgeId(7)]).resources] };
    expect(await k.applyTranslations({ owner, translations: [a, grownB] })).toMatchObject({
      applied: [a, b].map(key),
      deleted: [key(c)],
      stale: [{ key: key(c), uid: first.written[2]!.uid }],
      terminating: [],
    });
    expect(await k.readObject({ ref: ref(b) })).toMatchObject({ object: { resources: grownB.resources } });
    // The finalizer holds the stale Translation until its owner's workflow releases it.
    const staleC = await k.readObject({ ref: ref(c) });
    expect(staleC).toMatchObject({ found: true, deleting: true, finalizers: [TRANSLATION_FINALIZER] });
    // Asked again, the stale one is still reported (its deletion was requested earlier).
    expect(await k.applyTranslations({ owner, translations: [a, grownB] })).toMatchObject({ deleted: [key(c)] });
    // Applying it while it is being deleted says so: the caller must apply again once it is gone.
    expect(await k.applyTranslations({ owner, translations: [a, grownB, c] })).toMatchObject({
      applied: [a, b, c].map(key),
      deleted: [],
      terminating: [key(c)],
    });
    expect(
      await k.releaseFinalizer({ ref: ref(c), uid: staleC.found ? staleC.uid : '', finalizer: TRANSLATION_FINALIZER }),
    ).toEqual({ released: true, deleting: true });
    expect(await k.readObject({ ref: ref(c) })).toEqual({ found: false });
    expect(await k.applyTranslations({ owner, translations: [a, grownB] })).toMatchObject({ deleted: [] });
    // Another owner's Translation in the same namespace is never stale for this owner.
    expect(await k.readObject({ ref: ref(bystander) })).toMatchObject({ found: true, deleting: false });
  });

  it('lets the real garbage collector delete Translations after the owner goes; the finalizer holds each until releaseFinalizer', async () => {
    const { owner, t } = await serviceWithTranslation(namespace);
    const before = await k.readObject({ ref: ref(t) });
    if (!before.found) throw new Error('Translation not written');

    await core.deleteNamespacedService({ name: owner.name, namespace });
    await eventually(async () => {
      const current = await k.readObject({ ref: ref(t) });
      return current.found && current.deleting;
    }, 'the garbage collector deleted the Translation');
    expect(await k.readObject({ ref: ref(t) })).toMatchObject({
      found: true,
      deleting: true,
      finalizers: [TRANSLATION_FINALIZER],
    });

    expect(
      await k.releaseFinalizer({ ref: ref(t), uid: 'not-this-incarnation', finalizer: TRANSLATION_FINALIZER }),
    ).toEqual({ released: false, reason: 'UidMismatch' });
    expect(await k.readObject({ ref: ref(t) })).toMatchObject({ found: true, finalizers: [TRANSLATION_FINALIZER] });
    // Being deleted: the release lets it go, so its finalization sends no delete.
    expect(await k.releaseFinalizer({ ref: ref(t), uid: before.uid, finalizer: TRANSLATION_FINALIZER })).toEqual({
      released: true,
      deleting: true,
    });
    expect(await k.readObject({ ref: ref(t) })).toEqual({ found: false });
    expect(await k.releaseFinalizer({ ref: ref(t), uid: before.uid, finalizer: TRANSLATION_FINALIZER })).toEqual({
      released: false,
      reason: 'NotFound',
    });
  });

  it('handles the global Translations by the midonet.org/global label, without an owner object', async () => {
    const global = (name: string): Translation => ({
      name,
      namespace: GLOBAL_NAMESPACE,
      labels: { [GLOBAL_LABEL]: '' },
      ownerReferences: [],
      finalizers: [TRANSLATION_FINALIZER],
      resources: [{ kind: 'Chain', parent: '', body: JSON.stringify({ id: bridgeId(3), name }) }],
    });
    const [x, y] = [global(uniqueName('midonet-global.4.x')), global(uniqueName('midonet-global.4.y'))] as [
      Translation,
      Translation,
    ];
    expect(await k.applyTranslations({ owner: { kind: 'Global' }, translations: [x, y] })).toMatchObject({
      applied: [key(x), key(y)],
      deleted: [],
    });
    expect(await k.applyTranslations({ owner: { kind: 'Global' }, translations: [x] })).toMatchObject({
      applied: [key(x)],
      deleted: [key(y)],
    });
    expect(await k.readObject({ ref: ref(y) })).toMatchObject({ found: true, deleting: true });
  });

  it('refuses, writing nothing, a Translation that does not carry its owner label: it could never be found stale', async () => {
    const owner = await createService(kc, namespace);
    const other = await createService(kc, namespace);
    const t = translationOf(other, uniqueName('service.4.mismatch'), [bridgeId(2)]);
    await expect(k.applyTranslations({ owner, translations: [t] })).rejects.toMatchObject({
      type: 'TranslationOwnerMismatch',
      nonRetryable: true,
    });
    expect(await k.readObject({ ref: ref(t) })).toEqual({ found: false });
  });
});

describe('recordTranslationStatus', () => {
  let namespace: string;
  beforeAll(async () => {
    namespace = await createNamespace(kc, 'k8sact-st');
  });

  const pushed = { status: 'True', reason: 'Pushed', message: 'all 1 resources are in MidoNet' } as const;
  const eventsOf = async (uid: string) =>
    (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.uid=${uid}` })).items;

  it("lifts a settled push attempt's fence in the same write, and leaves another attempt's", async () => {
    const { t } = await serviceWithTranslation(namespace);
    const read = await k.readObject({ ref: ref(t) });
    const uid = read.found ? read.uid : '';
    const records = createTranslationRecords(kc, 'steward', () => now);
    now = new Date('2030-01-01T10:00:00Z');
    const until = '2030-01-01T10:00:50.000Z';
    await records.write(ref(t), uid, [], { add: { attempt: 'settled', until } });
    await records.write(ref(t), uid, undefined, { add: { attempt: 'lost', until } });
    const child = { kind: 'Bridge', id: bridgeId(1), state: 'synced' };
    const input = { ref: ref(t), uid, generation: 1, childResources: [child], ready: pushed, synced: pushed };
    expect(await k.recordTranslationStatus({ ...input, settles: 'settled' })).toMatchObject({ changed: true });
    const written = await k.readObject({ ref: ref(t) });
    expect(written.found && written.object.status).toMatchObject({
      childResources: [child],
      unsettledWrites: [{ attempt: 'lost', until }],
    });
    // Settled already: nothing left to write.
    expect(await k.recordTranslationStatus({ ...input, settles: 'settled' })).toMatchObject({ changed: false });
  });

  it('writes observedGeneration, childResources and conditions whose lastTransitionTime changes only with the status', async () => {
    const { owner, t } = await serviceWithTranslation(namespace);
    const child = { kind: 'Bridge', id: bridgeId(1), state: 'synced' };
    const failing = { status: 'False', reason: 'MidonetUnavailable', message: 'MidoNet answered 503' } as const;
    const record = (synced: typeof pushed | typeof failing) =>
      k.recordTranslationStatus({ ref: ref(t), generation: 1, childResources: [child], ready: pushed, synced });

    now = new Date('2030-01-01T10:00:00Z');
    expect(await record(pushed)).toMatchObject({ found: true, changed: true });
    const first = await k.readObject({ ref: ref(t) });
    expect(first.found && first.object.status).toEqual({
      observedGeneration: 1,
      childResources: [{ ...child, lastTransitionTime: '2030-01-01T10:00:00Z', observedGeneration: 1 }],
      conditions: [
        { type: 'Ready', ...pushed, lastTransitionTime: '2030-01-01T10:00:00Z', observedGeneration: 1 },
        { type: 'Synced', ...pushed, lastTransitionTime: '2030-01-01T10:00:00Z', observedGeneration: 1 },
      ],
    });

    now = new Date('2030-01-01T10:05:00Z');
    expect(await record(pushed)).toMatchObject({ changed: false });
    expect(await record(failing)).toMatchObject({ changed: true });
    const second = await k.readObject({ ref: ref(t) });
    expect(second.found && second.object.status).toMatchObject({
      childResources: [{ lastTransitionTime: '2030-01-01T10:00:00Z' }],
      conditions: [
        { type: 'Ready', lastTransitionTime: '2030-01-01T10:00:00Z' },
        { type: 'Synced', status: 'False', reason: 'MidonetUnavailable', lastTransitionTime: '2030-01-01T10:05:00Z' },
      ],
    });

    // The status subresource keeps status out of server-side apply: applying the Translation again leaves it.
    await k.applyTranslations({ owner, translations: [t] });
    expect(await k.readObject({ ref: ref(t) })).toMatchObject({
      object: { status: { conditions: [{ type: 'Ready' }, { type: 'Synced', status: 'False' }] } },
    });
  });

  it('emits an Event on the Translation, and an identical one again bumps its count instead of adding another', async () => {
    const { t } = await serviceWithTranslation(namespace);
    const event = { type: 'Warning', reason: 'MidonetUnavailable', message: 'MidoNet answered 503' } as const;
    const input = { ref: ref(t), generation: 1, childResources: [], ready: pushed, synced: pushed, event };

    const recorded = await k.recordTranslationStatus(input);
    if (!recorded.found) throw new Error('Translation not found');
    expect(await eventsOf(recorded.uid)).toMatchObject([
      {
        type: 'Warning',
        reason: 'MidonetUnavailable',
        count: 1,
        source: { component: 'steward' },
        involvedObject: { kind: 'Translation', apiVersion: 'midonet.org/v1', name: t.name },
      },
    ]);
    now = new Date('2030-01-01T11:00:00Z');
    await k.recordTranslationStatus(input);
    const [bumped, ...others] = await eventsOf(recorded.uid);
    expect(others).toEqual([]);
    expect(bumped).toMatchObject({ count: 2, lastTimestamp: new Date('2030-01-01T11:00:00Z') });

    await k.recordTranslationStatus({ ...input, event: { type: 'Normal', reason: 'Pushed', message: 'pushed' } });
    expect((await eventsOf(recorded.uid)).map((e) => e.reason).sort()).toEqual(['MidonetUnavailable', 'Pushed']);
  });

  it('records the same Event again with one patch (no refused create, no read), and stays right when another writer bumped or it expired', async () => {
    const { t } = await serviceWithTranslation(namespace);
    const read = await k.readObject({ ref: ref(t) });
    if (!read.found) throw new Error('Translation not written');
    const calls: string[] = [];
    // Each Event call as its verb: a create, a read or a patch.
    const rest = createRest(kc);
    const objects = createObjects(kc, 'steward', (call) => {
      if (call.path.includes('/events')) calls.push(`${call.method} events`);
      return rest(call);
    });
    const record = createEventRecorder(objects, () => now);
    const other = createEventRecorder(createObjects(kc, 'steward'), () => now);
    const event = { type: 'Normal', reason: 'ProbeRepeated', message: 'again' } as const;
    const count = async () => (await eventsOf(read.uid)).map((e) => e.count);

    expect(await record(ref(t), read.object, event)).toMatchObject({ count: 1 });
    expect(await record(ref(t), read.object, event)).toMatchObject({ count: 2 });
    expect(calls).toEqual(['POST events', 'PATCH events']);
    // Another replica bumps it: this one's patch is refused (409), it reads and counts on from there.
    expect(await other(ref(t), read.object, event)).toMatchObject({ count: 3 });
    calls.length = 0;
    expect(await record(ref(t), read.object, event)).toMatchObject({ count: 4 });
    expect(calls).toEqual(['PATCH events', 'GET events', 'PATCH events']);
    expect(await count()).toEqual([4]);
    // Expired (deleted): made again with count 1.
    const [expiring] = await eventsOf(read.uid);
    await core.deleteNamespacedEvent({ namespace, name: expiring!.metadata.name! });
    expect(await record(ref(t), read.object, event)).toMatchObject({ count: 1 });
    expect(await count()).toEqual([1]);
  });

  it('emits Events on any object with recordObjectEvent', async () => {
    const owner = await createService(kc, namespace);
    // A reason no workflow uses: another test file's worker on the shared stack may write its own Events on this Service.
    expect(
      await k.recordObjectEvent({ ref: owner, type: 'Normal', reason: 'ProbeRecorded', message: 'recorded' }),
    ).toEqual({ found: true });
    const recorded = (await eventsOf(owner.uid)).filter((e) => e.reason === 'ProbeRecorded');
    expect(recorded).toMatchObject([
      {
        message: 'recorded',
        involvedObject: { kind: 'Service', apiVersion: 'v1', name: owner.name, namespace },
      },
    ]);
    expect(
      await k.recordObjectEvent({ ref: { ...owner, name: 'missing' }, type: 'Normal', reason: 'X', message: 'x' }),
    ).toEqual({ found: false });
  });

  it('does nothing for a missing Translation or another incarnation of it', async () => {
    const { owner, t } = await serviceWithTranslation(namespace, { apply: false });
    const input: RecordTranslationStatusInput = {
      ref: ref(t),
      generation: 1,
      childResources: [],
      ready: pushed,
      synced: pushed,
      event: { type: 'Normal', reason: 'Pushed', message: 'pushed' },
    };
    expect(await k.recordTranslationStatus(input)).toEqual({ found: false });
    await k.applyTranslations({ owner, translations: [t] });
    expect(await k.recordTranslationStatus({ ...input, uid: 'an-older-incarnation' })).toEqual({ found: false });
    const read = await k.readObject({ ref: ref(t) });
    expect(read.found && read.object.status).toBeUndefined();
    expect(read.found && (await eventsOf(read.uid))).toEqual([]);
  });
});

describe('the Temporal UI link', () => {
  const page = (id: string) => `http://ui:8080/namespaces/steward/workflows/${encodeURIComponent(id)}`;
  const linked = createKubernetesActivities({ kubeConfig: kc, workflowPage: page });
  const annotationsOf = async (kind: 'Translation' | 'PeerPod', namespace: string, name: string) => {
    const read = await k.readObject({ ref: { kind, namespace, name } });
    if (!read.found) throw new Error(`${kind} ${namespace}/${name} not written`);
    return read.object.metadata.annotations ?? {};
  };

  it("is written, when the UI's address is set, on each Translation (its pusher's page) and PeerPod (its own), and on none without it", async () => {
    const namespace = await createNamespace(kc, 'k8sact-ui');
    const { owner, t } = await serviceWithTranslation(namespace, { apply: false });
    await linked.applyTranslations({ owner, translations: [t] });
    expect(await annotationsOf('Translation', namespace, t.name)).toEqual({
      [TEMPORAL_UI_ANNOTATION]: page(`service/${namespace}/${owner.name}`),
    });
    // Applied without it, the field Steward owned goes: what midonet-kubernetes wrote is what remains.
    await k.applyTranslations({ owner, translations: [t] });
    expect(await annotationsOf('Translation', namespace, t.name)).toEqual({});

    const global: Translation = {
      name: uniqueName('midonet-global.4.linked'),
      namespace: GLOBAL_NAMESPACE,
      labels: { [GLOBAL_LABEL]: '' },
      ownerReferences: [],
      finalizers: [TRANSLATION_FINALIZER],
      resources: [],
    };
    await linked.applyTranslations({ owner: { kind: 'Global' }, translations: [global] });
    expect(await annotationsOf('Translation', GLOBAL_NAMESPACE, global.name)).toEqual({
      [TEMPORAL_UI_ANNOTATION]: page(`translation/${GLOBAL_NAMESPACE}/${global.name}`),
    });

    const pod = await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: 'peer' },
        spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    const vm = { provider: 'libvirt', instanceId: '0b0c6c39-5d3a-4b3e-9d0e-3f7f1c2a4e10', cloud: 'libvirt:host' };
    await linked.recordPeerPod({ namespace, podName: 'peer', podUid: pod.metadata!.uid!, vm, vmName: 'podvm-peer' });
    expect(await annotationsOf('PeerPod', namespace, 'peer')).toEqual({
      'steward.dev/cloud': 'libvirt:host',
      [TEMPORAL_UI_ANNOTATION]: page(`peerpod/${namespace}/peer`),
    });
  });
});
