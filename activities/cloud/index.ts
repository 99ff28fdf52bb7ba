/**
 * Cloud VMs for peer pods. One provider interface (provider.ts) states the idempotency contract once: create is
 * safe to repeat, not found on delete is done, and every VM carries the pod UID and Steward's marker so the create
 * guard and the sweeper can find it without any record. `libvirt` drives virsh, `aws` the EC2 API; config.ts picks
 * one from flags or the environment; `createCloudActivities` wraps it for Temporal. Failures carry one vocabulary of
 * reasons (errors.ts) that says which ones Temporal may retry.
 */
export { createCloudActivities, type CloudActivities, type CloudActivityDeps, type InstanceInput } from './activities';
export type { AwsSettings } from './aws';
export { cloudSettings, cloudWarnings, createCloudProvider, loadCloudConfig, type CloudConfig } from './config';
export { cloudFailures, type CloudFailureDetails, type CloudFailureType } from './errors';
export { createPodVmActivities, type PodVmActivities, type PodVmResult } from './pod-vm';
export { createLibvirtProvider, METADATA_NAMESPACE, type LibvirtSettings } from './libvirt';
export {
  DEFAULT_MARKER,
  tagKeys,
  type CloudProvider,
  type CloudProviderName,
  type CreateInstanceInput,
  type InstanceObservation,
  type InstanceState,
  type MarkedInstance,
} from './provider';
