import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';
import type { z } from 'zod';
import { kubernetes } from './activities';
import { Interpreter, type Executors, type PersistedMachine, type Unstamped } from './interpreter';
import { claimHolds, goneClaim, stateName, type RecordEventParams, type VersionedMachine } from './machines/common';
import {
  cleanupRequest,
  cleanupSignal,
  cleanupUpdate,
  describeIssues,
  observationSchema,
  MAX_OBSERVATIONS_PER_SIGNAL,
  observedSignal,
  operatorRequestSchema,
  pauseSignal,
  pauseUpdate,
  refreshSignal,
  refreshUpdate,
  resumeSignal,
  resumeUpdate,
  stateQuery,
  type ActionRecord,
  type ActionResult,
  type LifecycleError,
  type LifecycleStateView,
  type Observation,
  type ResourceView,
} from '../model/messages';
import { describeRef, type ObjectRef } from '../model/naming';
import { KNOWN_PATCHES, patchesOf } from '../model/patches';
import { K8sUID, LifecycleState } from '../model/search-attributes';

/**
 * What every lifecycle workflow shares: the watcher's observations and the operator's actions turned into machine
 * events, the `state` query, the Temporal UI's current details and `LifecycleState` search attribute, and
 * continue-as-new at a safe point.
 */

/** The events every lifecycle machine understands. */
type LifecycleEvent =
  | { type: 'observed'; observation: Observation }
  | { type: 'cleanup'; request: z.infer<typeof cleanupRequest> }
  | { type: 'pause' | 'resume' | 'refresh'; request: z.infer<typeof operatorRequestSchema> };

const sameObject = (a: ObjectRef, b: { kind: string; namespace?: string; name: string }) =>
  a.kind === b.kind && (a.namespace ?? '') === (b.namespace ?? '') && a.name === b.name;

/**
 * Handles the common signals, updates and the query. The observation the workflow was started with goes first: a
 * signal that arrived before the first workflow task is dispatched as soon as its handler is set, and it is newer.
 */
function handleLifecycleMessages<TContext, TEvent extends { type: string }, TParams>(
  interpreter: Interpreter<TContext, TEvent, TParams>,
  view: () => LifecycleStateView,
  ref: ObjectRef,
  projection: z.ZodType,
  startedWith: Observation | undefined,
): void {
  const send = (event: LifecycleEvent) => interpreter.send(event as unknown as Unstamped<TEvent>);
  const observation = observationSchema(projection);
  // Neither a signal nor a start can be refused: what is not an observation of this very object is logged and dropped.
  const observe = (payload: unknown, from: string) => {
    const parsed = observation.safeParse(payload);
    const problem = !parsed.success
      ? describeIssues(parsed.error)
      : !sameObject(ref, parsed.data.ref)
        ? `it observes ${describeRef(parsed.data.ref as ObjectRef)}`
        : undefined;
    if (problem !== undefined) log.warn(`dropped ${from} that is no observation of ${describeRef(ref)}: ${problem}`);
    else send({ type: 'observed', observation: parsed.data as Observation });
  };
  if (startedWith) observe(startedWith, 'the observation the workflow was started with');
  setHandler(observedSignal as SignalDefinition<unknown[]>, (...payloads: unknown[]) => {
    if (payloads.length > MAX_OBSERVATIONS_PER_SIGNAL)
      log.warn(
        `dropped ${payloads.length - MAX_OBSERVATIONS_PER_SIGNAL} observations of an observed signal carrying ${payloads.length}: at most ${MAX_OBSERVATIONS_PER_SIGNAL} are taken`,
      );
    for (const payload of payloads.slice(0, MAX_OBSERVATIONS_PER_SIGNAL)) observe(payload, 'an observed signal');
  });
  setHandler(stateQuery, view, {
    description: 'Machine state, backend resources with their status, the last error and operator actions.',
  });

  const operatorActions = [
    { type: 'cleanup', update: cleanupUpdate, signal: cleanupSignal, schema: cleanupRequest },
    { type: 'pause', update: pauseUpdate, signal: pauseSignal, schema: operatorRequestSchema },
    { type: 'resume', update: resumeUpdate, signal: resumeSignal, schema: operatorRequestSchema },
    { type: 'refresh', update: refreshUpdate, signal: refreshSignal, schema: operatorRequestSchema },
  ] as const;
  for (const { type, update, signal, schema } of operatorActions) {
    /** Why an action is refused (a malformed request, or one the current state does not take), if it is. */
    const refusal = (request: unknown): { type: 'InvalidRequest' | 'NotAllowed'; message: string } | undefined => {
      const parsed = schema.safeParse(request);
      if (!parsed.success)
        return {
          type: 'InvalidRequest',
          message: `invalid ${type} request: ${describeIssues(parsed.error, 'request')}`,
        };
      const can = (request: object) => interpreter.snapshot.can({ type, request, at: '' });
      if (can(parsed.data)) return undefined;
      const cleanup = type === 'cleanup' ? (parsed.data as z.infer<typeof cleanupRequest>) : undefined;
      if (cleanup && !cleanup.evenIfLive && can({ ...cleanup, evenIfLive: true }))
        return { type: 'NotAllowed', message: liveCleanupRefusal(ref, cleanup.mode) };
      const state = stateName(interpreter.snapshot.value);
      return { type: 'NotAllowed', message: `${type} is not possible while the lifecycle is ${state}${hint(type)}` };
    };
    setHandler(
      update as UpdateDefinition<ActionResult, [unknown]>,
      (request: unknown): ActionResult => {
        const state = stateName(interpreter.snapshot.value);
        send({ type, request } as LifecycleEvent);
        return { accepted: true, state, message: `${type} accepted in state ${state}` };
      },
      {
        validator: (request: unknown) => {
          const refused = refusal(request);
          // Non-retryable: the same request is refused again until the object or the request changes.
          if (refused) throw ApplicationFailure.nonRetryable(refused.message, refused.type);
        },
        description: `Operator action ${type}, validated against the current state; records who asked and why.`,
      },
    );
    // A signal cannot be refused, so an invalid one is only logged: use the update to get the reason back.
    setHandler(signal as SignalDefinition<[unknown]>, (request: unknown) => {
      const refused = refusal(request);
      if (refused) log.warn(`ignored ${type} signal: ${refused.message}`);
      else send({ type, request } as LifecycleEvent);
    });
  }
}

