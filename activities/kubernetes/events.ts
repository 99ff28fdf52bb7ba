// Kubernetes Events, so `kubectl describe` shows what Steward did. An Event's name is derived from the object's UID
// and the event's type, reason and message: the same event again bumps `count` and `lastTimestamp` of the one
// already there (as client-go's correlator does), instead of adding a line per retry.
import * as k8s from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { ObjectRef } from '../../model/naming';
import { kubernetesFailure, statusOf, toFailure } from './errors';
import { pathOf } from '../../platform/kubernetes/rest';
import { type Decision, type KubeObject, type Objects, update } from './objects';

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** Short CamelCase reason, the same word as the condition's and the workflow's last error. */
  reason: string;
  message: string;
}

export const EVENT_SOURCE = 'steward';
// The API server rejects longer messages (core/v1 Event validation).
const MAX_MESSAGE = 1024;

export function eventName(object: KubeObject, event: EventInput): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([object.metadata.uid, event.type, event.reason, event.message]))
    .digest('hex');
  return `${object.metadata.name.slice(0, 200)}.${digest.slice(0, 16)}`;
}

/** How many Events a process remembers it wrote (their resourceVersion and count, some 200 bytes each). */
const KNOWN_EVENTS = 4096;

type Written = { resourceVersion: string; count: number };
type Recorded = { name: string; count: number };
type EventObject = KubeObject & { count?: number };

/**
 * The Events this process wrote last, by namespace and name: the same event again is one patch conditional on the
 * resourceVersion written, not a create refused with 409 and a read. Another writer's bump since makes the patch a
 * 409, and `update` reads the Event afresh. Oldest first, so the least recently written are forgotten first.
 */
function writtenEvents() {
  const known = new Map<string, Written>();
  return {
    get: (key: string) => known.get(key),
    keep(key: string, written: Written) {
      known.delete(key);
      known.set(key, written);
      if (known.size > KNOWN_EVENTS) known.delete(known.keys().next().value!);
    },
    forget: (key: string) => known.delete(key),
  };
}
type WrittenEvents = ReturnType<typeof writtenEvents>;

/** Where a namespace's Events are. */
const eventsPath = (namespace: string) => `/api/v1${pathOf('namespaces', namespace, 'events')}`;

/** An Event's read and merge patch; what the patch answers is remembered, a failed one forgets it. */
function eventAccessor(objects: Objects, key: string, namespace: string, name: string, known: WrittenEvents) {
  const path = `${eventsPath(namespace)}${pathOf(name)}`;
  return {
    what: `Event ${key}`,
    read: () => objects.readPath(path, `Event ${key}`) as Promise<EventObject | undefined>,
    patch: async (body: unknown) => {
      try {
        const patched = (await objects.patchPath(path, body, k8s.PatchStrategy.MergePatch)) as EventObject;
        known.keep(key, { resourceVersion: patched.metadata.resourceVersion, count: patched.count ?? 1 });
        return patched;
      } catch (error) {
        known.forget(key);
        throw error;
      }
    },
  };
}

export function createEventRecorder(objects: Objects, clock: () => Date) {
  const instance = hostname().slice(0, 128);
  const known = writtenEvents();

  /** Records `event` about `object` (as read), in its namespace; Events about cluster-scoped objects go to `default`. */
  return async function recordEvent(ref: ObjectRef, object: KubeObject, event: EventInput): Promise<Recorded> {
    const namespace = object.metadata.namespace ?? 'default';
    const name = eventName(object, event);
    const key = `${namespace}/${name}`;
    const now = clock();
    /** Creates the Event; undefined when one of that name is there already. */
    const create = async (): Promise<Recorded | undefined> => {
      try {
        const created = await objects.rest<KubeObject>({
          method: 'POST',
          path: eventsPath(namespace),
          query: { fieldManager: objects.fieldManager },
          body: {
            metadata: { name, namespace },
            involvedObject: {
              ...objects.typeMeta(ref),
              name: object.metadata.name,
              namespace: object.metadata.namespace,
              uid: object.metadata.uid,
              resourceVersion: object.metadata.resourceVersion,
            },
            type: event.type,
            reason: event.reason,
            message: event.message.slice(0, MAX_MESSAGE),
            count: 1,
            firstTimestamp: now,
            lastTimestamp: now,
            source: { component: EVENT_SOURCE },
            reportingComponent: EVENT_SOURCE,
            reportingInstance: instance,
          },
        });
        known.keep(key, { resourceVersion: created.metadata.resourceVersion, count: 1 });
        return { name, count: 1 };
      } catch (error) {
        if (statusOf(error) !== 409)
          throw toFailure(error, `record event ${event.reason} on ${namespace}/${object.metadata.name}`);
        known.forget(key);
        return undefined;
      }
    };
    const written = known.get(key);
    const bump = () =>
      update(
        eventAccessor(objects, key, namespace, name, known),
        (current): Decision<Recorded | undefined> => {
          // Expired (Events live an hour by default): made afresh below.
          if (!current) return { done: undefined };
          const count = ((current as EventObject).count ?? 1) + 1;
          return {
            patch: {
              metadata: { resourceVersion: current.metadata.resourceVersion },
              count,
              lastTimestamp: now.toISOString(),
            },
            strategy: k8s.PatchStrategy.MergePatch,
            then: () => ({ name, count }),
          };
        },
        written && {
          metadata: { name, namespace, uid: '', resourceVersion: written.resourceVersion },
          count: written.count,
        },
      );
    const recorded = (written ? undefined : await create()) ?? (await bump()) ?? (await create());
    if (recorded) return recorded;
    // Made again by another writer between our read and our create: the activity's next attempt bumps it.
    throw kubernetesFailure('KubernetesConflict', `Event ${key} was made by another writer while being recorded`);
  };
}
