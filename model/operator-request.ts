import { z } from 'zod';
import {
  cleanupModes,
  cleanupRequest,
  cleanupUpdate,
  describeIssues,
  operatorRequestSchema,
  pauseUpdate,
  refreshUpdate,
  resumeUpdate,
  type CleanupRequest,
  type OperatorRequest,
} from './messages';
import { API_VERSIONS, type ObjectRef } from './naming';
import { OPERATOR_REQUEST_ANNOTATION, OPERATOR_REQUESTER_ANNOTATION, OPERATOR_RESULT_ANNOTATION } from './vocabulary';

/**
 * Operator actions under Kubernetes' authority: `steward pause pod/web` writes the request on the Pod itself, with the
 * operator's own credentials, so the API server's RBAC decides who may ask (as Crossplane's `crossplane.io/paused`),
 * and Steward's admission policy makes the requester beside it the user the API server authenticated. The starter
 * relays it to the object's workflow as the Update the action names, under the request's id (taken once however
 * often it is relayed), and writes the result in the place of the request.
 */

export const OPERATOR_ACTIONS = ['pause', 'resume', 'refresh', 'cleanup'] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];

const requestSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'id must be 1-64 letters, digits or dashes'),
  action: z.enum(OPERATOR_ACTIONS),
  reason: z.string().max(1000),
  mode: z.enum(cleanupModes).optional(),
  evenIfLive: z.literal(true).optional(),
});
export type RequestAnnotation = z.infer<typeof requestSchema>;

/** What the action's Update takes, in the workflows' own schema. */
export type UpdateArgs =
  | { action: 'cleanup'; args: CleanupRequest }
  | { action: Exclude<OperatorAction, 'cleanup'>; args: OperatorRequest };

/** The Update of each action. */
export const UPDATES = {
  cleanup: cleanupUpdate,
  pause: pauseUpdate,
  resume: resumeUpdate,
  refresh: refreshUpdate,
} as const;

/** A request as read from its object: its id (when it has one), and the Update it asks for or why it cannot be sent. */
export type ReadRequest = { raw: string; id?: string } & ({ update: UpdateArgs } | { error: string });

const idOf = (json: unknown): string | undefined =>
  typeof json === 'object' && json !== null && typeof (json as { id?: unknown }).id === 'string'
    ? (json as { id: string }).id
    : undefined;

function parseJson(raw: string): { json: unknown } | { error: string } {
  try {
    return { json: JSON.parse(raw) as unknown };
  } catch {
    return { error: `${OPERATOR_REQUEST_ANNOTATION}: not JSON` };
  }
}

/** The request on an object (undefined when none), checked against the annotation's schema and the Update's. */
export function readOperatorRequest(annotations: Record<string, string> | undefined): ReadRequest | undefined {
  const raw = annotations?.[OPERATOR_REQUEST_ANNOTATION];
  if (raw === undefined) return undefined;
  const parsed = parseJson(raw);
  if ('error' in parsed) return { raw, error: parsed.error };
  const id = idOf(parsed.json);
  const request = requestSchema.safeParse(parsed.json);
  if (!request.success)
    return { raw, id, error: `${OPERATOR_REQUEST_ANNOTATION}: ${describeIssues(request.error, 'request')}` };
  const { action, reason, mode, evenIfLive } = request.data;
  const requestedBy = annotations?.[OPERATOR_REQUESTER_ANNOTATION] ?? '';
  const args =
    action === 'cleanup'
      ? cleanupRequest.safeParse({ reason, requestedBy, mode: mode ?? 'retry', ...(evenIfLive ? { evenIfLive } : {}) })
      : operatorRequestSchema.safeParse({ reason, requestedBy });
  if (!args.success) return { raw, id, error: `${action}: ${describeIssues(args.error, 'request')}` };
  return { raw, id, update: { action, args: args.data } as UpdateArgs };
}

/** The annotations that carry a request by `by` (the CLI writes them on the object). */
export const requestAnnotations = (request: RequestAnnotation, by: string): Record<string, string> => ({
  [OPERATOR_REQUEST_ANNOTATION]: JSON.stringify(request),
  [OPERATOR_REQUESTER_ANNOTATION]: by,
});

/** What became of a request: the Update's answer, or why it was not sent or was rejected. */
export interface RequestResult {
  id?: string;
  by: string;
  accepted: boolean;
  /** The machine state when an accepted action was taken. */
  state?: string;
  message: string;
}

const resultSchema = z.object({
  id: z.string().optional(),
  by: z.string(),
  accepted: z.boolean(),
  state: z.string().optional(),
  message: z.string(),
});

/** The result of request `id` on an object, once the starter has written it. */
export function readRequestResult(
  annotations: Record<string, string> | undefined,
  id: string,
): RequestResult | undefined {
  const parsed = parseJson(annotations?.[OPERATOR_RESULT_ANNOTATION] ?? '');
  if ('error' in parsed) return undefined;
  const result = resultSchema.safeParse(parsed.json);
  return result.success && result.data.id === id ? result.data : undefined;
}

/** The merge patch of `metadata.annotations` that replaces a request by its result. */
export const resultAnnotations = (result: RequestResult): Record<string, string | null> => ({
  [OPERATOR_REQUEST_ANNOTATION]: null,
  [OPERATOR_REQUESTER_ANNOTATION]: null,
  [OPERATOR_RESULT_ANNOTATION]: JSON.stringify(result),
});

/** The object as a generic client addresses it, with `annotations` to merge into it. */
export const objectPatch = (ref: ObjectRef, annotations: Record<string, string | null>) => ({
  apiVersion: API_VERSIONS[ref.kind],
  kind: ref.kind,
  metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}), annotations },
});