/** `orphan` and `force` end the lifecycle: of an object not being deleted, only when the operator says so. */
function liveCleanupRefusal(ref: ObjectRef, mode: string): string {
  const namespace = ref.namespace ? ` -n ${ref.namespace}` : '';
  return (
    `cleanup --mode ${mode} would end the lifecycle of ${describeRef(ref)} while it is not being deleted: delete it ` +
    `first (kubectl delete ${ref.kind.toLowerCase()}${namespace} ${ref.name}), or, to end it while it lives, add ` +
    '--even-if-live (evenIfLive: true in the request), which is recorded'
  );
}

function hint(type: string): string {
  if (type === 'cleanup') return ' (cleanup acts on a stuck or paused lifecycle)';
  if (type === 'resume') return ' (only a paused lifecycle resumes)';
  if (type === 'refresh') return ' (refresh acts on a synced or stuck lifecycle)';
  return '';
}

/**
 * Sends a lifecycle's own signal (beyond the common ones) to its machine once its payload passed `schema`; one that
 * does not is logged and dropped, never stored.
 */
export function forwardSignal<TContext, TEvent extends { type: string }, TParams, S extends z.ZodType>(
  interpreter: Interpreter<TContext, TEvent, TParams>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any one-argument signal
  signal: SignalDefinition<[any]>,
  schema: S,
  toEvent: (payload: z.output<S>) => Unstamped<TEvent>,
): void {
  setHandler(signal as SignalDefinition<[unknown]>, (payload: unknown) => {
    const parsed = schema.safeParse(payload);
    if (parsed.success) interpreter.send(toEvent(parsed.data));
    else log.warn(`dropped a ${signal.name} signal: ${describeIssues(parsed.error)}`);
  });
}

/** The executor of `recordEvent`, for the machines that tell an operator on the object itself (object, peer pod). */
export async function recordObjectEvent(p: RecordEventParams): Promise<{ type: 'eventRecorded' }> {
  await kubernetes.recordObjectEvent.executeWithOptions(
    { summary: `${p.type} Event ${p.reason} on ${describeRef(p.ref)}` },
    [p],
  );
  return { type: 'eventRecorded' };
}

