// Reading and patching the kinds Steward touches, by ObjectRef, as plain JSON; and the read → decide → patch loop
// that every optimistic-concurrency write goes through.
import * as k8s from '@kubernetes/client-node';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout } from 'node:timers/promises';
import {
  API_VERSIONS,
  describeRef,
  PEERPOD_API,
  TRANSLATION_API,
  type LifecycleKind,
  type ObjectRef,
} from '../../model/naming';
import { createRest, pathOf, type Rest, type RestCall } from '../../platform/kubernetes/rest';
import { TEMPORAL_UI_ANNOTATION } from '../../model/vocabulary';
import { kubernetesFailure, statusOf, toFailure } from './errors';

/** An object as the API server sends it (JSON), with the metadata fields Steward reads typed. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    resourceVersion: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    /** Who wrote which fields (server-side apply's record); read to tell Steward's Translations from others'. */
    managedFields?: k8s.V1ManagedFieldsEntry[];
    ownerReferences?: k8s.V1OwnerReference[];
  };
  [field: string]: unknown;
}

export type PatchStrategy = (typeof k8s.PatchStrategy)[keyof typeof k8s.PatchStrategy];

/** One object's read and patch; `read` gives undefined for 404. */
export interface Accessor {
  what: string;
  read(): Promise<KubeObject | undefined>;
  patch(body: unknown, strategy: PatchStrategy): Promise<KubeObject>;
}

/**
 * Within `rememberingWrites`, what a read, a write or a list answered with stands for the next read of that object: one
 * sync reads a Translation once (its apply answers with it), not again before each write to its status, and a Pod's
 * Node once (to translate, then to add the Pod to its referrers). Every write is
 * conditional (a resourceVersion or a JSON-patch `test`), so one computed from an object changed since is refused,
 * and a refused or failed write forgets it: the retry reads the API server.
 */
