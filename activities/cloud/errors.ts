// One error vocabulary for cloud calls (STYLE habit 8): a short CamelCase reason that becomes the Temporal failure
// type, whether Temporal may retry it, and the backend's own words in the message.
import { ApplicationFailure } from '@temporalio/common';
import { cloudFailures, type CloudFailureType } from '../../model/vocabulary';

export { cloudFailures, type CloudFailureType };

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
