/**
 * Steward's words on Kubernetes objects, in one place: the finalizers it puts on or releases, the annotations it
 * writes, and every CamelCase reason of its Events, conditions and last errors: the lifecycles' own (`Reason`), each
 * backend's failures (the tables below; activities/<backend>/errors.ts turn a call's error into one), and the
 * translation's errors and notes (`TranslationErrorReason`, `TranslationNote`, translation/errors.ts). A lifecycle
 * shows a backend's or the translation's reason as it comes.
 */

/** midonet-kubernetes' finalizer on every Translation: its pusher deletes the backend resources, then releases it. */
export const TRANSLATION_FINALIZER = 'midonet.org/deleter';
/** On a PeerPod Steward wrote: the cloud its VM is in (`aws:<account>:<region>`, `libvirt:<host UUID>`). */
export const VM_CLOUD_ANNOTATION = 'steward.dev/cloud';

/**
 * A VM's power states (the providers' `InstanceState`) in which it runs nothing: shut off, crashed, paused, or on its
 * way down. The peer-pod machine starts such a VM; the workers' watch of the VMs tells its peer pod.
 */
export const VM_DOWN_STATES: ReadonlySet<string> = new Set(['stopped', 'stopping', 'crashed', 'paused']);

/**
 * On a Translation or PeerPod Steward writes, when the worker knows the Temporal UI's address: the page of the
 * workflow that drives it (the owner's for an owned Translation).
 */
export const TEMPORAL_UI_ANNOTATION = 'steward.dev/temporal-ui';

/**
 * An operator's request (pause, resume, refresh, cleanup) written on the object it is about with the operator's own
 * Kubernetes credentials (`steward pause pod/web`): a JSON `{id, action, reason, mode?, evenIfLive?}`
 * (model/operator-request.ts). The API server's RBAC decides who may write it, as for any change to the object; the
 * starter relays it to the object's workflow and removes it.
 */
export const OPERATOR_REQUEST_ANNOTATION = 'steward.dev/request';
/**
 * Beside the request: who asks, as the API server authenticated them. Steward's admission policy
 * (deploy/rbac/steward-operator-requests.yaml) refuses a request whose requester is not the user writing it.
 */
export const OPERATOR_REQUESTER_ANNOTATION = 'steward.dev/requested-by';
/** What became of the last request (JSON `{id, by, accepted, state?, message}`): the starter writes it as it removes the request. */
export const OPERATOR_RESULT_ANNOTATION = 'steward.dev/request-result';

/** On the PeerPods Steward writes (`app.kubernetes.io/managed-by: steward`): cloud-api-adaptor's carry none. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_STEWARD = 'steward';

/** The finalizer cloud-api-adaptor and peerpod-ctrl put on PeerPods (upstream's constant): the VM goes first. */
export const PEERPOD_FINALIZER = 'peer.pod/finalizer';

/**
 * Held on a dependency (a Node, a Service) while it has referrers, so that when it is deleted its workflow can still
 * read the list and tell them (seed 003's finalizer flow); that workflow releases it afterwards.
 */
export const REFERRERS_FINALIZER = 'steward.dev/referrers';
/** On a dependency: the objects that depend on it (seed 003's back-references), a sorted JSON list. */
export const REFERRERS_ANNOTATION = 'steward.dev/referrers';
/**
 * The name an earlier Steward gave both the referrers annotation and its finalizer, before everything it writes took
 * the `steward.dev/` prefix: still read and released, and replaced by the new name at the next write.
 */
export const LEGACY_REFERRERS = 'steward.midonet.org/referrers';

/** The finalizer and its older names: releasing a finalizer releases them all. */
export const finalizerNames = (finalizer: string): string[] =>
  finalizer === REFERRERS_FINALIZER ? [finalizer, LEGACY_REFERRERS] : [finalizer];