const remembered = new AsyncLocalStorage<Map<string, KubeObject>>();
export const rememberingWrites = <T>(call: () => Promise<T>): Promise<T> => remembered.run(new Map(), call);
const memoKey = (ref: ObjectRef) => `${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
/** Keeps `object` as `ref`'s latest (undefined: forgets it); nothing outside `rememberingWrites`. */
export function remember(ref: ObjectRef, object: KubeObject | undefined): void {
  const memo = remembered.getStore();
  if (!memo) return;
  if (object) memo.set(memoKey(ref), object);
  else memo.delete(memoKey(ref));
}

/** A write whose answer is remembered as `ref`'s latest, and whose failure forgets it. */
export async function remembering(ref: ObjectRef, write: () => Promise<unknown>): Promise<KubeObject> {
  try {
    const written = (await write()) as KubeObject;
    remember(ref, written);
    return written;
  } catch (error) {
    remember(ref, undefined);
    throw error;
  }
}

/** Where each kind's objects are in the API: the group's root, the plural, and whether a namespace is in the path. */
const KIND_PATHS: Record<LifecycleKind, { root: string; plural: string; namespaced: boolean }> = {
  Node: { root: '/api/v1', plural: 'nodes', namespaced: false },
  Pod: { root: '/api/v1', plural: 'pods', namespaced: true },
  Service: { root: '/api/v1', plural: 'services', namespaced: true },
  Endpoints: { root: '/api/v1', plural: 'endpoints', namespaced: true },
  Translation: { root: `/apis/${API_VERSIONS.Translation}`, plural: TRANSLATION_API.plural, namespaced: true },
  PeerPod: { root: `/apis/${API_VERSIONS.PeerPod}`, plural: PEERPOD_API.plural, namespaced: true },
};

/** The path of a kind's collection (in `namespace` when given) or of one object of it. */
export const collectionPath = (kind: LifecycleKind, namespace?: string) => {
  const { root, plural } = KIND_PATHS[kind];
  return namespace === undefined ? `${root}${pathOf(plural)}` : `${root}${pathOf('namespaces', namespace, plural)}`;
};

/** Every call the activities make to the API server goes through `rest` (tests count them there). */
export function createObjects(kubeConfig: k8s.KubeConfig, fieldManager: string, rest: Rest = createRest(kubeConfig)) {
  /** The path of the object `ref` names, refused when Steward does not handle its kind or it lacks a namespace. */
  function pathOfRef(ref: ObjectRef): string {
    const kind = KIND_PATHS[ref.kind];
    if (!kind)
      throw kubernetesFailure(
        'KubernetesBadRequest',
        `${describeRef(ref)}: Steward does not handle kind ${String(ref.kind)}`,
      );
    if (kind.namespaced && !ref.namespace)
      throw kubernetesFailure('KubernetesBadRequest', `${describeRef(ref)}: a ${ref.kind} needs a namespace`);
    return `${collectionPath(ref.kind, kind.namespaced ? ref.namespace : undefined)}${pathOf(ref.name)}`;
  }

  /** A read of `path`; undefined for 404. */
  async function readPath(path: string, what: string): Promise<KubeObject | undefined> {
    try {
      return await rest<KubeObject>({ method: 'GET', path });
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw toFailure(error, `read ${what}`);
    }
  }

  /** A patch of `path` by `strategy`, as Steward's field manager; errors as the API server gave them. */
  const patchPath = (path: string, body: unknown, strategy: PatchStrategy, query: RestCall['query'] = {}) =>
    rest<KubeObject>({ method: 'PATCH', path, query: { ...query, fieldManager }, body, contentType: strategy });

  function accessor(ref: ObjectRef): Accessor {
    const path = pathOfRef(ref);
    const what = describeRef(ref);
    return {
      what,
      read: async () => {
        const known = remembered.getStore()?.get(memoKey(ref));
        if (known) return known;
        const read = await readPath(path, what);
        if (read) remember(ref, read);
        return read;
      },
      patch: (body, strategy) => remembering(ref, () => patchPath(path, body, strategy)),
    };
  }

  /** A Translation's status subresource: read with the object (or by `read`), patched on its own. */
  function translationStatus(ref: ObjectRef, read: Accessor['read'] = () => accessor(ref).read()): Accessor {
    const path = `${pathOfRef(ref)}/status`;
    return {
      what: `${describeRef(ref)} status`,
      read,
      patch: (body, strategy) => remembering(ref, () => patchPath(path, body, strategy)),
    };
  }

  /**
   * Deletes that incarnation of the object `ref` names: the UID precondition spares one of the same name made since.
   * Gone already (404), or another incarnation holding the name (409): nothing of it is left to delete. `what` names
   * it in a failure.
   */
  async function deleteIncarnation(ref: ObjectRef, uid: string, what: string): Promise<void> {
    remember(ref, undefined);
    try {
      await rest({ method: 'DELETE', path: pathOfRef(ref), body: { preconditions: { uid } } });
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 409) return;
      throw toFailure(error, `delete ${what}`);
    }
  }

  /** What an Event or an ownerReference says about the object. */
  const typeMeta = (ref: ObjectRef) => ({ apiVersion: API_VERSIONS[ref.kind], kind: ref.kind });

  return {
    rest,
    fieldManager,
    pathOfRef,
    readPath,
    patchPath,
    deleteIncarnation,
    accessor,
    translationStatus,
    typeMeta,
  };
}

export type Objects = ReturnType<typeof createObjects>;

/** The Temporal UI page of a workflow, by its id; absent when the UI's address is not set. */
export type WorkflowPage = ((workflowId: string) => string) | undefined;

/** How the objects Steward writes are written: the manager of its server-side applies, and the link to its workflow. */
export interface WriteOptions {
  fieldManager: string;
  workflowPage?: WorkflowPage;
}

/** The annotation linking an object Steward writes to its workflow's page: none without the UI's address. */
export const workflowPageAnnotation = (page: WorkflowPage, workflowId: string): Record<string, string> =>
  page ? { [TEMPORAL_UI_ANNOTATION]: page(workflowId) } : {};

/** `metadata.annotations` of an applied object, left out when empty: an apply never owns an empty map. */
export const annotationsField = (annotations: Record<string, string>) =>
  Object.keys(annotations).length > 0 ? { annotations } : {};

/** What a step of `update` decided: finish with a result, or send a patch and finish with what it returned. */
export type Decision<R> = { done: R } | { patch: unknown; strategy: PatchStrategy; then: (patched: KubeObject) => R };

const ATTEMPTS = 8;

/**
 * Read → decide → patch, again from a fresh read when the object changed meanwhile: a 409 (the patch carried the
 * resourceVersion it was computed from), a 404 (gone since the read), or a failed JSON-patch `test` (422).
 * `known`: the object as this process's last write of it left it, decided on first without a read. A patch decided
 * from it is conditional like any other; a `done` decided from it is decided again from a fresh read, since only a
 * write proves the object has not changed since.
 */
export async function update<R>(
  object: Accessor,
  decide: (current: KubeObject | undefined) => Decision<R>,
  known?: KubeObject,
): Promise<R> {
  let unread = known;
  for (let attempt = known ? 0 : 1; ; attempt++) {
    const fromKnown = unread;
    unread = undefined;
    const decision = decide(fromKnown ?? (await object.read()));
    if ('done' in decision) {
      if (fromKnown) continue;
      return decision.done;
    }
    try {
      return decision.then(await object.patch(decision.patch, decision.strategy));
    } catch (error) {
      const status = statusOf(error);
      const changed =
        status === 409 || status === 404 || (status === 422 && decision.strategy === k8s.PatchStrategy.JsonPatch);
      if (!changed || attempt === ATTEMPTS) throw toFailure(error, `patch ${object.what}`);
      // Writers that collided would collide again in lockstep; a growing random pause spreads them out.
      await setTimeout(Math.random() * 25 * attempt);
    }
  }
}
