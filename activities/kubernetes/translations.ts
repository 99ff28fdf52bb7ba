// Writing Translations (seed 000) and their status. Translations are applied with server-side apply, so the set of
// fields Steward owns is exactly what it sent last; stale ones are found, as midonet-kubernetes finds them, by
// listing in all namespaces by the owner's label and deleting what was not just applied.
import * as k8s from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import { describeRef, workflowId, type ObjectRef } from '../../model/naming';
import { GLOBAL_LABEL, OWNER_UID_LABEL, type Translation } from '../../model/translation/types';
import { ownsTranslation } from '../../model/translation/model';
import { kubernetesFailure, toFailure } from './errors';
import { nextFence, unsettledUntil, type UnsettledWrite } from '../../model/fence';
import type { EventInput } from './events';
import { API_VERSIONS } from '../../model/naming';
import {
  collectionPath,
  type Decision,
  type KubeObject,
  type Objects,
  update,
  workflowPageAnnotation,
  annotationsField,
  remember,
  remembering,
  type WriteOptions,
} from './objects';
import { type ChildResourceInput, type ConditionInput, kubeTime, nextStatus, type TranslationStatus } from './status';
import type {
  ApplyTranslationsInput,
  ApplyTranslationsResult,
  TranslationOwner,
  WrittenTranslation,
} from '../../model/kubernetes-calls';

export type { ApplyTranslationsInput, ApplyTranslationsResult, TranslationOwner };

