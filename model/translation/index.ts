/**
 * The Kubernetes → MidoNet translation: pure, deterministic functions (safe in the workflow sandbox) that turn
 * a trimmed projection of a Node, Pod, Service or Endpoints, or the cluster as a whole, into the Translation
 * custom resources midonet-kubernetes would write for it: the same names, IDs, resource order, parents and
 * bodies, so Steward can take over a cluster's backend state. One file per kind answers "what does a Pod
 * become?" (node.ts, pod.ts, service.ts, endpoints.ts, global.ts); ids.ts holds the ID scheme, README.md the
 * whole mapping. Bad input gives a TranslationError (errors.ts), never an exception.
 */
import { translateEndpoints } from './endpoints';
import type { TranslationResult } from './errors';
import { translateNode } from './node';
import { translatePod } from './pod';
import { translateService } from './service';
import type { KubernetesProjection, TranslationContext } from './types';

/** The Translations of one Kubernetes object; `context` supplies the tenant and the object's dependency, if any. */
export function translate(object: KubernetesProjection, context: TranslationContext = {}): TranslationResult {
  switch (object.kind) {
    case 'Node':
      return translateNode(object, context);
    case 'Pod':
      return translatePod(object, context);
    case 'Service':
      return translateService(object, context);
    case 'Endpoints':
      return translateEndpoints(object, context);
  }
}

export { translateNode, nodeHostId } from './node';
export { translatePod } from './pod';
export { translateService, serviceClusterIP, servicePortKey } from './service';
export { translateEndpoints } from './endpoints';
export { translateGlobals } from './global';
export * from './errors';
export * from './ids';
export * from './types';
export { toProjection } from './to-projection';
