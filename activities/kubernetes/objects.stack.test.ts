import * as k8s from '@kubernetes/client-node';
import type { ObjectRef } from '../../model/naming';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import { createKubernetesActivities } from './activities';
import { TRANSLATION_API } from '../../model/naming';
import { rememberingWrites } from './objects';
import { REFERRERS_ANNOTATION } from './referrers';
import { createTranslationRecords } from './translation-record';
import {
  adminConfig,
  bridgeId,
  createNamespace,
  createService,
  translationOf,
  uniqueName,
} from '../../test/support/kubernetes';

const kc = adminConfig();
const core = kc.makeApiClient(k8s.CoreV1Api);
const custom = kc.makeApiClient(k8s.CustomObjectsApi);
const k = createKubernetesActivities({ kubeConfig: kc });

async function createNode(): Promise<ObjectRef & { uid: string }> {
  const node = await core.createNode({ body: { metadata: { name: uniqueName('node') } } });
  return { kind: 'Node', name: node.metadata!.name!, uid: node.metadata!.uid! };
}

let namespace: string;
beforeAll(async () => {
  namespace = await createNamespace(kc, 'k8sact-obj');
});

describe('readObject', () => {
  it('gives identity, generation, deletion state, finalizers and the raw JSON, or found: false', async () => {
    const node = await createNode();
    const service = await createService(kc, namespace);
    const translation = translationOf(service, uniqueName('service.4.read'), [bridgeId(1)]);
    await k.applyTranslations({ owner: service, translations: [translation] });

    const cases: { what: string; ref: ObjectRef; expected: object }[] = [
      {
        what: 'a Node has no namespace and no generation',
        ref: { kind: 'Node', name: node.name },
        expected: { found: true, uid: node.uid, generation: 0, deleting: false, finalizers: [] },
      },
      {
        what: 'a Service reads from its namespace',
        ref: { kind: 'Service', namespace, name: service.name },
        expected: { found: true, uid: service.uid, deleting: false },
      },
      {
        what: 'a Translation has a generation and our finalizer',
        ref: { kind: 'Translation', namespace, name: translation.name },
        expected: { found: true, generation: 1, deleting: false, finalizers: [TRANSLATION_FINALIZER] },
      },
      {
        what: 'a missing Pod is not found, not an error',
        ref: { kind: 'Pod', namespace, name: 'missing' },
        expected: { found: false },
      },
      {
        what: 'a missing Endpoints is not found',
        ref: { kind: 'Endpoints', namespace, name: 'missing' },
        expected: { found: false },
      },
    ];
    for (const { what, ref, expected } of cases) {
      expect({ what, read: await k.readObject({ ref }) }).toMatchObject({ what, read: expected });
    }
    // Raw JSON, as the API server sent it: timestamps are strings, not Dates.
    const read = await k.readObject({ ref: { kind: 'Service', namespace, name: service.name } });
    expect(read.found && typeof read.object.metadata).toBe('object');
    expect(read.found && typeof (read.object.metadata as { creationTimestamp?: unknown }).creationTimestamp).toBe(
      'string',
    );
    expect(read.found && read.object).toMatchObject({ spec: { ports: [{ port: 80 }] } });
  });

  it('fails non-retryable for a namespaced kind without a namespace', async () => {
    await expect(k.readObject({ ref: { kind: 'Pod', name: 'x' } })).rejects.toMatchObject({
      type: 'KubernetesBadRequest',
      nonRetryable: true,
    });
  });
});

/** The admin's kubeconfig, noting the method and path of every request made through it. */
class CountingKubeConfig extends k8s.KubeConfig {
  readonly requests: string[] = [];
  constructor(from: k8s.KubeConfig) {
    super();
    this.loadFromString(from.exportConfig());
  }
  override async applySecurityAuthentication(context: k8s.RequestContext): Promise<void> {
    this.requests.push(`${context.getHttpMethod()} ${new URL(context.getUrl()).pathname}`);
    return super.applySecurityAuthentication(context);
  }
}

