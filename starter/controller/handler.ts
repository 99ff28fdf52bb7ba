import {
  isGrpcServiceError,
  NamespaceNotFoundError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type WorkflowClient,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import type { Logger } from 'pino';
import { MAX_OBSERVATIONS_PER_SIGNAL, observedSignal, type Observation } from '../../model/messages';
import { describeRef, workflowId, type ObjectRef } from '../../model/naming';
import { KNOWN_PATCHES } from '../../model/patches';
import { K8sKind, K8sName, K8sNamespace, K8sUID } from '../../model/search-attributes';
import { backoffDelay, sleep, type Backoff } from '../../platform/backoff';
import type { WatchedKind } from '../../platform/kubernetes/kinds';
import type { Work } from './queue';

/** The part of the Temporal client the starter uses. */
export interface SignalClient {
  workflow: Pick<
    WorkflowClient,
    'start' | 'signalWithStart' | 'getHandle' | 'list' | 'withDeadline' | 'withAbortSignal'
  >;
}

export interface HandlerOptions {
  client: SignalClient;
  /** Where the workflows it starts run: the workers' task queue. */
  taskQueue: string;
  /** The cluster's prefix of the workflow ids (`inCluster`); none when absent. */
  clusterId?: string;
  workflowTypes: Readonly<Record<WatchedKind, string>>;
  /** MidoNet tenant given to every workflow it starts; the default tenant when absent. */
  tenant?: string;
  backoff: Backoff;
  /** Deadline of each call to Temporal: a call that hangs is retried like one that failed, never waited on for ever. */
  callTimeoutMs: number;
  logger: Logger;
  /** Checked before every attempt: a starter that is not the leader sends nothing. */
  isLeader: () => boolean;
  /** Each delivered Observation, how long its attempt took, and the run it went to when the call said. */
  onSent?: (obs: Observation, seconds: number, runId?: string) => void;
  /**
   * Every failed attempt, and how long it took; `permanent` ones are not retried (the next change or re-list sends
   * the object again).
   */
  onFailure?: (obs: Observation, error: unknown, permanent: boolean, seconds: number) => void;
}

export interface Handler {
  /** Sends the latest Observation of one incarnation, retrying transient failures; see `createHandler`. */
  deliver(pending: Map<string, Observation>, uid: string, signal: AbortSignal): Promise<void>;
  /** The queue's work: `deliver` each incarnation of one workflow id, in order. */
  drain: Work;
  /** Starts the workflow of an Observation's object with it in its input, once; false when it runs already. */
  start: (obs: Observation) => Promise<boolean>;
}

/** About 100 bytes each: a few MB for the largest cluster, and a starter that misses a `gone` cannot grow it for ever. */
const MAX_REMEMBERED_RUNNING = 50_000;

/** gRPC codes worth retrying: the server or the network may recover. Anything else is our mistake or config. */
const TRANSIENT_CODES = new Set([
  1, // CANCELLED
  2, // UNKNOWN
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  10, // ABORTED
  13, // INTERNAL
  14, // UNAVAILABLE
]);

export function isTransient(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause) {
    // A Temporal cluster whose database restarts says for a moment that the namespace is not found (the frontend
    // cannot read it); the starter could not have started without it, so it is taken as the outage it is.
    if (e instanceof NamespaceNotFoundError) return true;
    if (isGrpcServiceError(e)) return TRANSIENT_CODES.has(e.code);
  }
  // A ServiceError with no gRPC status is the connection failing underneath the call.
  return error instanceof ServiceError;
}

function searchAttributes(ref: ObjectRef, uid: string): SearchAttributePair[] {
  return [
    { key: K8sKind, value: ref.kind },
    ...(ref.namespace ? [{ key: K8sNamespace, value: ref.namespace }] : []),
    { key: K8sName, value: ref.name },
    { key: K8sUID, value: uid },
  ];
}

/** The workflow an Observation's object has: its id, where it runs, how it is listed, and its input. */
function workflowOf(
  obs: Observation,
  { taskQueue, clusterId, tenant }: Pick<HandlerOptions, 'taskQueue' | 'clusterId' | 'tenant'>,
) {
  return {
    options: {
      workflowId: workflowId(obs.ref, clusterId),
      taskQueue,
      staticSummary: describeRef(obs.ref),
      typedSearchAttributes: searchAttributes(obs.ref, obs.uid),
    },
    input: { ref: obs.ref, ...(tenant ? { tenant } : {}), patches: KNOWN_PATCHES },
  };
}

type SenderOptions = Pick<HandlerOptions, 'client' | 'taskQueue' | 'clusterId' | 'workflowTypes' | 'tenant' | 'logger'>;

/**
 * One attempt to deliver an Observation to the object's workflow.
 *
 * - An object seen for the first time starts its workflow with the observation in its input: one history event less
 *   than signal-with-start. When the workflow runs already (a new incarnation waits behind the old one, or this
 *   starter restarted), the start is refused and the observation goes by signal-with-start, as every later one of an
 *   incarnation whose workflow this starter started or signalled does.
 * - A `gone` object is only signalled: when no workflow is running for it there is nothing left to finalize
 *   (its Translations carry their own finalizers), and starting one just to tell it so would leave a stray run.
 */
