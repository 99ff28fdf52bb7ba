// The midonet.org annotations the translation reads (ANNOTATIONS in model.ts), parsed one way for Nodes and Pods
// alike: a value that does not parse is a failure on that annotation of the object carrying it.
import { refOf } from './custom-resource';
import { annotationField, failure, type TranslationErrorReason, type TranslationFailure } from './errors';
import { ANNOTATIONS } from './model';
import { parseIPv4, parseMAC, parseUUID } from './net';
import type { NodeProjection, PodProjection } from './types';

type AnnotationName = keyof typeof ANNOTATIONS;

const PARSERS: Record<
  AnnotationName,
  { parse: (text: string) => string | undefined; reason: TranslationErrorReason; what: string }
> = {
  hostId: { parse: parseUUID, reason: 'InvalidHostId', what: 'a UUID' },
  tunnelZoneId: { parse: parseUUID, reason: 'InvalidTunnelZoneId', what: 'a UUID' },
  tunnelEndpointIP: { parse: parseIPv4, reason: 'InvalidTunnelEndpointIP', what: 'an IPv4 address' },
  macAddress: { parse: parseMAC, reason: 'InvalidMacAddress', what: 'a MAC address' },
};

/** `text`, read from the annotation `name` of `object`, parsed. */
export function parseAnnotation(
  object: NodeProjection | PodProjection,
  name: AnnotationName,
  text: string,
): string | TranslationFailure {
  const { parse, reason, what } = PARSERS[name];
  return parse(text) ?? failure(refOf(object), reason, annotationField(ANNOTATIONS[name]), `"${text}" is not ${what}`);
}

/** The MAC of a Node's `midokube-node` or a Pod's eth0; `undefined` until it is annotated. */
export function macAnnotation(object: NodeProjection | PodProjection): string | undefined | TranslationFailure {
  const text = object.metadata.annotations[ANNOTATIONS.macAddress];
  return text === undefined ? undefined : parseAnnotation(object, 'macAddress', text);
}
