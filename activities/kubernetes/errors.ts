// One error vocabulary for Kubernetes calls (STYLE habit 8): a short CamelCase reason that becomes the Temporal
// failure type, whether Temporal may retry it, and the API server's own words in the message.
import * as k8s from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { kubernetesFailures, type KubernetesFailureType } from '../../model/vocabulary';

export { kubernetesFailures, type KubernetesFailureType };

export function kubernetesFailure(
  type: KubernetesFailureType,
  message: string,
  status?: number,
  cause?: Error,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: !kubernetesFailures[type],
    details: status === undefined ? [] : [{ status }],
    cause,
  });
}

/** The HTTP status of an API server reply, or undefined for anything else (connection errors, bugs). */
export function statusOf(error: unknown): number | undefined {
  return error instanceof k8s.ApiException ? (error as k8s.ApiException<unknown>).code : undefined;
}

function statusType(status: number): KubernetesFailureType {
  if (status >= 500) return 'KubernetesUnavailable';
  switch (status) {
    case 400:
      return 'KubernetesBadRequest';
    case 401:
      return 'KubernetesUnauthorized';
    case 403:
      return 'KubernetesForbidden';
    case 404:
      return 'KubernetesNotFound';
    case 409:
      return 'KubernetesConflict';
    case 422:
      return 'KubernetesInvalid';
    case 429:
      return 'KubernetesThrottled';
    default:
      return 'KubernetesRejected';
  }
}

/** The `message` of the API server's Status body; ApiException's own message is a long dump of body and headers. */
function serverMessage(error: k8s.ApiException<unknown>): string {
  let body: unknown = error.body;
  if (typeof error.body === 'string') {
    try {
      body = JSON.parse(error.body);
    } catch {
      return error.body.trim() || '(empty body)';
    }
  }
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : '(no message)';
}

/** Any error of a Kubernetes call as a typed ApplicationFailure; `what` names the call and the object. */
export function toFailure(error: unknown, what: string): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  const cause = error instanceof Error ? error : undefined;
  const status = statusOf(error);
  if (status === undefined) {
    return kubernetesFailure('KubernetesUnavailable', `${what}: ${cause?.message ?? String(error)}`, undefined, cause);
  }
  const text = serverMessage(error as k8s.ApiException<unknown>);
  return kubernetesFailure(statusType(status), `${what}: API server answered ${status}: ${text}`, status, cause);
}
