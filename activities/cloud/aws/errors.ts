// The SDK's errors as failures of the vocabulary (errors.ts): the error code decides, then who is at fault.
import { cloudFailure, type CloudFailureType, isCloudFailure } from '../errors';

const codes: Record<string, CloudFailureType> = {
  RequestLimitExceeded: 'CloudThrottled',
  Throttling: 'CloudThrottled',
  ThrottlingException: 'CloudThrottled',
  InsufficientInstanceCapacity: 'CloudUnavailable',
  InstanceLimitExceeded: 'CloudQuotaExceeded',
  VcpuLimitExceeded: 'CloudQuotaExceeded',
  InsufficientFreeAddressesInSubnet: 'CloudQuotaExceeded',
  AuthFailure: 'CloudUnauthorized',
  UnauthorizedOperation: 'CloudUnauthorized',
  InvalidClientTokenId: 'CloudUnauthorized',
  SignatureDoesNotMatch: 'CloudUnauthorized',
  ExpiredToken: 'CloudUnauthorized',
  CredentialsProviderError: 'CloudUnauthorized',
  // ReleaseAddress right after DisassociateAddress, before the disassociation is visible: retrying succeeds.
  'InvalidIPAddress.InUse': 'CloudUnavailable',
  // StartInstances while the instance is still stopping: retrying succeeds once it is stopped.
  IncorrectInstanceState: 'CloudUnavailable',
};

export const isCode = (error: unknown, code: string) => error instanceof Error && error.name === code;
export const notFound = (error: unknown) => isCode(error, 'InvalidInstanceID.NotFound');

/** The SDK's error as a failure of the vocabulary: its code decides, then who is at fault. */
export function awsFailure(operation: string, error: unknown, instanceId?: string, service = 'EC2'): unknown {
  if (!(error instanceof Error) || isCloudFailure(error)) return error;
  const meta = error as Error & { $fault?: 'client' | 'server'; $metadata?: { httpStatusCode?: number } };
  // A client-side fault with an HTTP status is a refused request; no status at all is a network or timeout error.
  const refused =
    meta.$fault === 'client' &&
    (meta.$metadata?.httpStatusCode ?? 0) < 500 &&
    meta.$metadata?.httpStatusCode !== undefined;
  const type = codes[error.name] ?? (refused ? 'CloudInvalidRequest' : 'CloudUnavailable');
  return cloudFailure(
    type,
    `${service} ${operation}: ${error.name}: ${error.message}`,
    { provider: 'aws', operation, code: error.name, instanceId },
    error,
  );
}
