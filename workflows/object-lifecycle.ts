import { getExternalWorkflowHandle } from '@temporalio/workflow';
import { kubernetes } from './activities';
import { applyObjectSteps, type ApplyObjectCalls } from '../model/apply-object';
import type { Unstamped } from './interpreter';
import { forwardSignal, LEAN_HISTORY_PATCH, recordObjectEvent, runLifecycle, type LifecycleInput } from './lifecycle';
import {
  dependencyChangedSchema,
  dependencyChangedSignal,
  refreshSignal,
  type DependencyChanged,
} from '../model/messages';
import {
  objectLifecycleMachine,
  type ObjectActionParams,
  type ObjectContext,
  type ObjectEvent,
  type ObjectTimings,
} from './machines/object';
import { describeRef, isDependencyKind, workflowId, type ObjectRef } from '../model/naming';
import { patchesOf, type PatchId } from '../model/patches';
import type { TranslationNote } from '../model/translation/errors';
import { observedObjectProjection } from '../model/translation/types';
import { Reason, REFERRERS_FINALIZER } from '../model/vocabulary';

/**
 * One workflow per translated Kubernetes object (`node/<name>`, `pod/<ns>/<name>`, `service/<ns>/<name>`,
 * `endpoints/<ns>/<name>`), driven by the watcher's observations. The machine (machines/object.ts) decides; this
 * function wires its actions to activities.
 */
export type ObjectLifecycleInput = LifecycleInput<ObjectContext, ObjectTimings>;

export async function objectLifecycle(input: ObjectLifecycleInput): Promise<void> {
  const has = patchesOf(input.patches);
  await runLifecycle(objectLifecycleMachine, input, {
    projection: observedObjectProjection,
    resources: (c) => c.translations.map((name) => ({ kind: 'Translation', id: name, state: 'applied' })),
    condition: (c) =>
      c.waitingFor ? { reason: Reason.WaitingForDependency, message: c.waitingFor, at: '' } : undefined,
    setup: (interpreter) =>
      forwardSignal(interpreter, dependencyChangedSignal, dependencyChangedSchema, (change) => ({
        type: 'dependencyChanged' as const,
        change: change as DependencyChanged,
      })),
    executors: {
      apply: (params) => apply(params, has),
      notifyReferrers: async ({ ref, uid }) => {
        // Only Nodes and Services are depended on; a Pod's or Endpoints' list is always empty (histories recorded
        // before this read it anyway).
        if (isDependencyKind(ref.kind) || !has(LEAN_HISTORY_PATCH)) await notifyReferrers(ref, uid);
        return { type: 'referrersNotified' };
      },
      finalize: async ({ ref, uid, dependency, giveUp }) => {
        if (dependency && !giveUp)
          await kubernetes.removeReferrer.executeWithOptions(
            { summary: `remove ${describeRef(ref)} from the referrers of ${describeRef(dependency)}` },
            [{ dependency, referrer: ref }],
          );
        // A Node or Service going away tells its referrers first (their resources hang off it), then lets go.
        if (isDependencyKind(ref.kind)) {
          if (!giveUp) await notifyReferrers(ref, uid);
          await kubernetes.releaseFinalizer.executeWithOptions(
            { summary: `release the referrers finalizer of ${describeRef(ref)}` },
            [{ ref, uid, finalizer: REFERRERS_FINALIZER }],
          );
        }
        return { type: 'finalized' };
      },
      recordEvent: recordObjectEvent,
    },
  });
}

async function notifyReferrers(ref: ObjectRef, uid: string): Promise<void> {
  const { referrers } = await kubernetes.listReferrers.executeWithOptions(
    { summary: `read the referrers of ${describeRef(ref)}` },
    [{ dependency: ref }],
  );
  await Promise.all(
    referrers.map((referrer) =>
      // A referrer whose workflow is gone has nothing to repair.
      getExternalWorkflowHandle(workflowId(referrer))
        .signal(dependencyChangedSignal, { dependency: ref, uid })
        .catch(() => undefined),
    ),
  );
}

/**
 * Translate once the dependency is there and pushed, then write the Translations: in one local activity, or (histories
 * recorded before it) one local activity per step.
 */