describe('referrers', () => {
  const pod = (name: string): ObjectRef => ({ kind: 'Pod', namespace, name });
  /** What addReferrer and removeReferrer answer for a dependency that exists (with the dependency as it stands). */
  const answer = (referrers: ObjectRef[], changed: boolean) => ({
    found: true,
    referrers,
    changed,
    object: expect.objectContaining({ kind: 'Node' }) as unknown,
  });
  const annotationOf = async (name: string) =>
    (await core.readNode({ name })).metadata?.annotations?.[REFERRERS_ANNOTATION];

  it('adds a referrer once however often it is added, keeps the list sorted, and removes it', async () => {
    const node = await createNode();
    expect(await k.addReferrer({ dependency: node, referrer: pod('b') })).toEqual(answer([pod('b')], true));
    expect(await k.addReferrer({ dependency: node, referrer: pod('b') })).toEqual(answer([pod('b')], false));
    await k.addReferrer({ dependency: node, referrer: pod('a') });
    expect(await annotationOf(node.name)).toBe(JSON.stringify([pod('a'), pod('b')]));
    expect(await k.listReferrers({ dependency: node })).toEqual({ found: true, referrers: [pod('a'), pod('b')] });

    expect(await k.removeReferrer({ dependency: node, referrer: pod('b') })).toEqual(answer([pod('a')], true));
    expect(await k.removeReferrer({ dependency: node, referrer: pod('b') })).toEqual(answer([pod('a')], false));
    await k.removeReferrer({ dependency: node, referrer: pod('a') });
    // The last removal takes the annotation away rather than leaving "[]".
    expect(await annotationOf(node.name)).toBeUndefined();
  });

  it('keeps every referrer when several are added at the same time by separate callers', async () => {
    const service = await createService(kc, namespace);
    const callers = Array.from({ length: 8 }, () => createKubernetesActivities({ kubeConfig: adminConfig() }));
    const referrers = callers.map((_, i): ObjectRef => ({ kind: 'Endpoints', namespace, name: `ep-${i}` }));
    await Promise.all(callers.map((caller, i) => caller.addReferrer({ dependency: service, referrer: referrers[i]! })));
    expect(await k.listReferrers({ dependency: service })).toEqual({ found: true, referrers });
  });

  it("writes one caller's edits of a dependency made meanwhile together: each is kept, in fewer patches than edits", async () => {
    const counting = new CountingKubeConfig(kc);
    const caller = createKubernetesActivities({ kubeConfig: counting });
    const node = await createNode();
    const pods = Array.from({ length: 12 }, (_, i) => pod(`p-${String(i).padStart(2, '0')}`));
    const added = await Promise.all(pods.map((referrer) => caller.addReferrer({ dependency: node, referrer })));
    expect(added.every((result) => result.changed)).toBe(true);
    const removed = pods.filter((_, i) => i % 3 === 0);
    await Promise.all([
      ...removed.map((referrer) => caller.removeReferrer({ dependency: node, referrer })),
      caller.addReferrer({ dependency: node, referrer: pods[1]! }),
    ]);
    const kept = pods.filter((p) => !removed.includes(p));
    expect(await k.listReferrers({ dependency: node })).toEqual({ found: true, referrers: kept });
    const patches = counting.requests.filter((r) => r.startsWith('PATCH') && r.endsWith(`/nodes/${node.name}`));
    // The first edit writes alone; the rest wait for it and go together (a few more rounds at most).
    expect(patches.length).toBeLessThanOrEqual(4);
  });

  it("edits a dependency from what its own last write answered, with no read; someone else's change since is read again", async () => {
    const counting = new CountingKubeConfig(kc);
    const caller = createKubernetesActivities({ kubeConfig: counting });
    const node = await createNode();
    const sent = () => counting.requests.filter((r) => r.endsWith(`/nodes/${node.name}`)).map((r) => r.split(' ')[0]);
    await caller.addReferrer({ dependency: node, referrer: pod('a') });
    await caller.addReferrer({ dependency: node, referrer: pod('b') });
    expect(await caller.removeReferrer({ dependency: node, referrer: pod('a') })).toEqual(answer([pod('b')], true));
    expect(sent()).toEqual(['GET', 'PATCH', 'PATCH', 'PATCH']);

    // Changed by another writer (another worker's edit, a label): the patch is refused (409), read again, and lands.
    await k.addReferrer({ dependency: node, referrer: pod('c') });
    counting.requests.length = 0;
    expect(await caller.addReferrer({ dependency: node, referrer: pod('d') })).toEqual(
      answer([pod('b'), pod('c'), pod('d')], true),
    );
    expect(sent()).toEqual(['PATCH', 'GET', 'PATCH']);
    // What its last write says is there already is checked on a fresh read: another writer removed it since.
    await k.removeReferrer({ dependency: node, referrer: pod('d') });
    counting.requests.length = 0;
    expect(await caller.addReferrer({ dependency: node, referrer: pod('d') })).toEqual(
      answer([pod('b'), pod('c'), pod('d')], true),
    );
    expect(sent()).toEqual(['GET', 'PATCH']);
    expect(await annotationOf(node.name)).toBe(JSON.stringify([pod('b'), pod('c'), pod('d')]));
  });

  it('adds nothing to a missing dependency or one being deleted, and treats removal from a missing one as done', async () => {
    const missing: ObjectRef = { kind: 'Node', name: uniqueName('gone') };
    const none = { found: false, referrers: [], changed: false };
    expect(await k.addReferrer({ dependency: missing, referrer: pod('a') })).toEqual(none);
    expect(await k.removeReferrer({ dependency: missing, referrer: pod('a') })).toEqual(none);
    expect(await k.listReferrers({ dependency: missing })).toEqual({ found: false, referrers: [] });

    // Held by another finalizer while it is deleted: the referrer is told so, and the Node carries no new entry.
    const hold = 'example.com/hold';
    const going = await createNode();
    await core.patchNode(
      { name: going.name, body: { metadata: { finalizers: [hold] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNode({ name: going.name });
    expect(await k.addReferrer({ dependency: going, referrer: pod('a') })).toMatchObject({
      found: true,
      deleting: true,
      changed: false,
    });
    expect(await annotationOf(going.name)).toBeUndefined();
    await core.patchNode(
      { name: going.name, body: { metadata: { finalizers: null } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  });
});

describe('releaseFinalizer', () => {
  it('removes only the named finalizer, wherever it stands, and only from the incarnation named by its UID', async () => {
    const service = await createService(kc, namespace);
    const other = 'example.com/other';
    const t = {
      ...translationOf(service, uniqueName('service.4.fin'), [bridgeId(1)]),
      finalizers: [other, TRANSLATION_FINALIZER],
    };
    const ref: ObjectRef = { kind: 'Translation', namespace, name: t.name };
    await k.applyTranslations({ owner: service, translations: [t] });
    const first = await k.readObject({ ref });
    if (!first.found) throw new Error('Translation not written');

    expect(await k.releaseFinalizer({ ref, uid: first.uid, finalizer: 'example.com/absent' })).toEqual({
      released: false,
      reason: 'FinalizerAbsent',
    });
    expect(await k.releaseFinalizer({ ref, uid: first.uid, finalizer: TRANSLATION_FINALIZER })).toEqual({
      released: true,
    });
    expect(await k.readObject({ ref })).toMatchObject({ finalizers: [other] });

    // Another incarnation of the same name: the old UID never touches it.
    await k.releaseFinalizer({ ref, uid: first.uid, finalizer: other });
    await kc.makeApiClient(k8s.CustomObjectsApi).deleteNamespacedCustomObject({
      group: 'midonet.org',
      version: 'v1',
      plural: 'translations',
      namespace,
      name: t.name,
    });
    await k.applyTranslations({ owner: service, translations: [t] });
    const second = await k.readObject({ ref });
    expect(second.found && second.uid).not.toBe(first.uid);
    expect(await k.releaseFinalizer({ ref, uid: first.uid, finalizer: TRANSLATION_FINALIZER })).toEqual({
      released: false,
      reason: 'UidMismatch',
    });
    expect(await k.readObject({ ref })).toMatchObject({ finalizers: [other, TRANSLATION_FINALIZER] });
  });
});

describe('translationsReady', () => {
  it('reads only the Translations the watch did not see Ready', async () => {
    const counting = new CountingKubeConfig(kc);
    const service = await createService(kc, namespace);
    const [seen, unseen] = ['seen', 'unseen'].map((n) =>
      translationOf(service, uniqueName(`service.4.${n}`), [bridgeId(1)]),
    );
    await k.applyTranslations({ owner: service, translations: [seen!, unseen!] });
    const caller = createKubernetesActivities({ kubeConfig: counting, seenReady: ({ name }) => name === seen!.name });
    const refs = [seen!, unseen!].map(({ namespace, name }) => ({ namespace, name }));
    // Neither is Ready in the API server: the one seen Ready is taken as the watch saw it, the other is read.
    expect(await caller.translationsReady({ translations: refs })).toEqual({
      ready: false,
      notReady: [`${namespace}/${unseen!.name}`],
    });
    expect(counting.requests).toEqual([
      `GET /apis/midonet.org/v1/namespaces/${namespace}/translations/${unseen!.name}`,
    ]);
  });
});

describe('rememberingWrites', () => {
  const synced = { status: 'True' as const, reason: 'Synced', message: 'pushed' };

  it("works on a Translation from what its apply and each write answered: no read between an object's sync steps, and a write refused as a conflict reads it again", async () => {
    const counting = new CountingKubeConfig(kc);
    const activities = createKubernetesActivities({ kubeConfig: counting });
    const records = createTranslationRecords(counting);
    const service = await createService(kc, namespace);
    const translation = translationOf(service, uniqueName('service.4.remembered'), [bridgeId(1)]);
    const ref: ObjectRef = { kind: 'Translation', namespace, name: translation.name };
    const reads = () => counting.requests.filter((r) => r.startsWith('GET') && r.endsWith(`/${translation.name}`));
    const record = (state: string) => [{ kind: 'Bridge', id: bridgeId(1), state }];

    const { uid, generation } = await rememberingWrites(async () => {
      const { written } = await activities.applyTranslations({ owner: service, translations: [translation] });
      const applied = written[0]!;
      await records.write(ref, applied.uid, record('pending'));
      await records.write(ref, applied.uid, record('synced'));
      await activities.recordTranslationStatus({ ...applied, ref, ready: synced, synced });
      expect(reads()).toEqual([]);

      // Someone else's write since: the remembered object is stale, its write refused (409), and read again once.
      await custom.patchNamespacedCustomObjectStatus(
        { ...TRANSLATION_API, namespace, name: translation.name, body: { status: { childResources: [] } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await records.write(ref, applied.uid, record('synced'));
      expect(reads()).toHaveLength(1);
      return applied;
    });
    // Outside it every read goes to the API server.
    expect((await records.read(ref, uid))?.record).toEqual(record('synced'));
    expect(generation).toBe(1);
    expect(reads()).toHaveLength(2);
  });
});
