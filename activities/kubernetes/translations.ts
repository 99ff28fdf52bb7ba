// Writing Translations (seed 000) and their status. Translations are applied with server-side apply, so the set of
// fields Steward owns is exactly what it sent last; stale ones are found, as midonet-kubernetes finds them, by
// listing in all namespaces by the owner's label and deleting what was not just applied.
import * as k8s from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { describeRef, type ObjectRef } from '../../workflows/naming';
import {
  GLOBAL_LABEL,
  type KubernetesKind,
  OWNER_UID_LABEL,
  type Translation,
} from '../../workflows/translation/types';
import { kubernetesFailure, statusOf, toFailure } from './errors';
import type { EventInput } from './events';
import { TRANSLATION_API } from '../../workflows/naming';
import { type KubeObject, type Objects, update } from './objects';
import { type ChildResourceInput, type ConditionInput, kubeTime, nextStatus, type TranslationStatus } from './status';

/**
 * Whose Translations these are. An object owns its Translations through an ownerReference and the
 * `midonet.org/owner-uid` label. The global Translations (shared chains and rules) have no owner object: they are
 * expressed as `{ kind: 'Global' }` and found by the presence of the `midonet.org/global` label, as upstream does.
 */
export type TranslationOwner =
  | { kind: KubernetesKind; namespace?: string; name: string; uid: string }
  | { kind: 'Global' };

export interface ApplyTranslationsInput {
  owner: TranslationOwner;
  /** Every Translation the owner has now; any other Translation of the owner is stale and deleted. */
  translations: Translation[];
}

export interface ApplyTranslationsResult {
  /** `<namespace>/<name>` of each applied Translation, in input order. */
  applied: string[];
  /** `<namespace>/<name>` of each stale Translation: deletion requested now or earlier (its finalizer holds it until the pusher releases it). */
  deleted: string[];
  /**
   * Applied Translations that are being deleted (someone deleted them, or a previous incarnation's is still being
   * finalized): apply again once they are gone, or the owner is left without them.
   */
  terminating: string[];
}

export interface RecordTranslationStatusInput {
  ref: ObjectRef;
  /** When given, a Translation with another UID (a new incarnation) is left alone: `{ found: false }`. */
  uid?: string;
  /** The `metadata.generation` the workflow acted on. */
  generation: number;
  /** Absent: the ones there are kept (a large Translation's push writes its own record). */
  childResources?: ChildResourceInput[];
  ready: ConditionInput;
  synced: ConditionInput;
  event?: EventInput;
}

export type RecordTranslationStatusResult =
  | { found: false }
  | { found: true; uid: string; changed: boolean; status: TranslationStatus };

const ownerName = (owner: TranslationOwner) =>
  owner.kind === 'Global' ? 'the global Translations' : describeRef(owner);
const keyOf = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

function checkOwnership(owner: TranslationOwner, translation: Translation): void {
  const belongs =
    owner.kind === 'Global'
      ? GLOBAL_LABEL in translation.labels && translation.ownerReferences.length === 0
      : translation.labels[OWNER_UID_LABEL] === owner.uid &&
        translation.ownerReferences.some((ref) => ref.uid === owner.uid);
  if (!belongs) {
    throw kubernetesFailure(
      'TranslationOwnerMismatch',
      `Translation ${keyOf(translation.namespace, translation.name)} does not carry the label and ownerReference of ${ownerName(owner)}`,
    );
  }
}

