import * as k8s from '@kubernetes/client-node';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { Logger } from 'pino';
import type { ActionResult } from '../../model/messages';
import { workflowId } from '../../model/naming';
import {
  objectPatch,
  resultAnnotations,
  UPDATES,
  type RequestResult,
  type UpdateArgs,
} from '../../model/operator-request';
import { OPERATOR_REQUEST_ANNOTATION } from '../../model/vocabulary';
import { executeUpdateWhenReady } from '../../platform/temporal-update';
import type { SourceEvent } from '../../platform/kubernetes/informer';
import type { SignalClient } from './handler';
import { operatorRequestOf, type OperatorRequestOf } from './projection';

/**
 * The leading starter relays the operators' requests written on objects (model/operator-request.ts) to their
 * workflows, as the Update each names under the request's id, so a request relayed twice (a new leader, a re-list
 * before the result was written) is taken once; then it writes the result in the request's place. A request Temporal
 * could not be asked about (the server down) stays on its object and is relayed at its next event or re-list.
 */
export interface OperatorRequestsOptions {
  kubeConfig: k8s.KubeConfig;
  client: SignalClient;
  clusterId?: string;
  isLeader: () => boolean;
  logger: Logger;
}

export interface OperatorRequests {
  observe(event: SourceEvent): void;
  /** Waits for the relays under way. */
  stop(): Promise<void>;
}

const FIELD_MANAGER = 'steward-starter';
const ACK_ATTEMPTS = 5;

export function createOperatorRequests(options: OperatorRequestsOptions): OperatorRequests {
  const objects = k8s.KubernetesObjectApi.makeApiClient(options.kubeConfig);
  const log = options.logger.child({ component: 'operator-requests' });
  const inFlight = new Map<string, Promise<void>>();

  /** The Update's answer, or why there is none; a failure that may pass (Temporal unreachable) is thrown. */
  async function send(id: string, request: string | undefined, update: UpdateArgs, by: string): Promise<RequestResult> {
    const definition = UPDATES[update.action] as UpdateDefinition<ActionResult, [UpdateArgs['args']]>;
    try {
      const handle = options.client.workflow.getHandle(id);
      const answer = await executeUpdateWhenReady(handle, definition, update.args, undefined, `request-${request}`);
      return { id: request, by, accepted: true, state: answer.state, message: answer.message };
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError)
        return { id: request, by, accepted: false, message: error.cause?.message ?? error.message };
      if (error instanceof WorkflowNotFoundError)
        return { id: request, by, accepted: false, message: `no workflow ${id}` };
      throw error;
    }
  }

  /** The result in the request's place, guarded by the version seen: a newer request is never overwritten. */
  async function acknowledge({ ref, request, resourceVersion }: OperatorRequestOf, result: RequestResult) {
    let version = resourceVersion;
    for (let attempt = 1; attempt <= ACK_ATTEMPTS; attempt++) {
      const patch = objectPatch(ref, resultAnnotations(result));
      // A merge patch: its nulls remove the request's annotations, which the client's type does not allow for.
      const body = { ...patch, metadata: { ...patch.metadata, resourceVersion: version } } as k8s.KubernetesObject;
      try {
        await objects.patch(body, undefined, undefined, FIELD_MANAGER, undefined, k8s.PatchStrategy.MergePatch);
        return;
      } catch (error) {
        if ((error as { code?: number }).code !== 409) throw error;
        const current = await objects.read(objectPatch(ref, {}));
        if (current.metadata?.annotations?.[OPERATOR_REQUEST_ANNOTATION] !== request.raw) return;
        version = current.metadata.resourceVersion;
      }
    }
  }

  async function relay(found: OperatorRequestOf) {
    const { request, by } = found;
    const id = workflowId(found.ref, options.clusterId);
    const result =
      'error' in request
        ? { id: request.id, by, accepted: false, message: request.error }
        : await send(id, request.id, request.update, by);
    log.info({ workflowId: id, ...result }, 'operator request relayed');
    await acknowledge(found, result);
  }

  return {
    observe(event) {
      if (!options.isLeader()) return;
      const found = operatorRequestOf(event);
      if (!found) return;
      const key = `${workflowId(found.ref)}\n${found.request.raw}`;
      if (inFlight.has(key)) return;
      const done = relay(found)
        .catch((error: unknown) => log.warn({ err: error, ref: found.ref }, 'operator request not relayed yet'))
        .finally(() => inFlight.delete(key));
      inFlight.set(key, done);
    },
    async stop() {
      await Promise.all(inFlight.values());
    },
  };
}
