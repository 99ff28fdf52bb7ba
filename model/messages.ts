import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { z } from 'zod';
import { cleanupModes, messageSchemas } from './message-schemas';
import type { ObjectRef } from './naming';
import type { SweepProgress } from './sweep-report';

/**
 * Every signal, update and query of the lifecycle workflows, defined once and used by workflows, starter, CLI and
 * tests alike. Operator actions are Updates (validated, answered) and also Signals of the same name, so that
 * `temporal workflow signal --name cleanup --input '{...}'` works too.
 */

/** What the watcher saw: a trimmed projection of the object, sent only when that projection changed. */
export interface Observation<P = unknown> {
  ref: ObjectRef;
  uid: string;
  /** `metadata.generation` where the kind has one, else 0. */
  generation: number;
  /** `metadata.deletionTimestamp` is set. */
  deleting: boolean;
  /** The object is gone from the API server (a watch DELETED event). */
  gone: boolean;
  finalizers: string[];
  projection: P;
}

/**
 * One or more observations of the object, oldest first: the starter sends the ones that arrived together (a peer pod's
 * Pod and its PeerPod deleted 30 ms apart) in one signal, so the workflow takes them in one workflow task.
 */
export const observedSignal = defineSignal<Observation[]>('observed');
/** What a workflow takes from one `observed` signal (the rest is dropped, logged): the starter sends fewer at once. */
export const MAX_OBSERVATIONS_PER_SIGNAL = 16;

// Signals are a trust boundary: their schemas are in message-schemas.ts, built once per worker (see there).
export const {
  observationSchema,
  dependencyChangedSchema,
  backendChangedSchema,
  cleanupRequest,
  operatorRequestSchema,
} = messageSchemas();
export { cleanupModes };

/** The reasons a payload was refused, `field: message` each, for logs and update rejections. */
export const describeIssues = (error: z.ZodError, what = 'payload') =>
  error.issues.map((i) => `${i.path.join('.') || what}: ${i.message}`).join('; ');

/** A dependency (the Node of a Pod, the Service of Endpoints) changed: referrers re-read it and repair. */
export interface DependencyChanged {
  dependency: ObjectRef;
  uid: string;
}
export const dependencyChangedSignal = defineSignal<[DependencyChanged]>('dependencyChanged');

/**
 * Resources a Translation names changed in MidoNet under it: another Translation's deletion cascaded them away, or
 * created what it was waiting for. Its pusher pushes again (which re-checks every resource) to tell the truth.
 */
export interface BackendChanged {
  /** The pusher workflow that changed them. */
  by: string;
  /** Some of the MidoNet IDs involved, for the history's reader. */
  ids: string[];
}
export const backendChangedSignal = defineSignal<[BackendChanged]>('backendChanged');

export type CleanupMode = (typeof cleanupModes)[number];
export type CleanupRequest = z.infer<typeof cleanupRequest>;
export type OperatorRequest = z.infer<typeof operatorRequestSchema>;

/** The answer to an accepted operator action. */
export interface ActionResult {
  accepted: true;
  /** Machine state when the action was taken. */
  state: string;
  message: string;
}

export const cleanupUpdate = defineUpdate<ActionResult, [CleanupRequest]>('cleanup');
export const pauseUpdate = defineUpdate<ActionResult, [OperatorRequest]>('pause');
export const resumeUpdate = defineUpdate<ActionResult, [OperatorRequest]>('resume');
export const refreshUpdate = defineUpdate<ActionResult, [OperatorRequest]>('refresh');

export const cleanupSignal = defineSignal<[CleanupRequest]>('cleanup');
export const pauseSignal = defineSignal<[OperatorRequest]>('pause');
export const resumeSignal = defineSignal<[OperatorRequest]>('resume');
export const refreshSignal = defineSignal<[OperatorRequest]>('refresh');

/** One backend resource as the workflow knows it (the Translation's `status.childResources` mirrors this). */
export interface ResourceView {
  kind: string;
  id: string;
  /** e.g. `pending`, `synced`, `deleted`, `orphaned`, `failed`. */
  state: string;
  lastTransitionTime?: string;
}

/** A backend resource named without its state (what an object's sync pushed). */
export type ResourceRef = Pick<ResourceView, 'kind' | 'id'>;

export interface LifecycleError {
  /** Short CamelCase reason shared with the condition, the Event and this record. */
  reason: string;
  message: string;
  at: string;
  /** Failed steps in a row, this one included (since the last success): a stuck lifecycle's retries back off by it. */
  failures?: number;
}

/** An operator action as recorded in the workflow. */
export interface ActionRecord {
  action: 'cleanup' | 'pause' | 'resume' | 'refresh';
  mode?: CleanupMode;
  /** A cleanup that ended the lifecycle of an object that was not being deleted, as the operator said it would. */
  evenIfLive?: true;
  requestedBy: string;
  reason: string;
  at: string;
}

export interface LifecycleStateView {
  ref: ObjectRef;
  uid?: string;
  /** Machine state value, e.g. `synced`, `stuck`, `paused`. */
  state: string;
  resources: ResourceView[];
  lastError?: LifecycleError;
  actions: ActionRecord[];
}

export const stateQuery = defineQuery<LifecycleStateView>('state');

/** The orphan sweeper's progress (phase, units done of total), which `steward sweep` draws as a bar. */
export const sweepProgressQuery = defineQuery<SweepProgress>('progress');