function createSender(options: SenderOptions) {
  const { client, workflowTypes, logger } = options;
  // Incarnations whose workflow runs, as far as this starter knows. Only a hint (both ways of sending are right for any
  // incarnation), so it is bounded: the oldest is forgotten first.
  const running = new Set<string>();
  const remember = (uid: string) => {
    running.delete(uid);
    running.add(uid);
    if (running.size > MAX_REMEMBERED_RUNNING) running.delete(running.values().next().value as string);
  };

  async function tellGone(obs: Observation): Promise<undefined> {
    const id = workflowId(obs.ref, options.clusterId);
    running.delete(obs.uid);
    try {
      await client.workflow.getHandle(id).signal(observedSignal, obs);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      logger.debug({ workflowId: id }, 'gone object has no running workflow: nothing to tell');
    }
  }

  /** Starts the workflow with `obs` in its input: its run id; undefined when it runs already. */
  async function startRun(obs: Observation): Promise<string | undefined> {
    const workflow = workflowOf(obs, options);
    try {
      const handle = await client.workflow.start(workflowTypes[obs.ref.kind], {
        ...workflow.options,
        args: [{ ...workflow.input, observation: obs }],
      });
      return handle.firstExecutionRunId;
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      return undefined;
    }
  }
  const start = async (obs: Observation) => (await startRun(obs)) !== undefined;

  /**
   * Sends observations of one workflow in one signal, oldest first, when it runs already: false when it does not (a
   * gone object then has nothing to tell, and a new one needs its start), and the caller sends them one by one.
   */
  async function signalTogether(id: string, batch: Observation[]): Promise<boolean> {
    try {
      await client.workflow.getHandle(id).signal(observedSignal, ...batch);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
    for (const obs of batch) {
      if (obs.gone) running.delete(obs.uid);
      else remember(obs.uid);
    }
    return true;
  }

  /** Delivers `obs`: the run it went to, when the call said. */
  const sendOnce = async (obs: Observation): Promise<string | undefined> => {
    if (obs.gone) return tellGone(obs);
    let runId = running.has(obs.uid) ? undefined : await startRun(obs);
    if (runId === undefined) {
      const workflow = workflowOf(obs, options);
      const handle = await client.workflow.signalWithStart(workflowTypes[obs.ref.kind], {
        ...workflow.options,
        signal: observedSignal,
        signalArgs: [obs],
        args: [workflow.input],
      });
      runId = handle.signaledRunId;
    }
    remember(obs.uid);
    return runId;
  };
  return { sendOnce, signalTogether, start };
}

/**
 * The handler: turns an Observation into a signal to the object's workflow (see `createSender`).
 *
 * Retries re-read `pending` before every attempt, so a retry sends the newest Observation of the incarnation and a
 * burst during an outage goes out as one signal; the entry is removed only once that very Observation was delivered.
 */
export function createHandler(options: HandlerOptions): Handler {
  const { client, clusterId, backoff, callTimeoutMs, logger, isLeader, onSent, onFailure } = options;
  const { sendOnce, signalTogether, start } = createSender(options);
  /** Ends with `signal` (the queue cleared or stopped) or at the deadline (DEADLINE_EXCEEDED, retried). */
  const bounded = <T>(signal: AbortSignal, call: () => Promise<T>) =>
    client.workflow.withAbortSignal(signal, () => client.workflow.withDeadline(Date.now() + callTimeoutMs, call));

  async function deliver(pending: Map<string, Observation>, uid: string, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; ; ) {
      const obs = pending.get(uid);
      if (!obs || signal.aborted) return;
      if (!isLeader()) {
        // The next leader re-sends every object it knows; a follower keeps nothing.
        pending.delete(uid);
        return;
      }
      const began = performance.now();
      const seconds = () => (performance.now() - began) / 1000;
      try {
        const runId = await bounded(signal, () => sendOnce(obs));
        onSent?.(obs, seconds(), runId);
        if (pending.get(uid) === obs) pending.delete(uid);
        attempt = 0;
      } catch (error) {
        if (signal.aborted) return;
        const permanent = !isTransient(error);
        onFailure?.(obs, error, permanent, seconds());
        const fields = { workflowId: workflowId(obs.ref, clusterId), uid, err: error };
        if (permanent) {
          logger.error(
            fields,
            'signal failed and will not be retried; the object is sent again on its next change or re-list',
          );
          if (pending.get(uid) === obs) pending.delete(uid);
          return;
        }
        const delay = backoffDelay(backoff, attempt++);
        logger.warn({ ...fields, attempt, delayMs: delay }, 'signal failed; retrying');
        await sleep(delay, signal);
      }
    }
  }

  /**
   * Observations of one workflow that wait together go in one signal when it runs (one workflow task for all of them);
   * whatever this does not deliver is left in `pending` for `deliver`, one by one with its retries.
   */
  async function deliverTogether(pending: Map<string, Observation>, signal: AbortSignal): Promise<void> {
    const batch = [...pending.values()].slice(0, MAX_OBSERVATIONS_PER_SIGNAL);
    const id = batch[0] && workflowId(batch[0].ref, clusterId);
    if (batch.length < 2 || batch.some((obs) => workflowId(obs.ref, clusterId) !== id) || !isLeader()) return;
    const began = performance.now();
    const seconds = () => (performance.now() - began) / 1000;
    try {
      if (!(await bounded(signal, () => signalTogether(id!, batch)))) return;
    } catch (error) {
      if (signal.aborted) return;
      for (const obs of batch) onFailure?.(obs, error, false, seconds());
      logger.warn({ workflowId: id, err: error }, 'signal of several observations failed; sending them one by one');
      return;
    }
    const took = seconds();
    for (const obs of batch) {
      onSent?.(obs, took);
      if (pending.get(obs.uid) === obs) pending.delete(obs.uid);
    }
  }

  return {
    deliver,
    start: (obs) => client.workflow.withDeadline(Date.now() + callTimeoutMs, () => start(obs)),
    async drain(pending, signal) {
      await deliverTogether(pending, signal);
      // Map iteration visits entries added meanwhile, so a new incarnation queued during a send goes in this run.
      for (const uid of pending.keys()) await deliver(pending, uid, signal);
    },
  };
}
