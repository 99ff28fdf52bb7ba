// Kubernetes Events, so `kubectl describe` shows what Steward did. An Event's name is derived from the object's UID
// and the event's type, reason and message: the same event again bumps `count` and `lastTimestamp` of the one
// already there (as client-go's correlator does), instead of adding a line per retry.
import * as k8s from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { ObjectRef } from '../../model/naming';
import { kubernetesFailure, statusOf, toFailure } from './errors';
import { type KubeObject, type Objects, update } from './objects';

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

export function createEventRecorder(objects: Objects, clock: () => Date) {
  const instance = hostname().slice(0, 128);

  /** Records `event` about `object` (as read), in its namespace; Events about cluster-scoped objects go to `default`. */
  return async function recordEvent(
    ref: ObjectRef,
    object: KubeObject,
    event: EventInput,
  ): Promise<{ name: string; count: number }> {
    const namespace = object.metadata.namespace ?? 'default';
    const name = eventName(object, event);
    const now = clock();
    const message = event.message.slice(0, MAX_MESSAGE);
    try {
      await objects.core.createNamespacedEvent({
        namespace,
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
          message,
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: EVENT_SOURCE },
          reportingComponent: EVENT_SOURCE,
          reportingInstance: instance,
        },
      });
      return { name, count: 1 };
    } catch (error) {
      if (statusOf(error) !== 409)
        throw toFailure(error, `record event ${event.reason} on ${namespace}/${object.metadata.name}`);
    }
    const existing = {
      what: `Event ${namespace}/${name}`,
      read: async () => {
        try {
          return JSON.parse(
            JSON.stringify(await objects.core.readNamespacedEvent({ name, namespace })),
          ) as KubeObject & { count?: number };
        } catch (error) {
          if (statusOf(error) === 404) return undefined;
          throw toFailure(error, `read Event ${namespace}/${name}`);
        }
      },
      patch: async (body: unknown) =>
        JSON.parse(
          JSON.stringify(
            await objects.core.patchNamespacedEvent(
              { name, namespace, body },
              k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
            ),
          ),
        ) as KubeObject,
    };
    return update(existing, (current) => {
      // Expired between our create and this read: the activity's next attempt creates it afresh.
      if (!current)
        throw kubernetesFailure(
          'KubernetesConflict',
          `Event ${namespace}/${name} expired while its count was being bumped`,
        );
      const count = ((current as { count?: number }).count ?? 1) + 1;
      return {
        patch: {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          count,
          lastTimestamp: now.toISOString(),
        },
        strategy: k8s.PatchStrategy.MergePatch,
        then: () => ({ name, count }),
      };
    });
  };
}
