import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { google } from '@temporalio/proto';
import type { UpdateDefinition } from '@temporalio/common';
import { backoffDelay, sleep, type Backoff } from './backoff';

/**
 * Operator Updates (cleanup, pause, resume, refresh) as every caller sends them. The server refuses an Update with
 * WorkflowNotReady while the workflow's last task failed or timed out (a worker killed or starved mid-task); the
 * task is retried by the server, so the Update is retried too, under one Update id so it is taken once at most.
 */

const FAILED_PRECONDITION = 9;
const NOT_READY_DETAIL = 'temporal.api.errordetails.v1.WorkflowNotReadyFailure';

/** The gRPC error under a client error, if any. */
function grpcCause(error: unknown): { code: number; metadata?: { get(key: string): unknown[] } } | undefined {
  for (let e = error; e instanceof Error; e = e.cause)
    if (typeof (e as { code?: unknown }).code === 'number' && 'metadata' in e)
      return e as unknown as { code: number; metadata?: { get(key: string): unknown[] } };
  return undefined;
}

/** Whether the server refused an Update because the workflow's task is failing, by the error's typed detail. */
export function isWorkflowNotReady(error: unknown): boolean {
  const grpc = grpcCause(error);
  if (grpc?.code !== FAILED_PRECONDITION) return false;
  const status = grpc.metadata?.get('grpc-status-details-bin')[0];
  if (!(status instanceof Uint8Array)) return false;
  return google.rpc.Status.decode(status).details.some((d) => d.type_url?.endsWith(NOT_READY_DETAIL));
}

export class WorkflowNotReadyError extends Error {
  constructor(workflowId: string, waitedMs: number, cause: unknown) {
    super(
      `${workflowId} did not take the update: its workflow task kept failing for ${Math.round(waitedMs / 1000)} s ` +
        '(a worker down or starved, or a bug: its history in the Temporal UI says which)',
      { cause },
    );
    this.name = 'WorkflowNotReadyError';
  }
}

export interface UpdateRetry {
  /** How long to keep retrying a refused Update. */
  timeoutMs: number;
  backoff: Backoff;
}

const defaultRetry: UpdateRetry = { timeoutMs: 60_000, backoff: { initialMs: 250, maxMs: 5_000 } };

/** `handle.executeUpdate`, retried while the server refuses it as not ready (see above). */
export async function executeUpdateWhenReady<Ret, Arg>(
  handle: WorkflowHandle,
  update: UpdateDefinition<Ret, [Arg]>,
  arg: Arg,
  retry: UpdateRetry = defaultRetry,
  /** A request's own id, where one asks for it by several routes (the starter relays it again after a restart). */
  updateId: string = randomUUID(),
): Promise<Ret> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await handle.executeUpdate(update, { args: [arg], updateId });
    } catch (error) {
      if (!isWorkflowNotReady(error)) throw error;
      const waited = Date.now() - started;
      if (waited >= retry.timeoutMs) throw new WorkflowNotReadyError(handle.workflowId, waited, error);
      await sleep(backoffDelay(retry.backoff, attempt));
    }
  }
}
