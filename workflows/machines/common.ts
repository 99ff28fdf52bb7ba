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

/** An operator's cleanup of a stuck or paused lifecycle: `retry` resumes (through `resuming`), `orphan` and `force` go to `giveUpTarget`. */
const cleanupTransitions = <TGiveUp extends string>(giveUpTarget: TGiveUp) =>
  [
    { guard: 'isRetry', target: 'resuming', actions: 'recordAction' },
    { guard: 'isGiveUp', target: giveUpTarget, actions: 'recordAction' },
  ] as const;

/**
 * `stuck`'s transitions in the lifecycles whose actions report back with `eventRecorded`: the retry timer, a refresh
 * and `cleanup --mode retry` resume the failed step; `orphan` and `force` go to `giveUpTarget`. Everything else only
 * updates what is known: a stuck lifecycle waits.
 */
export const stuckTransitions = <TGiveUp extends string>(giveUpTarget: TGiveUp) =>
  ({
    eventRecorded: {},
    actionFailed: {},
    observed: { actions: 'observe' },
    retry: 'resuming',
    refresh: { target: 'resuming', actions: 'recordAction' },
    resumed: { target: 'stuck', reenter: true },
    cleanup: cleanupTransitions(giveUpTarget),
  }) as const;

/**
 * What `paused` does in those lifecycles besides taking the results of the action in flight (each machine's own):
 * `resume` and `cleanup` as in `stuck`; observations and failures are recorded, nothing is started.
 */
export const pausedTransitions = <TGiveUp extends string>(giveUpTarget: TGiveUp) =>
  ({
    pause: {},
    resume: { target: 'resuming', actions: 'recordAction' },
    observed: { actions: 'observe' },
    actionFailed: { actions: 'recordFailure' },
    cleanup: cleanupTransitions(giveUpTarget),
  }) as const;
