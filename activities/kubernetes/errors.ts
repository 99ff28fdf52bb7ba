// One error vocabulary for Kubernetes calls (STYLE habit 8): a short CamelCase reason that becomes the Temporal
// failure type, whether Temporal may retry it, and the API server's own words in the message.
import * as k8s from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';

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
  /** addReferrer: the dependency does not exist, so there is nothing to hang the back-reference on. */
  DependencyNotFound: false,
  /** applyTranslations: a Translation does not carry its owner's label or ownerReference, so it could never be found stale. */
  TranslationOwnerMismatch: false,
} as const;

export type KubernetesFailureType = keyof typeof kubernetesFailures;

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
