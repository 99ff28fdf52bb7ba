import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { kubernetes, objects } from './activities';
import type { Unstamped } from './interpreter';
import { forwardSignal, recordObjectEvent, runLifecycle, type LifecycleInput } from './lifecycle';
import {
  backendChangedSchema,
  backendChangedSignal,
  dependencyChangedSchema,
  dependencyChangedSignal,
  type DependencyChanged,
  type ResourceView,
} from '../model/messages';
import {
  objectLifecycleMachine,
  type ObjectActionParams,
  type ObjectContext,
  type ObjectEvent,
  type ObjectTimings,
} from './machines/object';
import { clusterOfWorkflowId, describeRef, isDependencyKind, workflowId, type ObjectRef } from '../model/naming';
import type { TranslationNote } from '../model/translation/errors';
import { observedObjectProjection } from '../model/translation/types';
import { Reason, REFERRERS_FINALIZER } from '../model/vocabulary';

/**
 * One workflow per translated Kubernetes object (`node/<name>`, `pod/<ns>/<name>`, `service/<ns>/<name>`,
 * `endpoints/<ns>/<name>`), driven by the watcher's observations: it applies the object's Translations and pushes
 * them itself. The machine (machines/object.ts) decides; this function wires its actions to activities.
 */
export type ObjectLifecycleInput = LifecycleInput<ObjectContext, ObjectTimings>;

export async function objectLifecycle(input: ObjectLifecycleInput): Promise<void> {
  await runLifecycle(objectLifecycleMachine, input, {
    projection: observedObjectProjection,
    provesDeletion: true,
    resources: (c) => [
      ...c.translations.map((name) => ({ kind: 'Translation', id: name, state: 'applied' })),
      ...midonetResources(c),
    ],
    condition: (c) =>
      c.waitingFor ? { reason: Reason.WaitingForDependency, message: c.waitingFor, at: '' } : undefined,
    setup: (interpreter) => {
      forwardSignal(interpreter, dependencyChangedSignal, dependencyChangedSchema, (change) => ({
        type: 'dependencyChanged' as const,
        change: change as DependencyChanged,
      }));
      forwardSignal(interpreter, backendChangedSignal, backendChangedSchema, (notice) => ({
        type: 'backendChanged' as const,
        notice,
      }));
    },
    executors: {
      apply,
      annotate,
      notifyReferrers: async ({ ref, uid }) => {
        // Only Nodes and Services are depended on: a Pod's or Endpoints' list is always empty.
        if (isDependencyKind(ref.kind)) await notifyReferrers(ref, uid);
        return { type: 'referrersNotified' };
      },
      finalize,
      recordEvent: recordObjectEvent,
    },
  });
}

/**
 * A Node or Service first tells its referrers (their resources hang off its own and go with them); then it deletes
 * what its Translations pushed, lets them go and lets go of the object. A push attempt lost with its worker may still have writes landing in
 * MidoNet (its Translation's fence says until when): nothing is done, and the machine waits it out (`waitingForLateWrites`).
 */
async function finalize({
  ref,
  uid,
  dependency,
  mode,
}: ObjectActionParams['finalize']): Promise<Unstamped<ObjectEvent>> {
  // Its referrers lose their network with it (a bridge's DELETE cascades their ports): told first, they say so at once.
  if (isDependencyKind(ref.kind) && mode === 'delete') await notifyReferrers(ref, uid);
  const { unsettledUntil, live } = await objects.finalizeObject.executeWithOptions(
    { summary: `${mode === 'orphan' ? 'let go of' : 'delete'} the Translations of ${describeRef(ref)}` },
    [{ ref, uid, mode, ...(dependency ? { dependency } : {}) }],
  );
  if (live) return { type: 'stillLive' };
  if (unsettledUntil) return { type: 'lateWrites', until: unsettledUntil };
  if (isDependencyKind(ref.kind))
    await kubernetes.releaseFinalizer.executeWithOptions(
      { summary: `release the referrers finalizer of ${describeRef(ref)}` },
      [{ ref, uid, finalizer: REFERRERS_FINALIZER }],
    );
  return { type: 'finalized' };
}

