/**
 * Steward's words on Kubernetes objects, in one place: the finalizers it puts on or releases, and the CamelCase
 * reasons of the lifecycles' own Events, conditions and last errors. A failed backend call carries a reason of its
 * backend's table instead (activities/kubernetes/errors.ts, activities/midonet/errors.ts, activities/cloud/errors.ts)
 * and a translation error one of `TranslationErrorReason` (translation/errors.ts), a translation note (something left
 * out on purpose, told in a Normal Event) one of `TranslationNote`'s; a lifecycle shows those as they come.
 */

/** midonet-kubernetes' finalizer on every Translation: its pusher deletes the backend resources, then releases it. */
export const TRANSLATION_FINALIZER = 'midonet.org/deleter';
/** On a PeerPod Steward wrote: the cloud its VM is in (`aws:<account>:<region>`, `libvirt:<host UUID>`). */
export const VM_CLOUD_ANNOTATION = 'steward.dev/cloud';

/** The finalizer cloud-api-adaptor and peerpod-ctrl put on PeerPods (upstream's constant): the VM goes first. */
export const PEERPOD_FINALIZER = 'peer.pod/finalizer';

/**
 * Held on a dependency (a Node, a Service) while it has referrers, so that when it is deleted its workflow can still
 * read the list and tell them (seed 003's finalizer flow); that workflow releases it afterwards.
 */
export const REFERRERS_FINALIZER = 'steward.midonet.org/referrers';

/** Reasons a lifecycle gives of its own; each is its own value, as in an enum. */
export const Reason = {
  /** A Translation's resources were pushed: its Ready and Synced conditions and a Normal Event. */
  Synced: 'Synced',
  /** Retries ran out (when the failure itself has no reason): the lifecycle waits in `stuck` for time or an operator. */
  Stuck: 'Stuck',
  /**
   * A Translation refused whole before any of it was pushed (a resource of unknown kind, a body that is not JSON, a
   * missing parent, an ID listed twice, over the size limits): the MidoNet activity's failure, which the pusher waits
   * out in `invalid` instead of `stuck`.
   */
  InvalidTranslation: 'InvalidTranslation',
  /** The object cannot be translated (when the translation error has no reason of its own). */
  Invalid: 'Invalid',
  /** An object waits for its dependency (a Pod for its Node's Translations, Endpoints for their Service's). */
  WaitingForDependency: 'WaitingForDependency',
  /** A peer pod's VM was made and recorded in its PeerPod. */
  PodVmCreated: 'PodVmCreated',
  /** The Pod's VM was made by cloud-api-adaptor (its PeerPod exists): Steward tracks it and makes none. */
  PodVmTracked: 'PodVmTracked',
  /** Older PeerPods of the same Pod (left by a cloud-api-adaptor restart) were deleted, and their VMs with them. */
  OlderPeerPodsDeleted: 'OlderPeerPodsDeleted',
  /** A live peer pod's VM vanished from the cloud: it is made again. */
  VmMissing: 'VmMissing',
  /** An operator gave up on a peer pod's VM: released without deleting it, left to the sweeper. */
  VmOrphaned: 'VmOrphaned',
  /** A workflow was built wrong (no executor for an action, no cluster router in the global translation): a bug. */
  MachineMisconfigured: 'MachineMisconfigured',
  /** An activity failed without a reason of its own: it timed out or its worker went away. */
  ActivityTimedOut: 'ActivityTimedOut',
  /** A workflow-side step failed without a reason of its own. */
  ActionFailed: 'ActionFailed',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/**
 * Reasons of the Kubernetes failure table (activities/kubernetes/errors.ts) for a request the API server refused as
 * such (400, 422, any other 4xx but 401/403/404/409/429): the same request fails the same way however often it is
 * retried, so a lifecycle shows it as `invalid`, with the reason, instead of retrying it in `stuck` for ever.
 * (403 is not among them: an operator fixes RBAC, then a retry succeeds.)
 */
export const REFUSED_REQUEST_REASONS = ['KubernetesBadRequest', 'KubernetesInvalid', 'KubernetesRejected'] as const;