/**
 * Current details (markdown, no history event) and, when `upsert` says so, the coarse `LifecycleState` search
 * attribute, upserted only when it changes (each upsert is a history event and a visibility write).
 */
function publishState(view: LifecycleStateView, lastPublished: { state?: string }, upsert: boolean): void {
  const rows = view.resources.map((r) => `| ${r.kind} | \`${r.id}\` | ${r.state} |`);
  setCurrentDetails(
    [
      `**State:** ${view.state}`,
      view.lastError ? `**Last error:** ${view.lastError.reason}: ${view.lastError.message}` : '',
      rows.length ? ['| kind | id | state |', '|---|---|---|', ...rows].join('\n') : '_no backend resources_',
    ]
      .filter(Boolean)
      .join('\n\n'),
  );
  if (upsert && lastPublished.state !== view.state) {
    upsertSearchAttributes([{ key: LifecycleState, value: view.state }]);
    lastPublished.state = view.state;
  }
  publishUid(view.uid);
}

/**
 * `K8sUID` follows the incarnation: the starter sets it when it starts the workflow, and a later incarnation of the
 * same name (continued as new in the same workflow id) would otherwise still be found under the first one's UID.
 */
function publishUid(uid: string | undefined): void {
  if (!uid || workflowInfo().typedSearchAttributes.get(K8sUID) === uid) return;
  upsertSearchAttributes([{ key: K8sUID, value: uid }]);
}

/**
 * The UID an observation would have the machine stop serving (another UID under the name, which finalizes the one
 * served): a new incarnation of the object. A lifecycle serving more than one object (a peer pod: its Pod and its
 * PeerPod) says which other record an observation would replace (`supersedes`).
 */
function supersededUid<TContext extends LifecycleContext>(
  observation: Observation,
  before: TContext,
  after: TContext,
  supersedes?: (observation: Observation, before: TContext, after: TContext) => string | undefined,
): { served?: string } | undefined {
  if (before.nextIncarnation === undefined && after.nextIncarnation !== undefined) return { served: before.uid };
  const served = supersedes?.(observation, before, after);
  return served === undefined ? undefined : { served };
}

/**
 * Incarnations are proven by the API server, not by whoever sent an observation: one that would have the machine take
 * a new incarnation is taken only once a read shows the served UID gone. A stale observation, or one made up by anyone
 * with access to the namespace, is dropped and logged.
 */
function provenIncarnation<TContext extends LifecycleContext>(
  event: { type: string },
  before: TContext,
  after: TContext,
  checks: {
    supersedes?: (observation: Observation, before: TContext, after: TContext) => string | undefined;
    subjectOf?: (observation: Observation) => ObjectRef;
    gone: ProvenGone;
  },
): boolean | Promise<boolean> {
  if (event.type !== 'observed') return true;
  const { observation } = event as unknown as { observation: Observation };
  const superseded = supersededUid(observation, before, after, checks.supersedes);
  if (superseded) return servedIncarnationGone(observation, superseded.served);
  const claim = goneClaim(observation, checks.subjectOf?.(observation));
  return claim ? checks.gone(claim) : true;
}

type ProvenGone = (claim: { subject: ObjectRef; uid: string }) => boolean | Promise<boolean>;

/**
 * A `gone` is believed only when the API server confirms it, whatever UID it carries: a forged one (issue 43) ended a
 * live Pod's lifecycle. One read per incarnation and run: the claims after a proven one cost nothing. A workflow
 * without the patch (its history recorded before) takes every gone as it came.
 */
function provenGone(patched: () => boolean): ProvenGone {
  const proven = new Set<string>();
  const check = async (claim: { subject: ObjectRef; uid: string }) => {
    const summary = `is ${describeRef(claim.subject)} ${claim.uid} gone, as an observation says?`;
    const held = await readIncarnation(claim.subject, summary);
    if (held === undefined) return false;
    if (claimHolds(claim, held)) return proven.add(claim.uid) !== undefined;
    log.warn(`dropped a gone observation of ${describeRef(claim.subject)} ${claim.uid}: the API server holds it`);
    return false;
  };
  // No promise where nothing is read (every promise costs the SDK a stack trace).
  return (claim) => (proven.has(claim.uid) || !patched() ? true : check(claim));
}

