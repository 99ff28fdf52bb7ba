import { kubernetes, midonet } from './activities';
import { actionFailed, type Unstamped } from './interpreter';
import { forwardSignal, runLifecycle, type LifecycleInput } from './lifecycle';
import { backendChangedSchema, backendChangedSignal } from '../model/messages';
import {
  translationLifecycleMachine,
  type TranslationActionParams,
  type TranslationMachineEvent,
  type TranslationMachineContext,
  type TranslationTimings,
} from './machines/translation';
import { describeRef } from '../model/naming';
import { ActivityFailure, ApplicationFailure, isCancellation, TimeoutFailure } from '@temporalio/workflow';
import { translationProjection, type BackendResource, type PushedResource } from '../model/translation/types';
import { outcomeOf, parseProgress, progressIn } from '../model/translation/push-progress';
import { Reason } from '../model/vocabulary';

/**
 * The pusher (seed 000) as a workflow: one per Translation, id `translation/<ns>/<name>`, driven by the watcher's
 * observations. The machine (machines/translation.ts) decides; this function only wires its actions to activities.
 */
export type TranslationLifecycleInput = LifecycleInput<TranslationMachineContext, TranslationTimings>;

export async function translationLifecycle(input: TranslationLifecycleInput): Promise<void> {
  const what = describeRef(input.ref);
  await runLifecycle(translationLifecycleMachine, input, {
    projection: translationProjection,
    resources: (c) => [
      ...c.pushed.map(asView),
      ...c.orphaned.map((r) => ({ ...asView(r), state: 'orphaned' })),
      // A large Translation's record is its status: the view says how many and where.
      ...(c.recordInStatus
        ? [
            {
              kind: 'Translation',
              id: `${c.pushedCount ?? 0} resources, listed in status.childResources`,
              state: 'synced',
            },
          ]
        : []),
    ],
    slowActions: ['push', 'deleteBackend'],
    // A deletion calls a push off (machines/translation.ts abandoningPush).
    abandonable: ['push'],
    setup: (interpreter) =>
      forwardSignal(interpreter, backendChangedSignal, backendChangedSchema, (notice) => ({
        type: 'backendChanged' as const,
        notice,
      })),
    executors: {
      push: (p) => push(p, what),
      deleteBackend: async (p) => ({
        type: 'backendDeleted',
        ...(await midonet.deleteTranslation.executeWithOptions(
          { summary: `delete ${p.resources.length} MidoNet resources of ${what} in reverse order` },
          [p],
        )),
      }),
      addFinalizer: async (p) => ({
        type: 'finalizerAdded',
        ...(await kubernetes.addFinalizer.executeWithOptions(
          { summary: `put the finalizer ${p.finalizer} on ${what} before pushing` },
          [p],
        )),
      }),
      releaseFinalizer: async (p) => {
        await kubernetes.releaseFinalizer.executeWithOptions(
          { summary: `release the finalizer ${p.finalizer} of ${what}` },
          [p],
        );
        return { type: 'released' };
      },
      recordStatus: async (p) => {
        const { ready, synced, eventType } = conditionsOf(p);
        await kubernetes.recordTranslationStatus.executeWithOptions(
          { summary: `status ${p.state} and a ${p.eventReason} Event on ${what}` },
          [
            {
              ref: p.ref,
              ...(p.uid ? { uid: p.uid } : {}),
              generation: p.generation,
              ...(p.keepChildResources
                ? {}
                : { childResources: p.resources.map(({ kind, id, state }) => ({ kind, id, state })) }),
              ready,
              synced,
              // Withdrawing Ready before a push is no news: the report after it tells.
              ...(p.state === 'pushing'
                ? {}
                : { event: { type: eventType, reason: p.eventReason, message: p.eventMessage } }),
            },
          ],
        );
        return { type: 'eventRecorded' };
      },
    },
  });
}

/** A failed push says how far it got: the machine records what it made, found, or may have written. */
async function push(p: TranslationActionParams['push'], what: string): Promise<Unstamped<TranslationMachineEvent>> {
  try {
    return {
      type: 'pushed',
      ...(await midonet.pushTranslation.executeWithOptions(
        { summary: `push ${p.resources.length} MidoNet resources of ${what}` },
        [p],
      )),
    };
  } catch (error) {
    if (isCancellation(error)) throw error;
    const lost = p.reference?.readResources ? lostProgress(error) : undefined;
    return {
      ...actionFailed('push', error),
      action: 'push',
      outcome: pushOutcome(p.resources, error),
      ...(lost ? { lostPush: lost } : {}),
    };
  }
}

/** The last heartbeat of a push lost with its worker (timed out), which the next push reads its record by. */
function lostProgress(error: unknown) {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  return cause instanceof TimeoutFailure ? parseProgress(cause.lastHeartbeatDetails) : undefined;
}

const asView = (r: PushedResource) => ({ kind: r.kind, id: r.id, state: r.state });

/**
 * How far a failed push got: from its failure's details when it failed itself, from its last heartbeat when it was
 * lost (timed out); nothing known is taken as lost from the start.
 */
function pushOutcome(resources: BackendResource[], error: unknown) {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof TimeoutFailure) return outcomeOf(resources, lostProgress(error), true);
  const progress = cause instanceof ApplicationFailure ? progressIn(cause.details ?? undefined) : undefined;
  return outcomeOf(resources, progress, progress === undefined);
}

/** Ready and Synced as the state says; paused, Ready still says what MidoNet holds (true while nothing waits). */
function conditionsOf(p: TranslationActionParams['recordStatus']) {
  const paused = p.state === 'paused';
  const synced =
    p.state === 'synced'
      ? { status: 'True' as const, reason: Reason.Synced, message: p.eventMessage }
      : {
          status: 'False' as const,
          reason: paused ? Reason.Paused : p.state === 'pushing' ? Reason.Pushing : (p.error?.reason ?? Reason.Stuck),
          message: p.eventMessage,
        };
  const ready = paused && p.readyWhilePaused ? { ...synced, status: 'True' as const } : synced;
  const eventType: 'Normal' | 'Warning' = p.state === 'synced' || paused ? 'Normal' : 'Warning';
  return { ready, synced, eventType };
}
