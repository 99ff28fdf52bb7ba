// The translation never throws on bad input: every function returns a TranslationResult, and a failure is a
// plain-JSON TranslationError (it crosses Temporal's payload converter intact, unlike an Error subclass)
// naming the object, the field path inside it, and a short CamelCase reason shared with conditions, events
// and the workflow's last error.
import type { ObjectRef } from '../naming';
import type { KubernetesKind, Translation } from './types';

export type TranslationErrorReason =
  /** The projection does not have the shape of a Kubernetes object of that kind. */
  | 'MalformedObject'
  | 'MissingHostId'
  /** A Node's host would be in no tunnel zone, where MidoNet refuses to bind its ports. */
  | 'MissingTunnelEndpointIP'
  | 'InvalidHostId'
  | 'MissingPodCIDR'
  | 'InvalidPodCIDR'
  | 'InvalidNodeAddress'
  | 'InvalidTunnelZoneId'
  | 'InvalidTunnelEndpointIP'
  | 'InvalidMacAddress'
  /** A Pod is scheduled to a Node the caller did not supply; retry once the Node is known. */
  | 'NodeNotFound'
  | 'InvalidPodIP'
  | 'MissingClusterIP'
  | 'InvalidClusterIP'
  | 'UnsupportedProtocol'
  | 'InvalidPort'
  | 'InvalidEndpointAddress';

/** The object a translation error is about; `Unknown` only for a MalformedObject without a recognizable kind. */
export type TranslatedObjectRef = ObjectRef<KubernetesKind | 'Unknown'>;

export interface TranslationError {
  reason: TranslationErrorReason;
  /** The object holding the bad field; for a Pod on a Node without host-id, that is the Node. */
  object: TranslatedObjectRef;
  /** Path inside that object, e.g. `metadata.annotations["midonet.org/host-id"]`, `spec.ports[1].protocol`. */
  field: string;
  message: string;
}

export interface TranslationFailure {
  ok: false;
  error: TranslationError;
}

/**
 * Something the translation left out on purpose: not an error (the rest is translated and works), but worth telling
 * on the object, which the object's lifecycle does with an Event of this reason.
 */
export interface TranslationNote {
  /** Dual-stack Node addresses: the cluster router's routes are IPv4 only. */
  reason: 'IPv6AddressSkipped';
  message: string;
}

/** `notes` only when there is something to tell. */
export type TranslationResult =
  | { ok: true; translations: Translation[]; notes?: TranslationNote[] }
  | TranslationFailure;

export function failure(
  object: TranslatedObjectRef,
  reason: TranslationErrorReason,
  field: string,
  message: string,
): TranslationFailure {
  return { ok: false, error: { reason, object, field, message } };
}

/** Helpers return either their value or a failure; this tells them apart. */
export function isFailure(value: unknown): value is TranslationFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}

export function success(translations: Translation[], notes: TranslationNote[] = []): TranslationResult {
  return { ok: true, translations, ...(notes.length > 0 ? { notes } : {}) };
}

export const annotationField = (key: string): string => `metadata.annotations["${key}"]`;