/**
 * Which incarnation the API server holds, retried until it answers: an observation is delivered once (the starter
 * sends it again only when the object changes), so one dropped for want of a read would be lost for good: a deletion
 * never taken, a finalizer never released. Undefined only when the read is refused for good (the worker may not read
 * the object: its RBAC), which no retry mends: the observation is then dropped and said, the workflow goes on.
 */
async function readIncarnation(ref: ObjectRef, summary: string): Promise<{ uid?: string } | undefined> {
  try {
    return await kubernetes.readIncarnation.executeWithOptions(
      { summary, retry: { maximumAttempts: Number.POSITIVE_INFINITY, maximumInterval: '1 minute' } },
      [{ ref }],
    );
  } catch (error) {
    log.warn(`dropped an observation of ${describeRef(ref)}: the API server refuses its read (${String(error)})`);
    return undefined;
  }
}

/** Asks the API server whether the incarnation `served` is gone, as the observation of another UID says. */
async function servedIncarnationGone({ ref, uid }: Observation, served: string | undefined): Promise<boolean> {
  const held = await readIncarnation(
    ref,
    `is ${describeRef(ref)} ${served ?? ''} gone, as an observation of ${uid} says?`,
  );
  if (held === undefined) return false;
  if (held.uid !== served) return true;
  log.warn(`dropped an observation of ${describeRef(ref)} as ${uid}: the API server still holds ${served ?? 'none'}`);
  return false;
}

const HISTORY_BOUND = 2_000;

const continueAsNewDue = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > HISTORY_BOUND;

/** The input of every lifecycle workflow; `persisted` is set only by continue-as-new. */
export interface LifecycleInput<TContext, TTimings> {
  ref: ObjectRef;
  timings?: Partial<TTimings>;
  /** MidoNet tenant of the object's resources (MIDONETKUBE_TENANT); the default tenant when absent. */
  tenant?: string;
  persisted?: PersistedMachine<TContext>;
  /**
   * The first observation: the starter's (it starts a workflow with it rather than signalling it, one event less), or
   * the next incarnation's, carried when the previous one finished. Checked like an `observed` signal.
   */
  observation?: Observation;
  /** The patches in effect from the start (patches.ts); absent in workflows started before the list existed. */
  patches?: readonly string[];
}

/** What the lifecycle machines' contexts have in common. */
export interface LifecycleContext {
  ref: ObjectRef;
  uid?: string;
  lastError?: LifecycleError;
  actions: ActionRecord[];
  nextIncarnation?: Observation;
}

/**
 * The incarnation a finished lifecycle hands to its next run: the newest one observed, the machine's own or one that
 * came after its end (the starter, sending in order, may have told of several meanwhile: a new one, its deletion,
 * another). A `gone` one too: the next run proves it with the API server, as every gone, and ends.
 */
export function nextIncarnation<TContext extends LifecycleContext>(
  interpreter: { context: TContext; unprocessed: readonly { type: string }[] },
  isIncarnation: (observation: Observation) => boolean = () => true,
): Observation | undefined {
  const { uid } = interpreter.context;
  let newest = interpreter.context.nextIncarnation;
  for (const event of interpreter.unprocessed) {
    const observation = (event as { observation?: Observation }).observation;
    if (event.type === 'observed' && observation && observation.uid !== uid && isIncarnation(observation))
      newest = observation;
  }
  return newest;
}

/**
 * Runs one lifecycle machine to its end and continues as new when history grows (at a state tagged
 * `continueAsNewSafe`, carrying `{ value, context }`) or when a new incarnation of the object waits: incarnations of
 * one name are handled in order by the same workflow id, the new one once the old one is finalized.
 */
export async function runLifecycle<
  TContext extends LifecycleContext,
  TEvent extends { type: string },
  TTimings,
  TParams,