async function notifyReferrers(ref: ObjectRef, uid: string): Promise<void> {
  const { referrers } = await kubernetes.listReferrers.executeWithOptions(
    { summary: `read the referrers of ${describeRef(ref)}` },
    [{ dependency: ref }],
  );
  // A Service's Endpoints of its name wait for it unregistered when they came first (as midonet-kubernetes kicks them).
  const endpoints: ObjectRef = { kind: 'Endpoints', namespace: ref.namespace ?? '', name: ref.name };
  const sameName = (r: ObjectRef) => r.kind === 'Endpoints' && r.namespace === ref.namespace && r.name === ref.name;
  const told = ref.kind === 'Service' && !referrers.some(sameName) ? [...referrers, endpoints] : referrers;
  await Promise.all(
    told.map((referrer) =>
      // A referrer whose workflow is gone has nothing to repair.
      getExternalWorkflowHandle(workflowId(referrer, clusterOfWorkflowId(workflowInfo().workflowId)))
        .signal(dependencyChangedSignal, { dependency: ref, uid })
        .catch(() => undefined),
    ),
  );
}

/**
 * What the last push left in MidoNet, by name up to `NAMED_RESOURCES`, then counted. Claimed synced only while nothing
 * since says otherwise: waiting for its dependency (whose deletion cascades) or failing, it is unverified, as the
 * Translations' status says.
 */
function midonetResources({ pushedCount, pushedResources = [], waitingFor, lastError }: ObjectContext): ResourceView[] {
  if (pushedCount === undefined) return [];
  const state = waitingFor || lastError ? 'unverified' : 'synced';
  const unnamed = pushedCount - pushedResources.length;
  const counted = pushedResources.length ? `${unnamed} more` : `${unnamed} resources`;
  return [
    ...pushedResources.map((r) => ({ ...r, state })),
    ...(unnamed > 0 ? [{ kind: 'MidoNet', id: `${counted}, listed in the Translations' status`, state }] : []),
  ];
}

/** Translate once the dependency is there and pushed, apply the Translations and push them: one local activity. */
async function apply({
  ref,
  uid,
  projection,
  tenant,
  previousDependency,
  toldNotes = [],
  waitingFor,
}: ObjectActionParams['apply']): Promise<Unstamped<ObjectEvent>> {
  const result = await objects.syncObject.executeWithOptions(
    { summary: `translate ${describeRef(ref)}, apply its Translations and push them` },
    [
      {
        ref,
        uid,
        projection,
        ...(tenant ? { tenant } : {}),
        ...(previousDependency ? { previousDependency } : {}),
        ...(waitingFor ? { waitingFor } : {}),
      },
    ],
  );
  if (result.outcome === 'wait') {
    const { reason, notified, dependency } = result;
    return { type: 'mustWait', reason, ...(notified ? { notified } : {}), ...(dependency ? { dependency } : {}) };
  }
  if (result.outcome === 'invalid')
    return { type: 'invalid', error: result.error, ...(result.dependency ? { dependency: result.dependency } : {}) };
  const { applied, terminating, dependency, pushed, resources } = result;
  // Another finalizer than ours holds a Translation being deleted: apply again once it is gone.
  if (terminating.length > 0)
    return { type: 'mustWait', reason: `Translations being deleted under other finalizers: ${terminating.join(', ')}` };
  const told = await tellNotes(ref, result.notes, toldNotes);
  return {
    type: 'applied',
    translations: applied,
    ...(pushed !== undefined ? { pushed } : {}),
    ...(resources ? { resources } : {}),
    ...(dependency ? { dependency } : {}),
    ...(told.length ? { toldNotes: told } : {}),
  };
}

/** midonet-kubernetes' node annotator: the Node's missing midonet.org annotations, one local activity. */
async function annotate({ ref, uid }: ObjectActionParams['annotate']): Promise<Unstamped<ObjectEvent>> {
  const result = await objects.annotateNode.executeWithOptions(
    { summary: `annotate ${describeRef(ref)} with its MidoNet host and tunnel endpoint` },
    [{ ref, uid }],
  );
  if (result.outcome === 'wait') return { type: 'mustWait', reason: result.reason };
  return { type: 'annotated', ...(result.outcome === 'annotate' ? { annotations: result.annotations } : {}) };
}

/**
 * What the translation left out (a dual-stack Node's IPv6 addresses) is told in a Normal Event on the object, once
 * per change: a note an earlier apply told is not told again. Returns the notes told now.
 */
async function tellNotes(
  ref: ObjectRef,
  notes: TranslationNote[],
  told: TranslationNote[],
): Promise<TranslationNote[]> {
  const fresh = notes.filter((note) => !told.some((t) => t.reason === note.reason && t.message === note.message));
  if (fresh.length === 0) return notes;
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