export function createTranslationActivities(
  objects: Objects,
  fieldManager: string,
  clock: () => Date,
  recordEvent: (ref: ObjectRef, object: KubeObject, event: EventInput) => Promise<unknown>,
) {
  const { custom } = objects;

  async function apply(translation: Translation): Promise<KubeObject> {
    const { name, namespace } = translation;
    try {
      const applied: unknown = await custom.patchNamespacedCustomObject(
        {
          ...TRANSLATION_API,
          namespace,
          name,
          fieldManager,
          force: true,
          body: {
            apiVersion: `${TRANSLATION_API.group}/${TRANSLATION_API.version}`,
            kind: 'Translation',
            metadata: {
              name,
              namespace,
              labels: translation.labels,
              ownerReferences: translation.ownerReferences,
              finalizers: translation.finalizers,
            },
            resources: translation.resources,
          },
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.ServerSideApply),
      );
      return applied as KubeObject;
    } catch (error) {
      throw toFailure(error, `apply Translation ${namespace}/${name}`);
    }
  }

  async function deleteStale(object: KubeObject): Promise<void> {
    const { name, namespace = '', uid } = object.metadata;
    try {
      // The UID precondition spares a Translation of the same name created since the list.
      await custom.deleteNamespacedCustomObject({
        ...TRANSLATION_API,
        namespace,
        name,
        body: { preconditions: { uid } },
      });
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 409) return;
      throw toFailure(error, `delete stale Translation ${namespace}/${name}`);
    }
  }

  async function applyTranslations({ owner, translations }: ApplyTranslationsInput): Promise<ApplyTranslationsResult> {
    translations.forEach((translation) => checkOwnership(owner, translation));
    const applied = await Promise.all(translations.map(apply));
    const labelSelector = owner.kind === 'Global' ? GLOBAL_LABEL : `${OWNER_UID_LABEL}=${owner.uid}`;
    let listed: { items: KubeObject[] };
    try {
      listed = (await custom.listCustomObjectForAllNamespaces({
        group: TRANSLATION_API.group,
        version: TRANSLATION_API.version,
        resourcePlural: TRANSLATION_API.plural,
        labelSelector,
      })) as { items: KubeObject[] };
    } catch (error) {
      throw toFailure(error, `list Translations of ${ownerName(owner)}`);
    }
    const current = new Set(translations.map((t) => keyOf(t.namespace, t.name)));
    const stale = listed.items.filter((item) => !current.has(keyOf(item.metadata.namespace, item.metadata.name)));
    await Promise.all(stale.filter((item) => !item.metadata.deletionTimestamp).map(deleteStale));
    const names = (items: KubeObject[]) => items.map((item) => keyOf(item.metadata.namespace, item.metadata.name));
    return {
      applied: names(applied),
      deleted: names(stale).sort(),
      terminating: names(applied.filter((item) => item.metadata.deletionTimestamp)),
    };
  }

  async function recordTranslationStatus(input: RecordTranslationStatusInput): Promise<RecordTranslationStatusResult> {
    const { ref } = input;
    if (ref.kind !== 'Translation')
      throw kubernetesFailure(
        'KubernetesBadRequest',
        `recordTranslationStatus is for Translations, not ${describeRef(ref)}`,
      );
    const translation = objects.accessor(ref);
    const status = {
      what: `${translation.what} status`,
      read: () => translation.read(),
      patch: async (body: unknown, strategy: string) => {
        const namespace = ref.namespace ?? '';
        return (await custom.patchNamespacedCustomObjectStatus(
          { ...TRANSLATION_API, namespace, name: ref.name, body, fieldManager },
          k8s.setHeaderOptions('Content-Type', strategy),
        )) as KubeObject;
      },
    };
    const now = kubeTime(clock());
    const result = await update<RecordTranslationStatusResult & { object?: KubeObject }>(status, (current) => {
      if (!current || (input.uid !== undefined && current.metadata.uid !== input.uid))
        return { done: { found: false } };
      const previous = (current as { status?: Partial<TranslationStatus> }).status;
      const next = nextStatus(previous, input, now);
      // A kept record is not sent back: the answer is in the workflow's history, which must not grow with it.
      const found = {
        found: true as const,
        uid: current.metadata.uid,
        status: input.childResources ? next : { ...next, childResources: [] },
      };
      if (isDeepStrictEqual(previous, next)) return { done: { ...found, changed: false, object: current } };
      return {
        patch: { metadata: { resourceVersion: current.metadata.resourceVersion }, status: next },
        strategy: k8s.PatchStrategy.MergePatch,
        then: (patched) => ({ ...found, changed: true, object: patched }),
      };
    });
    if (!result.found) return result;
    const { object, ...answer } = result;
    if (input.event && object) await recordEvent(ref, object, input.event);
    return answer;
  }

  return { applyTranslations, recordTranslationStatus };
}