/** Reasons a lifecycle gives of its own; each is its own value, as in an enum. */
export const Reason = {
  /** A Translation's resources were pushed: its Ready and Synced conditions and a Normal Event. */
  Synced: 'Synced',
  /** A Translation's push of a new generation is under way: Ready and Synced no longer name the one before. */
  Pushing: 'Pushing',
  /** Retries ran out (when the failure itself has no reason): the lifecycle waits in `stuck` for time or an operator. */
  Stuck: 'Stuck',
  /** An operator paused the lifecycle: nothing is pushed or deleted until resume; its conditions and an Event say so. */
  Paused: 'Paused',
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
  /** The node annotator waits for MidoNet to list a host of the Node's name (its agent registers it), or an InternalIP. */
  WaitingForMidonetHost: 'WaitingForMidonetHost',
  /** A peer pod's VM was made and recorded in its PeerPod. */
  PodVmCreated: 'PodVmCreated',
  /** The Pod's VM was made by cloud-api-adaptor (its PeerPod exists): Steward tracks it and makes none. */
  PodVmTracked: 'PodVmTracked',
  /** Older PeerPods of the same Pod (left by a cloud-api-adaptor restart) were deleted, and their VMs with them. */
  OlderPeerPodsDeleted: 'OlderPeerPodsDeleted',
  /** A live peer pod's VM vanished from the cloud: it is made again. */
  VmMissing: 'VmMissing',
  /**
   * A peer pod's VM is shut off (its host restarted, or someone stopped it): Steward's own VM of a live Pod is started
   * again (then `VmStarted`); one Steward did not make is only said, and the Pod runs without it.
   */
  VmShutOff: 'VmShutOff',
  /** A live peer pod's own VM, found shut off, was started again. */
  VmStarted: 'VmStarted',
  /** A live peer pod lost its VM (its PeerPod deleted by hand, the VM gone from the cloud): another one runs it now. */
  PodVmRecreated: 'PodVmRecreated',
  /**
   * A live Pod lost the VM cloud-api-adaptor made for it (its PeerPod deleted by hand, or the VM gone from the cloud):
   * Steward does not make that VM, so the Pod runs without one until cloud-api-adaptor makes it or the Pod is replaced.
   */
  PodVmLost: 'PodVmLost',
  /** An operator gave up on a peer pod's VM: released without deleting it, left to the sweeper. */
  VmOrphaned: 'VmOrphaned',
  /** A workflow was built wrong (no executor for an action, no cluster router in the global translation): a bug. */
  MachineMisconfigured: 'MachineMisconfigured',
  /** An activity failed without a reason of its own: it timed out or its worker went away. */
  ActivityTimedOut: 'ActivityTimedOut',
  /** A workflow-side step failed without a reason of its own. */
  ActionFailed: 'ActionFailed',
  /**
   * A deletion in MidoNet refused while the guard against mass deletion holds (model/deletion-guard.ts: the
   * Translation CRD being deleted, or a wave of Translations): not retried; the lifecycle waits in `stuck`, its
   * finalizers kept, until an operator confirms (`steward cleanup --confirm-mass-deletion`), which wakes it.
   */
  MassDeletionHeld: 'MassDeletionHeld',
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

/**
 * Reasons of the Kubernetes failure table (`kubernetesFailures`) for a request the API server refused as
 * such (400, 422, any other 4xx but 401/403/404/409/429): the same request fails the same way however often it is
 * retried, so a lifecycle shows it as `invalid`, with the reason, instead of retrying it in `stuck` for ever.
 * (403 is not among them: an operator fixes RBAC, then a retry succeeds.)
 */
export const REFUSED_REQUEST_REASONS = [
  'KubernetesBadRequest',
  'KubernetesInvalid',
  'KubernetesRejected',
] as const satisfies readonly KubernetesFailureType[];

export type { TranslationErrorReason, TranslationNote } from './translation/errors';

// The kubernetes failures (activities/kubernetes/errors.ts).
/** Reason → retryable. Retryable means "the same call can succeed later without anyone changing the request". */
export const kubernetesFailures = {
  /** 5xx, connection refused or reset, API server down. */
  KubernetesUnavailable: true,
  /** 429: the API server's priority and fairness asked us to slow down. */
  KubernetesThrottled: true,
  /** 409 that kept coming back after re-reading: another writer is busy with the object. */
  KubernetesConflict: true,
  /** 401: a token that expired is renewed by whoever mounts it. */
  KubernetesUnauthorized: true,
  /** 400: the request itself is wrong. */
  KubernetesBadRequest: false,
  /** 403: RBAC does not grant the verb; deploy/rbac/steward-clusterrole.yaml lists what Steward needs. */
  KubernetesForbidden: false,
  /** 422: the object does not pass validation (CRD schema, immutable fields, finalizers on a deleting object). */
  KubernetesInvalid: false,
  /** 404 where the caller cannot go on without the object (e.g. the CRD is not installed). */
  KubernetesNotFound: false,
  /** Any other 4xx. */
  KubernetesRejected: false,
  /** applyTranslations: a Translation does not carry its owner's label or ownerReference, so it could never be found stale. */
  TranslationOwnerMismatch: false,
} as const;

export type KubernetesFailureType = keyof typeof kubernetesFailures;

// The midonet failures (activities/midonet/errors.ts).
/** Reason → retryable. Retryable means "the same call can succeed later without anyone changing the request". */
export const midonetFailures = {
  /** 5xx, connection refused or reset, backend down. */
  MidonetUnavailable: true,
  /** No answer within the per-call timeout. */
  MidonetTimeout: true,
  /** 401 even after logging in again: credentials or the auth service may recover. */
  MidonetUnauthorized: true,
  /** 409 for an object that is not there, e.g. a binding before its host joins a tunnel zone: resolves once the other side is pushed. */
  MidonetConflict: true,
  /** 400, with the violations. */
  MidonetValidation: false,
  /** 404 on create: the parent is not there. */
  MidonetParentMissing: false,
  /** 404 on create naming another referenced object (a filter chain, a jump target, a bound port). */
  MidonetReferenceMissing: false,
  /** 405: the API has no such operation for the kind. */
  MidonetUnsupported: false,
  /** 406 / 415: the media type was refused. */
  MidonetMediaType: false,
  /** Any other 4xx. */
  MidonetRejected: false,
  /** The input resource is not a valid MidoNet resource (unknown kind, body not JSON, parent where none belongs). */
  MidonetBadResource: false,
  /** A success reply the client cannot read. */
  MidonetBadResponse: false,
  /**
   * A success reply about another object than the one asked for (another's body, or a Location naming another ID): a
   * reply mixed up by MidoNet or a proxy in front of it. Nothing is done with it; the same call is asked again.
   */
  MidonetWrongObject: true,
  /** The pusher met a missing parent or referenced object: another Translation not pushed yet, retried until it is. */
  MidonetDependencyMissing: true,
  /** The pusher met an object with another body that this Translation did not push: an operator must resolve it. */
  ResourceConflict: false,
  /** Another Translation owns a resource this one lists: refused until that one lets it go (it is told then). */
  ResourceClaimed: false,
  /** A Translation refused before any of it is pushed (validate.ts): only a changed Translation can fix it. */
  InvalidTranslation: false,
} as const;

export type MidonetFailureType = keyof typeof midonetFailures;

// The cloud failures (activities/cloud/errors.ts).
/** Reason → retryable. Retryable means "the same call can succeed later without anyone changing the request". */
export const cloudFailures = {
  /** The backend cannot be reached or answers 5xx: libvirtd down, EC2 endpoint unreachable. */
  CloudUnavailable: true,
  /** The backend asks us to slow down (EC2 RequestLimitExceeded). */
  CloudThrottled: true,
  /** No more VMs, vCPUs or addresses may be created; someone must free or raise the quota. */
  CloudQuotaExceeded: false,
  /** The request is wrong: unknown image or instance type, malformed id, bad domain XML. */
  CloudInvalidRequest: false,
  /** The credentials are refused. */
  CloudUnauthorized: false,
  /** The chosen name belongs to a VM of another pod. */
  CloudNameTaken: false,
  /** A PeerPod names a cloud this worker is not configured for. */
  CloudProviderNotConfigured: false,
  /** A success reply the provider cannot read. */
  CloudBadResponse: false,
  /** A PeerPod records a VM of another cloud than the one this worker sees (another account, region or libvirt host). */
  CloudMismatch: false,
  /** A pre-v0.20 PeerPod's numeric libvirt domain ID that cannot be proved to be the pod's VM. */
  CloudLegacyInstanceId: false,
} as const;

export type CloudFailureType = keyof typeof cloudFailures;
