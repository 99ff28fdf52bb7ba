// The Kubernetes activities (STYLE habit 3): one factory over the kubeconfig, plain async functions taking one
// typed input and returning plain JSON. Failures are typed ApplicationFailures (errors.ts).
import * as k8s from '@kubernetes/client-node';
import { applyObjectSteps, type ApplyObjectInput, type ApplyObjectResult } from '../../model/apply-object';
import type { ObjectRef } from '../../model/naming';
import { finalizerNames } from '../../model/vocabulary';
import { createEventRecorder, type EventInput } from './events';
import { createInventoryActivities } from './inventory';
import { createNodeAnnotations } from './node-annotations';
import { createObjects, type KubeObject, type Objects, update, type WorkflowPage } from './objects';
import { createPeerPodActivities } from './peerpods';
import { createReferrerActivities } from './referrers';
import { createTranslationActivities } from './translations';
import type { ReadObjectResult as ReadResult } from '../../model/kubernetes-calls';

export type ReadObjectResult = ReadResult<KubeObject>;

export interface KubernetesActivityDeps {
  kubeConfig: k8s.KubeConfig;
  /** Server-side apply and every patch write under this manager. */
  fieldManager?: string;
  /** Event and condition times; tests pin it. */
  clock?: () => Date;
  /** Links the Translations and PeerPods it writes to their workflow's page (TEMPORAL_UI_ANNOTATION). */
  workflowPage?: WorkflowPage;
  /** The Translations the worker's watch saw Ready last (translation-index.ts): not read again to be waited for. */
  seenReady?: (translation: { namespace: string; name: string }) => boolean;
}

export interface ReleaseFinalizerInput {
  ref: ObjectRef;
  /** The incarnation the caller finalized; another one with the same name is never touched. */
  uid: string;
  finalizer: string;
}

export type ReleaseFinalizerResult =
  /** `deleting`: the object is being deleted, so this release let it go (or left it to its other finalizers). */
  { released: true; deleting?: true } | { released: false; reason: 'NotFound' | 'UidMismatch' | 'FinalizerAbsent' };

export type AddFinalizerResult = { added: true } | { added: false; reason: 'NotFound' | 'UidMismatch' | 'Deleting' };

export interface RecordObjectEventInput extends EventInput {
  ref: ObjectRef;
  /** The incarnation, when the caller knows it: the Event is recorded without reading the object first. */
  uid?: string;
}

type RecordEvent = ReturnType<typeof createEventRecorder>;

/** Reading objects, and what is recorded about them: their Events and their Translations' readiness. */
function createObjectReads(
  objects: Objects,
  recordEvent: RecordEvent,
  seenReady: KubernetesActivityDeps['seenReady'] = () => false,
) {
  async function readObject({ ref }: { ref: ObjectRef }): Promise<ReadObjectResult> {
    const object = await objects.accessor(ref).read();
    if (!object) return { found: false };
    const { uid, generation = 0, deletionTimestamp, finalizers = [] } = object.metadata;
    return { found: true, uid, generation, deleting: deletionTimestamp !== undefined, finalizers, object };
  }

  /** Which incarnation of the object the API server holds (its UID), if any: what a lifecycle checks a claim against. */
  async function readIncarnation({ ref }: { ref: ObjectRef }): Promise<{ uid?: string }> {
    const object = await objects.accessor(ref).read();
    return object ? { uid: object.metadata.uid } : {};
  }

  async function recordObjectEvent({ ref, uid, ...event }: RecordObjectEventInput): Promise<{ found: boolean }> {
    const object = uid
      ? ({ metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}), uid } } as KubeObject)
      : await objects.accessor(ref).read();
    if (!object) return { found: false };
    await recordEvent(ref, object, event);
    return { found: true };
  }

  /**
   * Whether the named Translations exist and report Ready=True: a referrer (a Pod) waits for its dependency's
   * Translations (its Node's bridge) to be pushed before writing its own, which would otherwise fail on a missing
   * parent. One call for all of them keeps the referrer's history short.
   */
  async function translationsReady({
    translations,
  }: {
    translations: { namespace: string; name: string }[];
  }): Promise<{ ready: boolean; notReady: string[] }> {
    const notReady: string[] = [];
    // What the watch saw Ready is taken as Ready: a dependency's push that falls back meanwhile fails the push that
    // needs it (a parent missing in MidoNet), as it would a moment after this read. The rest are read afresh, so a
    // watch behind never holds a referrer waiting.
    for (const { namespace, name } of translations.filter((t) => !seenReady(t))) {
      const object = await objects.accessor({ kind: 'Translation', namespace, name }).read();
      const status = object?.status as { conditions?: { type: string; status: string }[] } | undefined;
      const ready = status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      if (!ready || object?.metadata.deletionTimestamp) notReady.push(`${namespace}/${name}`);
    }
    return { ready: notReady.length === 0, notReady };
  }

  return { readObject, readIncarnation, recordObjectEvent, translationsReady };
}

