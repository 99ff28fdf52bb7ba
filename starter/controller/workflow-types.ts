import type { WatchedKind } from '../../platform/kubernetes/kinds';

/** Workflow type started for each kind. Injected into the starter so tests and deployments can point elsewhere. */
export const defaultWorkflowTypes: Readonly<Record<WatchedKind, string>> = {
  Node: 'nodeLifecycle',
  Pod: 'podLifecycle',
  Service: 'serviceLifecycle',
  Endpoints: 'endpointsLifecycle',
  Translation: 'translationLifecycle',
  PeerPod: 'peerPodLifecycle',
};
