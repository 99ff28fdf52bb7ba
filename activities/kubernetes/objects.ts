// Reading and patching the kinds Steward touches, by ObjectRef, as plain JSON; and the read → decide → patch loop
// that every optimistic-concurrency write goes through.
import * as k8s from '@kubernetes/client-node';
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout } from 'node:timers/promises';
import { describeRef, PEERPOD_API, TRANSLATION_API, type LifecycleKind, type ObjectRef } from '../../model/naming';
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

interface KindApi {
  apiVersion: string;
  namespaced: boolean;
  read(name: string, namespace: string): Promise<unknown>;
  patch(name: string, namespace: string, body: unknown, options: k8s.ConfigurationOptions): Promise<unknown>;
}

/** A namespaced core kind's typed read and patch. */
type NamespacedRead = (param: { name: string; namespace: string }) => Promise<unknown>;
type NamespacedPatch = (
  param: { name: string; namespace: string; body: unknown; fieldManager: string },
  options: k8s.ConfigurationOptions,
) => Promise<unknown>;

// The typed core API hands back class instances (Dates for timestamps); activities return plain JSON.
export const plain = <T extends KubeObject = KubeObject>(value: unknown) => JSON.parse(JSON.stringify(value)) as T;

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

export function createObjects(kubeConfig: k8s.KubeConfig, fieldManager: string) {
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const customKind = (api: { group: string; version: string; plural: string }): KindApi => ({
    apiVersion: `${api.group}/${api.version}`,
    namespaced: true,
    read: (name, namespace) => custom.getNamespacedCustomObject({ ...api, namespace, name }),
    patch: (name, namespace, body, options) =>
      custom.patchNamespacedCustomObject({ ...api, namespace, name, body, fieldManager }, options),
  });
  // The typed client's methods use `this`: they come bound.
  const coreKind = (read: NamespacedRead, patch: NamespacedPatch): KindApi => ({
    apiVersion: 'v1',
    namespaced: true,
    read: (name, namespace) => read({ name, namespace }),
    patch: (name, namespace, body, options) => patch({ name, namespace, body, fieldManager }, options),
  });
  const kinds: Record<LifecycleKind, KindApi> = {
    Node: {
      apiVersion: 'v1',
      namespaced: false,
      read: (name) => core.readNode({ name }),
      patch: (name, _namespace, body, options) => core.patchNode({ name, body, fieldManager }, options),
    },
    Pod: coreKind(core.readNamespacedPod.bind(core), core.patchNamespacedPod.bind(core)),
    Service: coreKind(core.readNamespacedService.bind(core), core.patchNamespacedService.bind(core)),
    Endpoints: coreKind(core.readNamespacedEndpoints.bind(core), core.patchNamespacedEndpoints.bind(core)),
    Translation: customKind(TRANSLATION_API),
    PeerPod: customKind(PEERPOD_API),
  };

  function kindOf(ref: ObjectRef): KindApi & { namespace: string } {
    const api = kinds[ref.kind];
    if (!api)
      throw kubernetesFailure(
        'KubernetesBadRequest',
        `${describeRef(ref)}: Steward does not handle kind ${String(ref.kind)}`,
      );
    if (api.namespaced && !ref.namespace)
      throw kubernetesFailure('KubernetesBadRequest', `${describeRef(ref)}: a ${ref.kind} needs a namespace`);
    return { ...api, namespace: api.namespaced ? (ref.namespace ?? '') : '' };
  }

  function accessor(ref: ObjectRef): Accessor {
    const api = kindOf(ref);
    const what = describeRef(ref);
    return {
      what,
      read: async () => {
        const known = remembered.getStore()?.get(memoKey(ref));
        if (known) return known;
        try {
          const read = plain(await api.read(ref.name, api.namespace));
          remember(ref, read);
          return read;
        } catch (error) {
          if (statusOf(error) === 404) return undefined;
          throw toFailure(error, `read ${what}`);
        }
      },
      patch: (body, strategy) =>
        remembering(ref, async () =>
          plain(await api.patch(ref.name, api.namespace, body, k8s.setHeaderOptions('Content-Type', strategy))),
        ),
    };
  }

  /** A Translation's status subresource: read with the object (or by `read`), patched on its own. */
  function translationStatus(ref: ObjectRef, read: Accessor['read'] = () => accessor(ref).read()): Accessor {
    return {
      what: `${describeRef(ref)} status`,
      read,
      patch: (body, strategy) =>
        remembering(ref, () =>
          custom.patchNamespacedCustomObjectStatus(
            { ...TRANSLATION_API, namespace: ref.namespace ?? '', name: ref.name, body, fieldManager },
            k8s.setHeaderOptions('Content-Type', strategy),
          ),
        ),
    };
  }

  /** What an Event or an ownerReference says about the object. */
  const typeMeta = (ref: ObjectRef) => ({ apiVersion: kindOf(ref).apiVersion, kind: ref.kind });

  return { core, custom, accessor, translationStatus, typeMeta };
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
