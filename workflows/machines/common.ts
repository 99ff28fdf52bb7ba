import type { ActionRecord, CleanupRequest, LifecycleError, OperatorRequest } from '../messages';

/**
 * Pieces every lifecycle machine shares: how an operator action is recorded (who asked, why, when) and how a
 * failed step becomes the lifecycle's last error.
 */
type OperatorEvent =
  | { type: 'cleanup'; request: CleanupRequest; at: string }
  | { type: 'pause' | 'resume' | 'refresh'; request: OperatorRequest; at: string };

/** Events every lifecycle machine handles: a failed step, its timers, the operator's actions, a continue-as-new. */
export type CommonLifecycleEvent =
  | { type: 'actionFailed'; action: string; reason: string; message: string }
  | { type: 'retry' }
  | { type: 'driftCheck' }
  | { type: 'cleanup'; request: CleanupRequest }
  | { type: 'pause'; request: OperatorRequest }
  | { type: 'resume'; request: OperatorRequest }
  | { type: 'refresh'; request: OperatorRequest }
  | { type: 'resumed' };

export function withOperatorAction(actions: ActionRecord[], event: { type: string; at: string }): { actions: ActionRecord[] } | Record<string, never> {
  if (!['cleanup', 'pause', 'resume', 'refresh'].includes(event.type)) return {};
  const { type, request, at } = event as OperatorEvent;
  const mode = 'mode' in request ? request.mode : undefined;
  return { actions: [...actions, { action: type, ...(mode ? { mode } : {}), requestedBy: request.requestedBy, reason: request.reason, at }] };
}

export function failureOf(event: { type: string; at: string }): { lastError: LifecycleError } | Record<string, never> {
  if (event.type !== 'actionFailed') return {};
  const { action, reason, message, at } = event as unknown as { action: string; reason: string; message: string; at: string };
  return { lastError: { reason, message: `${action}: ${message}`, at } };
}
