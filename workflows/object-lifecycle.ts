import { getExternalWorkflowHandle, patched } from '@temporalio/workflow';
import { kubernetes } from './activities';
import type { Unstamped } from './interpreter';
import { forwardSignal, runLifecycle, type LifecycleInput } from './lifecycle';
import { dependencyChangedSchema, dependencyChangedSignal, refreshSignal, type DependencyChanged } from './messages';
import { objectLifecycleMachine, type ObjectActionParams, type ObjectContext, type ObjectEvent, type ObjectTimings } from './machines/object';
import { describeRef, isDependencyKind, workflowId, type ObjectRef } from './naming';
import { dependencyOf, translateWithDependency } from './translation/dependency';
import type { TranslationNote } from './translation/errors';
import { observedObjectProjection } from './translation/types';
import { Reason, REFERRERS_FINALIZER } from './vocabulary';

/**
 * One workflow per translated Kubernetes object (`node/<name>`, `pod/<ns>/<name>`, `service/<ns>/<name>`,
 * `endpoints/<ns>/<name>`), driven by the watcher's observations. The machine (machines/object.ts) decides; this
 * function wires its actions to activities.
 */
export type ObjectLifecycleInput = LifecycleInput<ObjectContext, ObjectTimings>;

export async function objectLifecycle(input: ObjectLifecycleInput): Promise<void> {
  await runLifecycle<ObjectContext, ObjectEvent, ObjectTimings, ObjectActionParams>(objectLifecycleMachine, input, {
    projection: observedObjectProjection,
    resources: (c) => c.translations.map((name) => ({ kind: 'Translation', id: name, state: 'applied' })),
    condition: (c) => (c.waitingFor ? { reason: Reason.WaitingForDependency, message: c.waitingFor, at: '' } : undefined),
    setup: (interpreter) => forwardSignal(interpreter, dependencyChangedSignal, dependencyChangedSchema, (change) => ({ type: 'dependencyChanged' as const, change: change as DependencyChanged })),
    executors: {
      apply,
      notifyReferrers: async ({ ref, uid }) => {
        await notifyReferrers(ref, uid);
        return { type: 'referrersNotified' };
      },
      finalize: async ({ ref, uid, dependency, giveUp }) => {
        if (dependency && !giveUp) await kubernetes.removeReferrer.executeWithOptions({ summary: `remove ${describeRef(ref)} from the referrers of ${describeRef(dependency)}` }, [{ dependency, referrer: ref }]);
        // A Node or Service going away tells its referrers first (their resources hang off it), then lets go.
        if (isDependencyKind(ref.kind)) {
          if (!giveUp) await notifyReferrers(ref, uid);
          await kubernetes.releaseFinalizer.executeWithOptions({ summary: `release the referrers finalizer of ${describeRef(ref)}` }, [{ ref, uid, finalizer: REFERRERS_FINALIZER }]);
        }
        return { type: 'finalized' };
      },
      recordEvent: async (p) => {
        await kubernetes.recordObjectEvent.executeWithOptions({ summary: `${p.type} Event ${p.reason} on ${describeRef(p.ref)}` }, [p]);
        return { type: 'eventRecorded' };
      },
    },
  });
}

async function notifyReferrers(ref: ObjectRef, uid: string): Promise<void> {
  const { referrers } = await kubernetes.listReferrers.executeWithOptions({ summary: `read the referrers of ${describeRef(ref)}` }, [{ dependency: ref }]);
  await Promise.all(
    referrers.map((referrer) =>
      // A referrer whose workflow is gone has nothing to repair.
      getExternalWorkflowHandle(workflowId(referrer)).signal(dependencyChangedSignal, { dependency: ref, uid }).catch(() => undefined),
    ),
  );
}

