// One error vocabulary for MidoNet calls (STYLE habit 8): a short CamelCase reason that becomes the Temporal
// failure type, whether Temporal may retry it, and the backend's own words in the message.
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import type { InvalidResource } from './check';
import { midonetFailures, type MidonetFailureType } from '../../model/vocabulary';

export { midonetFailures, type MidonetFailureType };

/** Plain JSON carried as the failure's details, for the machine and the Temporal UI. */
export interface MidonetFailureDetails {
  method?: string;
  path?: string;
  status?: number;
  violations?: Violation[];
  missingId?: string;
  /** InvalidTranslation: the first problems found. */
  problems?: InvalidResource[];
  /** A write that got no answer: MidoNet may still carry it out until then (epoch ms). */
  unsettledUntil?: number;
}

export function midonetFailure(
  type: MidonetFailureType,
  message: string,
  details: MidonetFailureDetails = {},
  cause?: Error,
): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !midonetFailures[type], details: [details], cause });
}

const violation = z.object({ property: z.string().nullish(), message: z.string() });
type Violation = z.infer<typeof violation>;
// Error-v1 bodies; several errors (405/406/415, TunnelZoneHost 404/409) come with an empty body.
const errorBody = z.object({ message: z.string().nullish(), violations: z.array(violation).nullish() });

export interface Reply {
  status: number;
  /** Parsed JSON body, or undefined when empty or not JSON. */
  json: unknown;
  text: string;
  /** The `Location` header: where a POST says the created object is. */
  location?: string;
}

function statusType(status: number): MidonetFailureType {
  if (status >= 500) return 'MidonetUnavailable';
  switch (status) {
    case 400:
      return 'MidonetValidation';
    case 401:
      return 'MidonetUnauthorized';
    case 404:
      return 'MidonetReferenceMissing';
    case 405:
      return 'MidonetUnsupported';
    case 406:
    case 415:
      return 'MidonetMediaType';
    case 409:
      return 'MidonetConflict';
    default:
      return 'MidonetRejected';
  }
}

/** The backend's message (with violations) for an error reply. */
export function backendMessage(reply: Reply): { message: string; violations?: Violation[] } {
  const parsed = errorBody.safeParse(reply.json);
  const body = parsed.success ? parsed.data : undefined;
  const violations = body?.violations ?? undefined;
  const text = body?.message ?? (reply.text.trim() || '(empty body)');
  const listed = violations?.length
    ? `: ${violations.map((v) => (v.property ? `${v.property}: ${v.message}` : v.message)).join('; ')}`
    : '';
  return { message: `${text}${listed}`, violations };
}

/** A failure for an error reply; `type` overrides the reason the status alone would give. */
export function replyFailure(
  method: string,
  path: string,
  reply: Reply,
  type: MidonetFailureType = statusType(reply.status),
  extra: MidonetFailureDetails = {},
): ApplicationFailure {
  const { message, violations } = backendMessage(reply);
  return midonetFailure(type, `MidoNet ${method} ${path} answered ${reply.status}: ${message}`, {
    method,
    path,
    status: reply.status,
    violations,
    ...extra,
  });
}

/** A success reply about another object than the one asked for (`problem` says how): retried, never acted on. */
export function wrongObjectFailure(method: string, path: string, reply: Reply, problem: string): ApplicationFailure {
  return midonetFailure(
    'MidonetWrongObject',
    `MidoNet ${method} ${path} answered ${reply.status} about another object than the one asked for: ${problem}`,
    { method, path, status: reply.status },
  );
}

// ZOOM's 404 text: "There is no <Class> with ID <uuid>."
const missingIdPattern = /with ID ([0-9a-fA-F-]{36})/;

/**
 * A 404 on create or update: the parent, or another referenced object, does not exist. `self` is the object's own
 * id when it is known: its absence on an update means it vanished meanwhile, and a new ensure will create it.
 */
export function missingFailure(
  method: string,
  path: string,
  reply: Reply,
  parent: string,
  self?: string,
): ApplicationFailure {
  const missingId = missingIdPattern.exec(backendMessage(reply).message)?.[1]?.toLowerCase();
  const extra = missingId === undefined ? {} : { missingId };
  if (missingId !== undefined && missingId === self?.toLowerCase())
    return replyFailure(method, path, reply, 'MidonetConflict', extra);
  // An empty 404 (e.g. a tunnel zone that is not there) can only be about what the path names.
  const parentMissing = parent !== '' && (missingId === undefined || missingId === parent.toLowerCase());
  return replyFailure(method, path, reply, parentMissing ? 'MidonetParentMissing' : 'MidonetReferenceMissing', extra);
}
