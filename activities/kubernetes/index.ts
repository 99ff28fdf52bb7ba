/**
 * The Kubernetes activities: writing an object's Translations with server-side apply and deleting the stale ones,
 * reading the objects Steward depends on, the back-reference annotation a dependency keeps of its referrers, a
 * Translation's status and Events written from one place, the guarded release of a finalizer, and the sweeper's
 * inventory (which VMs and MidoNet ids no PeerPod, Pod or Translation records).
 * `createKubernetesActivities` is the only entry; failures carry one vocabulary of reasons (errors.ts) that says
 * which ones Temporal may retry. The RBAC rules these calls need are in deploy/rbac/steward-clusterrole.yaml.
 */
export {
  createKubernetesActivities,
  type KubernetesActivities,
  type KubernetesActivityDeps,
  type ReadObjectResult,
  type RecordObjectEventInput,
  type ReleaseFinalizerInput,
  type ReleaseFinalizerResult,
} from './activities';
export { kubernetesFailures, type KubernetesFailureType } from './errors';
export { EVENT_SOURCE, type EventInput } from './events';
export type { VmToCheck } from './inventory';
export type { KubeObject } from './objects';
export { REFERRERS_ANNOTATION, type ReferrerInput, type ReferrersResult } from './referrers';
export type {
  ChildResource,
  ChildResourceInput,
  Condition,
  ConditionInput,
  ConditionStatus,
  TranslationStatus,
} from './status';
export {
  type ApplyTranslationsInput,
  type ApplyTranslationsResult,
  type RecordTranslationStatusInput,
  type RecordTranslationStatusResult,
  type TranslationOwner,
} from './translations';