>(
  { machine, version, migrate }: VersionedMachine<TContext, TEvent, TTimings, TParams>,
  input: LifecycleInput<TContext, TTimings>,
  // Its types come from the machine alone: the executors are checked against them, not inferred from.
  options: NoInfer<{
    executors: Executors<TParams, TEvent>;
    resources: (context: TContext) => ResourceView[];
    /** What the watcher observes of this kind of object: `observed` signals are checked against it. */
    projection: z.ZodType;
    /** Extra signal handlers, e.g. dependency changes. */
    setup?: (interpreter: Interpreter<TContext, TEvent, TParams>) => void;
    /** A lasting condition worth showing as the last error when there is none, e.g. what it waits for. */
    condition?: (context: TContext) => LifecycleError | undefined;
    /** Actions that call a backend through the server (regular activities, maybe retried for minutes): the state is published before they run. */
    slowActions?: readonly (keyof TParams & string)[];
    /** Actions the machine may call off while they run (the interpreter's `abandon`). */
    abandonable?: readonly (keyof TParams & string)[];
    /** Another record than the object's own an observation would replace: its UID, proven gone before (see above). */
    supersedes?: (observation: Observation, before: TContext, after: TContext) => string | undefined;
    /** The object whose deletion a `gone` observation claims, when not the one it names (a peer pod's Pod). */
    subjectOf?: (observation: Observation) => ObjectRef;
    /** Whether an observation is of the object whose incarnations the lifecycle serves (not a peer pod's PeerPod). */
    isIncarnation?: (observation: Observation) => boolean;
    /** Its machine proves a deletion with the API server before it acts on it (the object's finalization reads it). */
    provesDeletion?: true;
  }>,
): Promise<void> {
  // What the machine starts from, and what every next run (continue-as-new) is given again.
  const settings = { ref: input.ref, timings: input.timings, ...(input.tenant ? { tenant: input.tenant } : {}) };
  // Checked for what it refuses: a workflow started by a newer Steward, with patches this worker does not know.
  const patched = patchesOf(input.patches);
  const interpreter = new Interpreter<TContext, TEvent, TParams>(
    machine,
    input.persisted ? { persisted: migrate(input.persisted) } : { input: settings },
  );
  const view = (): LifecycleStateView => {
    const c = interpreter.context;
    const lastError = c.lastError ?? options.condition?.(c);
    return {
      ref: c.ref,
      ...(c.uid ? { uid: c.uid } : {}),
      state: stateName(interpreter.snapshot.value),
      resources: options.resources(c),
      ...(lastError ? { lastError } : {}),
      actions: c.actions,
    };
  };
  handleLifecycleMessages(interpreter, view, input.ref, options.projection, input.observation);
  options.setup?.(interpreter);
  if (input.persisted) interpreter.send({ type: 'resumed' } as Unstamped<TEvent>);

  // LifecycleState is upserted where it is seen: where the machine rests, and before a slow backend call that leaves a
  // published state (not at every step of a workflow task, which costs an event each and shows nobody anything). A
  // workflow's first slow call (a peer pod's VM) shows its state in the current details only: no LifecycleState yet
  // claims nothing, and the event it saves is a tenth of a peer pod's life.
  // A run continued as new has its predecessor's search attributes.
  const published = { state: workflowInfo().typedSearchAttributes.get(LifecycleState) };
  const gone = provenGone(() => !options.provesDeletion && patched('gone-proven'));
  await interpreter.run(options.executors, {
    admit: (event, before, after) =>
      provenIncarnation(event, before.context as TContext, after.context as TContext, {
        supersedes: options.supersedes,
        subjectOf: options.subjectOf,
        gone,
      }),
    onSnapshot: (_, settled) => publishState(view(), published, settled),
    beforeAction: (type) => {
      if ((options.slowActions as readonly string[] | undefined)?.includes(type))
        publishState(view(), published, published.state !== undefined);
    },
    shouldStop: () => continueAsNewDue() && interpreter.snapshot.hasTag('continueAsNewSafe'),
    ...(options.abandonable ? { abandonable: options.abandonable } : {}),
  });
  // The next run is started by this code, so with its patches.
  const nextRun = { ...settings, patches: KNOWN_PATCHES };
  // Handlers run synchronously; once they are done, nothing more is queued behind the machine's end.
  await condition(allHandlersFinished);
  const incarnation = interpreter.done ? nextIncarnation(interpreter, options.isIncarnation) : undefined;
  const next: LifecycleInput<TContext, TTimings> | undefined = !interpreter.done
    ? { ...nextRun, persisted: interpreter.persisted(version) as PersistedMachine<TContext> }
    : incarnation
      ? { ...nextRun, observation: incarnation }
      : undefined;
  if (next) {
    // Same workflow type and id: a Pod's lifecycle stays `podLifecycle` across runs.
    await continueAsNew<(input: LifecycleInput<TContext, TTimings>) => Promise<void>>(next);
  }
}
