/**
 * One interface for every cloud that holds peer-pod VMs (crossplane's ExternalClient, one resource kind: the VM).
 * The idempotency contract is written once, here, and every provider keeps it:
 *
 * - `create` is safe to repeat: a second call with the same name and pod UID (a lost reply, a retried activity)
 *   returns the VM the first one made, never a second VM. A name held by another pod's VM is an error.
 * - `delete` of a VM that is not there, or already terminated, is `absent`: done, not an error.
 * - `get`, `list` and `findByPodUid` change nothing; `start` of a running VM changes nothing.
 * - Every VM Steward creates carries the pod UID and Steward's marker, so it can be found without any record
 *   (the create guard before a retry, the sweeper for VMs nothing records). VMs without the marker are never listed.
 *
 * Failures are `ApplicationFailure`s of the vocabulary in errors.ts. Credentials stay inside the provider.
 */
export interface CloudProvider {
  /** `libvirt` or `aws`: the value of a PeerPod's `spec.cloudProvider`. */
  readonly name: CloudProviderName;
  create(input: CreateInstanceInput): Promise<{ instanceId: string }>;
  /**
   * The VM and what it owns (libvirt: its NVRAM and every volume its disks name; EC2: its address). `kept` names what
   * was deliberately left (a file outside libvirt's pools, a shareable disk), with why.
   */
  delete(input: { instanceId: string }): Promise<{ outcome: 'deleted' | 'absent'; kept?: string[] }>;
  get(input: { instanceId: string }): Promise<InstanceObservation>;
  /** Starts a VM that is shut off (a running one stays as it is); one that is not there is `absent`. */
  start(input: { instanceId: string }): Promise<{ outcome: 'started' | 'absent' }>;
  /** Every VM with Steward's marker. */
  list(): Promise<MarkedInstance[]>;
  /**
   * Every VM with Steward's marker and its power state, as cheaply as the cloud allows (one `virsh list`, one
   * DescribeInstances): what the worker's watch of the VMs compares from one look to the next (vm-watch.ts).
   */
  powerStates(): Promise<VmPower[]>;
  /**
   * The VMs named as cloud-api-adaptor names them (`UPSTREAM_VM_NAME`) that carry no Steward marker at all (no
   * installation's): the ones cloud-api-adaptor made, for the sweep to check against the PeerPods.
   */
  listUpstream(): Promise<UpstreamInstance[]>;
  /** The VMs with Steward's marker tagged with this pod UID (normally none or one). */
  findByPodUid(podUid: string): Promise<MarkedInstance[]>;
  /**
   * Which cloud this provider sees, as a stable string written where Steward records a VM: `aws:<account>:<region>`,
   * `libvirt:<host UUID>`. It fails (a `CloudUnavailable`/`CloudUnauthorized` failure) when the cloud cannot be reached at
   * all, so "not found" can be told from "looking in the wrong place" before a PeerPod is released.
   */
  identity(): Promise<string>;
  /**
   * The instance ID to use for a VM a PeerPod records. Upstream's records before cloud-api-adaptor v0.20.0 hold a
   * libvirt domain's numeric ID, which libvirtd reuses after a restart: it is accepted only when that domain is the
   * pod's VM by name (`podvm-<pod name>-…`), and answered with its UUID; otherwise a non-retryable
   * `CloudLegacyInstanceId` failure says what to do. Any other ID comes back as it is (after the provider's format check).
   */
  resolveRecordedId(input: { instanceId: string; podName: string }): Promise<{ instanceId: string }>;
}

export type CloudProviderName = 'libvirt' | 'aws';

export interface CreateInstanceInput {
  /** Chosen by the caller, unique per pod VM (upstream: `podvm-<pod name>-<8 chars of the sandbox id>`). */
  name: string;
  podUid: string;
  podNamespace: string;
  podName: string;
  /** Extra tags; the provider adds the pod's identity, Steward's marker and the name. */
  tags?: Record<string, string>;
}

/** A VM made for a live pod that lost its VM: which one it replaces, and why that one was lost. */
export interface VmReplacement {
  instanceId: string;
  why: string;
}

/** Normalised across providers; `deleting` is EC2's shutting-down. */
export type InstanceState =
  | 'pending'
  | 'running'
  | 'paused'
  | 'stopping'
  | 'stopped'
  | 'crashed'
  | 'deleting'
  | 'unknown';

export type InstanceObservation =
  | { exists: false }
  | { exists: true; state: InstanceState; name?: string; podUid?: string; marker: boolean };

export interface MarkedInstance {
  instanceId: string;
  name?: string;
  podUid: string;
  podNamespace?: string;
  podName?: string;
}

/** A VM with Steward's marker, and its power state now. */
export interface VmPower extends MarkedInstance {
  state: InstanceState;
}

export interface UpstreamInstance {
  instanceId: string;
  name: string;
}

/**
 * EC2 tag keys (libvirt keeps the same facts as elements of Steward's metadata namespace). The marker's value is the Steward
 * installation's own (configurable), so two installations sharing a cloud account never sweep each other's VMs.
 */
export const tagKeys = {
  marker: 'steward.dev/managed-by',
  podUid: 'steward.dev/pod-uid',
  podNamespace: 'steward.dev/pod-namespace',
  podName: 'steward.dev/pod-name',
} as const;

export const DEFAULT_MARKER = 'steward';