export interface RecordTranslationStatusInput {
  ref: ObjectRef;
  /** When given, a Translation with another UID (a new incarnation) is left alone: `{ found: false }`. */
  uid?: string;
  /** The `metadata.generation` the workflow acted on. */
  generation: number;
  /** Absent: the ones there are kept (a large Translation's push writes its own record). */
  childResources?: ChildResourceInput[];
  /** The ones kept are no longer claimed synced. */
  unverified?: boolean;
  /** A push attempt that has ended: its fence entry (`status.unsettledWrites`) goes in the same write. */
  settles?: string;
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

type RecordEvent = (ref: ObjectRef, object: KubeObject, event: EventInput) => Promise<unknown>;

export function createTranslationActivities(
  objects: Objects,
  { fieldManager, workflowPage }: WriteOptions,
  clock: () => Date,
  recordEvent: RecordEvent,
) {
  return {
    ...createTranslationApplier(objects, { fieldManager, workflowPage }),
    ...createTranslationStatusRecorder(objects, clock, recordEvent),
  };
}

/** The workflow that pushes a Translation: its owner's, or its own when no object owns it (the globals). */
const pusherOf = (owner: TranslationOwner, { namespace, name }: Translation) =>
  workflowId(owner.kind === 'Global' ? { kind: 'Translation', namespace, name } : owner);

function createTranslationApplier(objects: Objects, { workflowPage }: WriteOptions) {
  async function apply(owner: TranslationOwner, translation: Translation): Promise<KubeObject> {
    const { name, namespace } = translation;
    const ref = { kind: 'Translation', namespace, name } as const;
    const annotations = workflowPageAnnotation(workflowPage, pusherOf(owner, translation));
    try {
      return await remembering(ref, () =>
        objects.patchPath(
          objects.pathOfRef(ref),
          {
            apiVersion: API_VERSIONS.Translation,
            kind: 'Translation',
            metadata: {
              name,
              namespace,
              labels: translation.labels,
              ...annotationsField(annotations),
              ownerReferences: translation.ownerReferences,
              finalizers: translation.finalizers,
            },
            resources: translation.resources,
          },
          k8s.PatchStrategy.ServerSideApply,
          { force: true },
        ),
      );
    } catch (error) {
      throw toFailure(error, `apply Translation ${namespace}/${name}`);
    }
  }

  async function applyTranslations({ owner, translations }: ApplyTranslationsInput): Promise<ApplyTranslationsResult> {
    translations.forEach((translation) => checkOwnership(owner, translation));
    const applied = await Promise.all(translations.map((translation) => apply(owner, translation)));
    const listed = await listOwned(objects, owner);
    const current = new Set(translations.map((t) => keyOf(t.namespace, t.name)));
    const stale = listed.filter((item) => !current.has(keyOf(item.metadata.namespace, item.metadata.name)));
    await Promise.all(
      stale
        .filter((item) => !item.metadata.deletionTimestamp)
        .map((item) => deleteTranslation(objects, item.metadata, 'stale')),
    );
    const names = (items: KubeObject[]) => items.map((item) => keyOf(item.metadata.namespace, item.metadata.name));
    return {
      applied: names(applied),
      written: applied.map((item) => writtenOf(item)),
      stale: stale.map((item) => writtenOf(item)),
      deleted: names(stale).sort(),
      terminating: names(applied.filter((item) => item.metadata.deletionTimestamp)),
    };
  }

  /** The Translations of `owner` (by its UID label), in all namespaces: what its deletion finalizes. */
  async function listOwnedTranslations({ owner }: { owner: TranslationOwner }): Promise<WrittenTranslation[]> {
    return (await listOwned(objects, owner)).map((item) => writtenOf(item));
  }

  /** Deletes that incarnation of a Translation (gone already, or another incarnation: nothing to do). */
  async function removeTranslation({ ref, uid }: { ref: ObjectRef; uid: string }): Promise<void> {
    await deleteTranslation(objects, { name: ref.name, namespace: ref.namespace ?? '', uid }, 'finalized');
  }

  return { applyTranslations, listOwnedTranslations, removeTranslation };
}

function writtenOf(item: KubeObject, now = new Date()): WrittenTranslation {
  const until = unsettledUntil(
    (item as { status?: { unsettledWrites?: UnsettledWrite[] } }).status?.unsettledWrites,
    now,
  );
  return {
    key: keyOf(item.metadata.namespace, item.metadata.name),
    uid: item.metadata.uid,
    generation: item.metadata.generation ?? 0,
    ...(until ? { unsettledUntil: until } : {}),
    ...(item.metadata.deletionTimestamp ? { deleting: true as const } : {}),
  };
}

/** Every Translation of `owner`, in all namespaces, found by its label. */
async function listOwned(objects: Objects, owner: TranslationOwner): Promise<KubeObject[]> {
  const labelSelector = owner.kind === 'Global' ? GLOBAL_LABEL : `${OWNER_UID_LABEL}=${owner.uid}`;
  try {
    const listed = await objects.rest<{ items: KubeObject[] }>({
      method: 'GET',
      path: collectionPath('Translation'),
      query: { labelSelector },
    });
    for (const item of listed.items)
      remember({ kind: 'Translation', namespace: item.metadata.namespace, name: item.metadata.name }, item);
    return listed.items.filter((item) => ownsTranslation(owner.kind, item.metadata.name));
  } catch (error) {
    throw toFailure(error, `list Translations of ${ownerName(owner)}`);
  }
}

/** Deletes that incarnation of a Translation; the UID precondition spares one of the same name created since the list. */
const deleteTranslation = (
  objects: Objects,
  { name, namespace = '', uid }: { name: string; namespace?: string; uid: string },
  what: string,
) =>
  objects.deleteIncarnation({ kind: 'Translation', namespace, name }, uid, `${what} Translation ${namespace}/${name}`);

/** What a status write decided, with the object an Event is then recorded about. */
type StatusDecision = RecordTranslationStatusResult & { object?: KubeObject };

function createTranslationStatusRecorder(objects: Objects, clock: () => Date, recordEvent: RecordEvent) {
  async function recordTranslationStatus(input: RecordTranslationStatusInput): Promise<RecordTranslationStatusResult> {
    const { ref } = input;
    if (ref.kind !== 'Translation')
      throw kubernetesFailure(
        'KubernetesBadRequest',
        `recordTranslationStatus is for Translations, not ${describeRef(ref)}`,
      );
    const status = objects.translationStatus(ref);
    const now = kubeTime(clock());
    const result = await update<StatusDecision>(status, (current) => decideStatus(current, input, now));
    if (!result.found) return result;
    const { object, ...answer } = result;
    if (input.event && object) await recordEvent(ref, object, input.event);
    return answer;
  }

  return { recordTranslationStatus };
}

/** The status `input` asks for against the one there: nothing to write, or a merge patch of the whole status. */
function decideStatus(
  current: KubeObject | undefined,
  input: RecordTranslationStatusInput,
  now: string,
): Decision<StatusDecision> {
  if (!current || (input.uid !== undefined && current.metadata.uid !== input.uid)) return { done: { found: false } };
  const previous = (current as { status?: Partial<TranslationStatus> }).status;
  const next = nextStatus(previous, input, now);
  // A kept record is not sent back: the answer is in the workflow's history, which must not grow with it.
  const found = {
    found: true as const,
    uid: current.metadata.uid,
    status: input.childResources ? next : { ...next, childResources: [] },
  };
  // The push's fence (status.unsettledWrites) is the push's own business, left as it is, unless an attempt settles.
  const { unsettledWrites, ...described } = (previous ?? {}) as Partial<TranslationStatus> & {
    unsettledWrites?: UnsettledWrite[];
  };
  const fence = input.settles !== undefined && unsettledWrites?.some((w) => w.attempt === input.settles);
  if (!fence && previous && isDeepStrictEqual(described, next))
    return { done: { ...found, changed: false, object: current } };
  const settled = fence
    ? { unsettledWrites: nextFence(unsettledWrites, { remove: input.settles! }, new Date(now)) }
    : {};
  return {
    patch: { metadata: { resourceVersion: current.metadata.resourceVersion }, status: { ...next, ...settled } },
    strategy: k8s.PatchStrategy.MergePatch,
    then: (patched) => ({ ...found, changed: true, object: patched }),
  };
}
