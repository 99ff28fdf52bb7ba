import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import {
  endpointsOfSlices,
  SERVICE_NAME_LABEL,
  type EndpointSliceObject,
} from '../../model/translation/endpoint-slices';
import type { Source, SourceEvent } from '../../platform/kubernetes/informer';

/**
 * The starter's Endpoints read from EndpointSlices: the source's `Endpoints` informer lists and watches slices, and
 * this keeps them by Service and hands on, for each Service, the Endpoints its slices stand for
 * (model/translation/endpoint-slices.ts): an `upsert` when that changes, a `delete` when its last slice goes (or none
 * stands for anything), under the Service's name, so the rest of the starter sees Endpoints as it would from v1.
 */
export function endpointsFromSlices(onEvent: (event: SourceEvent) => void, log: Logger) {
  const slices = new Map<string, Map<string, EndpointSliceObject>>();
  const current = new Map<string, KubernetesObject>();
  const loose = new Set<string>();
  /** Each slice's Service key, by the slice's namespace and name. */
  const serviceOf = new Map<string, string>();

  let source: Source | undefined;
  /** The UID of the Service the key names, as the source last saw it: the owner of slices no controller owns. */
  const serviceUid = (key: string) => {
    const [namespace, name] = key.split('/') as [string, string];
    return source?.get('Service', namespace, name)?.metadata?.uid;
  };

  function changed(key: string): void {
    const last = current.get(key);
    const endpoints = endpointsOfSlices([...(slices.get(key)?.values() ?? [])], serviceUid(key)) as
      | KubernetesObject
      | undefined;
    if (!endpoints) {
      if (slices.has(key) && !loose.has(key)) {
        loose.add(key);
        log.info({ service: key }, 'EndpointSlices of no controller, and their Service not seen yet: left until it is');
      }
      if (last) {
        current.delete(key);
        onEvent({ type: 'delete', kind: 'Endpoints', object: last });
      }
      return;
    }
    loose.delete(key);
    if (last && last.metadata?.uid !== endpoints.metadata?.uid)
      onEvent({ type: 'delete', kind: 'Endpoints', object: last });
    if (JSON.stringify(last) === JSON.stringify(endpoints)) return;
    current.set(key, endpoints);
    onEvent({ type: 'upsert', kind: 'Endpoints', object: endpoints });
  }

  function forget(key: string, sliceName: string): void {
    const ofService = slices.get(key);
    ofService?.delete(sliceName);
    if (ofService?.size === 0) slices.delete(key);
    changed(key);
  }

  return {
    /** The source's events, slices turned into their Service's Endpoints; every other kind passed on as it is. */
    onEvent: (event: SourceEvent): void => {
      if (event.kind === 'Service') {
        onEvent(event);
        // Its UID owns the slices no controller owns: known now, or another incarnation's.
        const key = `${event.object.metadata?.namespace ?? ''}/${event.object.metadata?.name ?? ''}`;
        if (slices.has(key)) changed(key);
        return;
      }
      if (event.kind !== 'Endpoints') return onEvent(event);
      const { metadata } = event.object as EndpointSliceObject;
      const service = metadata?.labels?.[SERVICE_NAME_LABEL];
      if (!service || !metadata?.name) return;
      const key = `${metadata.namespace ?? ''}/${service}`;
      const sliceKey = `${metadata.namespace ?? ''}/${metadata.name}`;
      // A slice relabelled to another Service leaves the first one's.
      const before = serviceOf.get(sliceKey);
      if (before !== undefined && before !== key) forget(before, metadata.name);
      if (event.type === 'delete') {
        serviceOf.delete(sliceKey);
        forget(key, metadata.name);
        return;
      }
      serviceOf.set(sliceKey, key);
      const ofService = slices.get(key) ?? new Map<string, EndpointSliceObject>();
      slices.set(key, ofService.set(metadata.name, event.object));
      changed(key);
    },
    /** The source, answering for Endpoints with those the slices stand for. */
    over: (inner: Source): Source => {
      source = inner;
      return {
        ...inner,
        replay(visit = onEvent) {
          inner.replay((event) => event.kind !== 'Endpoints' && visit(event));
          for (const object of current.values()) visit({ type: 'upsert', kind: 'Endpoints', object });
        },
        counts: () => ({ ...inner.counts(), Endpoints: current.size }),
        get: (kind, namespace, name) =>
          kind === 'Endpoints' ? current.get(`${namespace ?? ''}/${name}`) : inner.get(kind, namespace, name),
      };
    },
  };
}