/** Translate (pure, here in the workflow) once the dependency is there and pushed, then write the Translations. */
async function apply({ ref, uid, projection, tenant, previousDependency, previousDependencyUid, toldNotes = [] }: ObjectActionParams['apply']): Promise<Unstamped<ObjectEvent>> {
  const dependency = dependencyOf(projection);
  let dependencyProjection: unknown;
  let dependencyUid: string | undefined;
  if (dependency) {
    const read = await kubernetes.readObject.executeWithOptions({ summary: `read ${describeRef(dependency)}, which ${describeRef(ref)} depends on` }, [{ ref: dependency }]);
    if (!read.found || read.deleting) return { type: 'mustWait', reason: `${describeRef(dependency)} does not exist (yet)` };
    dependencyProjection = { ...read.object, kind: dependency.kind };
    dependencyUid = read.uid;
  }
  const translated = translateWithDependency(projection, dependencyProjection, tenant);
  if (translated.outcome === 'wait') return { type: 'mustWait', reason: translated.reason };
  if (translated.outcome === 'invalid') return { type: 'invalid', error: translated.error };
  if (translated.dependencyTranslations.length > 0) {
    const { ready, notReady } = await kubernetes.translationsReady.executeWithOptions(
      { summary: `are the ${translated.dependencyTranslations.length} Translations of ${describeRef(dependency!)} pushed?` },
      [{ translations: translated.dependencyTranslations }],
    );
    if (!ready) return { type: 'mustWait', reason: `waiting for ${describeRef(dependency!)}'s Translations to be pushed: ${notReady.join(', ')}` };
  }
  const { kind, metadata } = translated.projection;
  const owner = { kind, ...('namespace' in metadata ? { namespace: metadata.namespace } : {}), name: metadata.name, uid };
  const result = await kubernetes.applyTranslations.executeWithOptions({ summary: `apply ${translated.translations.length} Translations of ${describeRef(ref)}, delete stale ones` }, [{ owner, translations: translated.translations }]);
  if (dependency) await kubernetes.addReferrer.executeWithOptions({ summary: `add ${describeRef(ref)} to the referrers of ${describeRef(dependency)}` }, [{ dependency, referrer: ref }]);
  if (previousDependency && previousDependency.name !== dependency?.name) {
    await kubernetes.removeReferrer.executeWithOptions({ summary: `remove ${describeRef(ref)} from the referrers of ${describeRef(previousDependency)}` }, [{ dependency: previousDependency, referrer: ref }]);
  }
  // A Translation of the previous incarnation (same name) is still being finalized: apply again once it is gone.
  if (result.terminating.length > 0) return { type: 'mustWait', reason: `Translations of a previous incarnation are being finalized: ${result.terminating.join(', ')}` };
  // A re-created dependency (a Node's bridge made again) took our backend resources with it, while our Translations
  // did not change: ask their pushers to repair (a refresh, recorded in their workflows as asked by Steward).
  if (dependency && previousDependencyUid && dependencyUid !== previousDependencyUid) {
    const request = { requestedBy: 'steward', reason: `${describeRef(dependency)} was re-created (uid ${dependencyUid ?? '?'})` };
    await Promise.all(result.applied.map((key) => {
      const [namespace = '', name = ''] = key.split('/');
      return getExternalWorkflowHandle(workflowId({ kind: 'Translation', namespace, name })).signal(refreshSignal, request).catch(() => undefined);
    }));
  }
  const told = await tellNotes(ref, translated.notes, toldNotes);
  return { type: 'applied', translations: result.applied, ...(dependency ? { dependency } : {}), ...(dependencyUid ? { dependencyUid } : {}), ...(told.length ? { toldNotes: told } : {}) };
}

/**
 * What the translation left out (a dual-stack Node's IPv6 addresses) is told in a Normal Event on the object, once
 * per change: a note an earlier apply told is not told again. Returns the notes told now.
 */
async function tellNotes(ref: ObjectRef, notes: TranslationNote[], told: TranslationNote[]): Promise<TranslationNote[]> {
  const fresh = notes.filter((note) => !told.some((t) => t.reason === note.reason && t.message === note.message));
  if (fresh.length === 0) return notes;
  // Histories recorded before notes were told have no such Event: replayed, they tell nothing (the next apply does).
  if (!patched('tell-translation-notes')) return told;
  for (const { reason, message } of fresh) {
    await kubernetes.recordObjectEvent.executeWithOptions({ summary: `Normal Event ${reason} on ${describeRef(ref)}` }, [{ ref, type: 'Normal', reason, message }]);
  }
  return notes;
}

// One workflow type per kind: the Temporal UI lists and filters by type.
export const nodeLifecycle = objectLifecycle;
export const podLifecycle = objectLifecycle;
export const serviceLifecycle = objectLifecycle;
export const endpointsLifecycle = objectLifecycle;
