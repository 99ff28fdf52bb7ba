// A large Translation's pusher works from the API server instead of its history (issue 10, defect 2): it reads the
// Translation's resources and its record of what is in MidoNet (`status.childResources`), and writes that record as
// it goes, so neither the workflow's payloads nor its persisted context grow with the Translation.
import * as k8s from '@kubernetes/client-node';
import type { ObjectRef } from '../../model/naming';
import type { BackendResource } from '../../model/translation/types';
import { nextFence, unsettledUntil, type FenceChange, type UnsettledWrite } from '../../model/fence';
import { createObjects, update, type KubeObject } from './objects';

/** One entry of `status.childResources`: what the pusher recorded of one resource. */
export interface RecordedResource {
  kind: string;
  id: string;
  state: string;
}

export interface StoredTranslation {
  /** `metadata.generation`: the one these resources are. */
  generation: number;
  resources: BackendResource[];
  record: RecordedResource[];
  /** The latest time a push attempt's writes may still land, when it is in the future. */
  unsettledUntil?: string;
}

export interface TranslationRecords {
  /** The Translation of this UID, or undefined when it is gone or another incarnation holds the name. */
  read(ref: ObjectRef, uid: string): Promise<StoredTranslation | undefined>;
  /**
   * Replaces `status.childResources` of that incarnation (kept when `record` is undefined; nothing when it is gone),
   * and changes its fence.
   */
  write(ref: ObjectRef, uid: string, record: RecordedResource[] | undefined, fence?: FenceChange): Promise<void>;
}

interface TranslationObject extends KubeObject {
  resources?: { kind: string; parent?: string; body: string }[];
  status?: { childResources?: RecordedResource[]; unsettledWrites?: UnsettledWrite[] };
}

export function createTranslationRecords(
  kubeConfig: k8s.KubeConfig,
  fieldManager = 'steward',
  clock: () => Date = () => new Date(),
): TranslationRecords {
  const objects = createObjects(kubeConfig, fieldManager);
  const current = async (ref: ObjectRef, uid: string): Promise<TranslationObject | undefined> => {
    const object: TranslationObject | undefined = await objects.accessor(ref).read();
    return object?.metadata.uid === uid ? object : undefined;
  };
  return {
    async read(ref, uid) {
      const object = await current(ref, uid);
      if (!object) return undefined;
      const until = unsettledUntil(object.status?.unsettledWrites, clock());
      return {
        generation: object.metadata.generation ?? 0,
        resources: (object.resources ?? []).map(
          ({ kind, parent, body }) => ({ kind, parent: parent ?? '', body }) as BackendResource,
        ),
        record: (object.status?.childResources ?? []).map(({ kind, id, state }) => ({ kind, id, state })),
        ...(until ? { unsettledUntil: until } : {}),
      };
    },
    async write(ref, uid, record, fence) {
      const status = objects.translationStatus(ref, () => current(ref, uid));
      await update<void>(status, (object) =>
        object
          ? {
              patch: {
                metadata: { resourceVersion: object.metadata.resourceVersion },
                status: {
                  ...(record ? { childResources: record } : {}),
                  unsettledWrites: nextFence((object as TranslationObject).status?.unsettledWrites, fence, clock()),
                },
              },
              strategy: k8s.PatchStrategy.MergePatch,
              then: () => undefined,
            }
          : { done: undefined },
      );
    },
  };
}