async function apply(
  {
    ref,
    uid,
    projection,
    tenant,
    previousDependency,
    previousDependencyUid,
    toldNotes = [],
  }: ObjectActionParams['apply'],
  has: (id: PatchId) => boolean,
): Promise<Unstamped<ObjectEvent>> {
  const input = {
    ref,
    uid,
    projection,
    ...(tenant ? { tenant } : {}),
    ...(previousDependency ? { previousDependency } : {}),
  };
  const result = has(LEAN_HISTORY_PATCH)
    ? await kubernetes.applyObject.executeWithOptions(
        { summary: `translate ${describeRef(ref)}, apply its Translations, register it on what it depends on` },
        [input],
      )
    : await applyObjectSteps(stepByStep(ref), input);
  if (result.outcome === 'wait') return { type: 'mustWait', reason: result.reason };
  if (result.outcome === 'invalid') return { type: 'invalid', error: result.error };
  const { applied, terminating, dependency, dependencyUid } = result;
  // A Translation of the previous incarnation (same name) is still being finalized: apply again once it is gone.
  if (terminating.length > 0)
    return {
      type: 'mustWait',
      reason: `Translations of a previous incarnation are being finalized: ${terminating.join(', ')}`,
    };
  // A re-created dependency (a Node's bridge made again) took our backend resources with it, while our Translations
  // did not change: ask their pushers to repair (a refresh, recorded in their workflows as asked by Steward).
  if (dependency && previousDependencyUid && dependencyUid !== previousDependencyUid) {
    const request = {
      requestedBy: 'steward',
      reason: `${describeRef(dependency)} was re-created (uid ${dependencyUid ?? '?'})`,
    };
    await Promise.all(
      applied.map((key) => {
        const [namespace = '', name = ''] = key.split('/');
        return getExternalWorkflowHandle(workflowId({ kind: 'Translation', namespace, name }))
          .signal(refreshSignal, request)
          .catch(() => undefined);
      }),
    );
  }
  const told = await tellNotes(ref, result.notes, toldNotes, has);
  return {
    type: 'applied',
    translations: applied,
    ...(dependency ? { dependency } : {}),
    ...(dependencyUid ? { dependencyUid } : {}),
    ...(told.length ? { toldNotes: told } : {}),
  };
}

/** The apply's steps as one local activity each, as histories recorded before `applyObject` have them. */
const stepByStep = (ref: ObjectRef): ApplyObjectCalls => ({
  readObject: (input) =>
    kubernetes.readObject.executeWithOptions(
      { summary: `read ${describeRef(input.ref)}, which ${describeRef(ref)} depends on` },
      [input],
    ),
  translationsReady: (input) =>
    kubernetes.translationsReady.executeWithOptions(
      { summary: `are the ${input.translations.length} Translations of what ${describeRef(ref)} depends on pushed?` },
      [input],
    ),
  applyTranslations: (input) =>
    kubernetes.applyTranslations.executeWithOptions(
      { summary: `apply ${input.translations.length} Translations of ${describeRef(ref)}, delete stale ones` },
      [input],
    ),
  addReferrer: (input) =>
    kubernetes.addReferrer.executeWithOptions(
      { summary: `add ${describeRef(ref)} to the referrers of ${describeRef(input.dependency)}` },
      [input],
    ),
  removeReferrer: (input) =>
    kubernetes.removeReferrer.executeWithOptions(
      { summary: `remove ${describeRef(ref)} from the referrers of ${describeRef(input.dependency)}` },
      [input],
    ),
});

/**
 * What the translation left out (a dual-stack Node's IPv6 addresses) is told in a Normal Event on the object, once
 * per change: a note an earlier apply told is not told again. Returns the notes told now.
 */
async function tellNotes(
  ref: ObjectRef,
  notes: TranslationNote[],
  told: TranslationNote[],
  has: (id: PatchId) => boolean,
): Promise<TranslationNote[]> {
  const fresh = notes.filter((note) => !told.some((t) => t.reason === note.reason && t.message === note.message));
  if (fresh.length === 0) return notes;
  // Histories recorded before notes were told have no such Event: replayed, they tell nothing (the next apply does).
  if (!has('tell-translation-notes')) return told;
  for (const { reason, message } of fresh) {
    await kubernetes.recordObjectEvent.executeWithOptions(
      { summary: `Normal Event ${reason} on ${describeRef(ref)}` },
      [{ ref, type: 'Normal', reason, message }],
    );
  }
  return notes;
}

// One workflow type per kind: the Temporal UI lists and filters by type.
export const nodeLifecycle = objectLifecycle;
export const podLifecycle = objectLifecycle;
export const serviceLifecycle = objectLifecycle;
export const endpointsLifecycle = objectLifecycle;
