/**
 * The starter's controller, in the controller-runtime style: a source (informers for Nodes, Pods, Services,
 * Endpoints and Translations, restarted with backoff and re-listed periodically), a projection (the trimmed
 * Observation each workflow reads), a work queue of object keys per workflow that coalesces bursts and reads the
 * newest object from the informer's cache when it sends, a handler that delivers each Observation to its object's
 * workflow with signal-with-start, and one delivery table (what went to whom and when) over which the predicate (send
 * only what changed) and the repair are pure functions. A Lease decides which starter sends. `createStarter` assembles them; each piece is small and tested alone.
 */
export {
  createStarter,
  DEFAULT_PEERPOD_RUNTIME_CLASSES,
  KATA_REMOTE,
  type Starter,
  type StarterOptions,
  type StarterStats,
} from './starter';
export { WATCHED_KINDS, type WatchedKind } from '../../platform/kubernetes/kinds';
export { defaultWorkflowTypes } from './workflow-types';
export { DEFAULT_LEASE, type LeaseOptions } from './leader';
export { observe, observePeerPodOfPod, project, type InvalidProjection, type ObservedProjection } from './projection';
