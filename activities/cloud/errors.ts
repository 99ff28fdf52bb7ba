// One error vocabulary for cloud calls (STYLE habit 8): a short CamelCase reason that becomes the Temporal failure
// type, whether Temporal may retry it, and the backend's own words in the message.
import { ApplicationFailure } from '@temporalio/common';

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

/** Plain JSON carried as the failure's details, for the machine and the Temporal UI. */
export interface CloudFailureDetails {
  provider: string;
  operation: string;
  /** The backend's own error code, e.g. `InvalidAMIID.NotFound` or the virsh exit status. */
  code?: string;
  instanceId?: string;
}

export function cloudFailure(
  type: CloudFailureType,
  message: string,
  details: CloudFailureDetails,
  cause?: Error,
): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !cloudFailures[type], details: [details], cause });
}

/** True for a failure of this vocabulary: providers let those through unchanged. */
export const isCloudFailure = (error: unknown): error is ApplicationFailure =>
  error instanceof ApplicationFailure && typeof error.type === 'string' && error.type in cloudFailures;