/** The guarded finalizer writes: each tests the incarnation and the finalizer list it decided on. */
function createFinalizerActivities(objects: Objects) {
  /**
   * A JSON patch that tests the UID and the finalizer at its index before removing it, so neither a new incarnation
   * nor a finalizer list changed since the read is ever hit; a failed test re-reads and tries again.
   */
  function releaseFinalizer({ ref, uid, finalizer }: ReleaseFinalizerInput): Promise<ReleaseFinalizerResult> {
    return update<ReleaseFinalizerResult>(objects.accessor(ref), (current) => {
      if (!current) return { done: { released: false, reason: 'NotFound' } };
      if (current.metadata.uid !== uid) return { done: { released: false, reason: 'UidMismatch' } };
      // The finalizer under its current and older names (an earlier Steward's), last first so indices hold.
      const names = finalizerNames(finalizer);
      const finalizers = current.metadata.finalizers ?? [];
      const indices = finalizers.flatMap((f, i) => (names.includes(f) ? [i] : [])).reverse();
      if (indices.length === 0) return { done: { released: false, reason: 'FinalizerAbsent' } };
      return {
        patch: [
          { op: 'test', path: '/metadata/uid', value: uid },
          ...indices.flatMap((i) => [
            { op: 'test', path: `/metadata/finalizers/${i}`, value: finalizers[i] },
            { op: 'remove', path: `/metadata/finalizers/${i}` },
          ]),
        ],
        strategy: k8s.PatchStrategy.JsonPatch,
        then: (patched) =>
          patched.metadata.deletionTimestamp ? { released: true, deleting: true } : { released: true },
      };
    });
  }

  /**
   * Puts `finalizer` on the incarnation `uid` (a no-op when it is there), tested like `releaseFinalizer`. The API
   * server refuses new finalizers on an object being deleted: that is answered as `Deleting`, not as a failure.
   */
  function addFinalizer({ ref, uid, finalizer }: ReleaseFinalizerInput): Promise<AddFinalizerResult> {
    return update<AddFinalizerResult>(objects.accessor(ref), (current) => {
      if (!current) return { done: { added: false, reason: 'NotFound' } };
      if (current.metadata.uid !== uid) return { done: { added: false, reason: 'UidMismatch' } };
      if (current.metadata.finalizers?.includes(finalizer)) return { done: { added: true } };
      if (current.metadata.deletionTimestamp) return { done: { added: false, reason: 'Deleting' } };
      const finalizers = current.metadata.finalizers;
      return {
        patch: [
          { op: 'test', path: '/metadata/uid', value: uid },
          finalizers
            ? { op: 'test', path: '/metadata/finalizers', value: finalizers }
            : { op: 'add', path: '/metadata/finalizers', value: [] },
          { op: 'add', path: '/metadata/finalizers/-', value: finalizer },
        ],
        strategy: k8s.PatchStrategy.JsonPatch,
        then: () => ({ added: true }),
      };
    });
  }

  return { releaseFinalizer, addFinalizer };
}

export function createKubernetesActivities({
  kubeConfig,
  fieldManager = 'steward',
  clock = () => new Date(),
  workflowPage,
  seenReady,
}: KubernetesActivityDeps) {
  const objects = createObjects(kubeConfig, fieldManager);
  const recordEvent = createEventRecorder(objects, clock);
  const { readObject, readIncarnation, recordObjectEvent, translationsReady } = createObjectReads(
    objects,
    recordEvent,
    seenReady,
  );
  const translationActivities = createTranslationActivities(
    objects,
    { fieldManager, workflowPage },
    clock,
    recordEvent,
  );
  const referrers = createReferrerActivities(objects);

  /** An object's whole apply (model/apply-object.ts) in one call: one marker in its workflow's history. */
  const applyObject = (input: ApplyObjectInput): Promise<ApplyObjectResult> =>
    applyObjectSteps(
      { translationsReady, applyTranslations: translationActivities.applyTranslations, ...referrers },
      input,
    );

  return {
    ...translationActivities,
    translationsReady,
    applyObject,
    ...referrers,
    ...createInventoryActivities(objects),
    ...createPeerPodActivities(objects, { fieldManager, workflowPage }, recordEvent),
    readObject,
    readIncarnation,
    ...createNodeAnnotations(objects, recordEvent),
    ...createFinalizerActivities(objects),
    recordObjectEvent,
  };
}

export type KubernetesActivities = ReturnType<typeof createKubernetesActivities>;
