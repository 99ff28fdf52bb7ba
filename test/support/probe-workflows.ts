import {
  ApplicationFailure,
  condition,
  defineSignal,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import {
  cleanupRequest,
  cleanupUpdate,
  operatorRequestSchema,
  pauseUpdate,
  refreshUpdate,
  resumeUpdate,
  stateQuery,
  type ActionRecord,
  type ActionResult,
  type LifecycleStateView,
  type OperatorRequest,
} from '../../model/messages';
import type { ObjectRef } from '../../model/naming';
import type { testActivities } from './probe-activities';

/** Workflows for the worker's and the CLI's tests: the real lifecycle workflows are not needed to test those. */
const { testEcho, testFail } = proxyActivities<typeof testActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

export async function echoOnce(text: string): Promise<string> {
  return testEcho({ text });
}

export async function failOnce(): Promise<void> {
  await testFail({});
}

export const finish = defineSignal('finish');

/**
 * Under the real Pod workflow's type name, for a starter's start to run on a probe worker: ends at once, so that its
 * RunWorkflow span ends and is sent.
 */
export async function podLifecycle(): Promise<void> {}

const unregisteredKey = defineSearchAttributeKey('StewardTestUnregistered', SearchAttributeType.KEYWORD);

/** A stand-in lifecycle workflow that only answers the `state` query with `view`, until `finish`. */
export async function stateStandIn(view: LifecycleStateView): Promise<void> {
  let finished = false;
  setHandler(stateQuery, () => view);
  setHandler(finish, () => void (finished = true));
  await condition(() => finished);
}

/**
 * A stand-in lifecycle workflow that starts `stuck`, answers the `state` query and takes the operator Updates with
 * validators like the real ones: cleanup only when stuck, resume only when paused. Until `refuseCleanupTasksUntil`
 * (epoch ms), the server refuses to complete a workflow task that carries a cleanup, as it does when a task's
 * completion fails its checks while an Update is in it.
 */
export async function operatorStandIn(ref: ObjectRef, { refuseCleanupTasksUntil = 0 } = {}): Promise<void> {
  const view: LifecycleStateView = {
    ref,
    uid: 'uid-1',
    state: 'stuck',
    resources: [
      {
        kind: 'Port',
        id: '3f2c0000-0000-5000-8000-000000000001',
        state: 'synced',
        lastTransitionTime: '2025-01-01T00:00:00Z',
      },
      { kind: 'HostInterfacePort', id: '3f2c0000-0000-5000-8000-000000000002', state: 'failed' },
    ],
    lastError: { reason: 'MidonetUnavailable', message: 'MidoNet API did not answer', at: '2025-01-01T00:00:01Z' },
    actions: [],
  };
  let beforePause = view.state;
  let finished = false;
  setHandler(stateQuery, () => view);
  setHandler(finish, () => void (finished = true));

  const act = (
    action: ActionRecord['action'],
    request: OperatorRequest & { mode?: ActionRecord['mode'] },
    next: string,
    message: string,
  ): ActionResult => {
    const state = view.state;
    view.actions.push({
      action,
      mode: request.mode,
      requestedBy: request.requestedBy,
      reason: request.reason,
      at: new Date(Date.now()).toISOString(),
    });
    view.state = next;
    return { accepted: true, state, message };
  };
  const validRequest = (schema: typeof operatorRequestSchema | typeof cleanupRequest, request: unknown) => {
    const parsed = schema.safeParse(request);
    if (!parsed.success)
      throw ApplicationFailure.nonRetryable(parsed.error.issues.map((i) => i.message).join('; '), 'InvalidRequest');
  };

  setHandler(
    cleanupUpdate,
    (request) => {
      // A search attribute the namespace does not have: the server fails the task's completion (BadSearchAttributes).
      if (Date.now() < refuseCleanupTasksUntil) upsertSearchAttributes([{ key: unregisteredKey, value: 'x' }]);
      return act(
        'cleanup',
        request,
        request.mode === 'retry' ? 'pushing' : 'done',
        `cleanup (${request.mode}) started`,
      );
    },
    {
      validator: (request) => {
        validRequest(cleanupRequest, request);
        if (view.state !== 'stuck')
          throw ApplicationFailure.nonRetryable(
            `cleanup is for a stuck ${ref.kind}; ${workflowInfo().workflowId} is ${view.state}`,
            'NotAllowed',
          );
      },
    },
  );
  setHandler(
    pauseUpdate,
    (request) => {
      beforePause = view.state;
      return act('pause', request, 'paused', 'paused');
    },
    { validator: (request) => validRequest(operatorRequestSchema, request) },
  );
  setHandler(resumeUpdate, (request) => act('resume', request, beforePause, 'resumed'), {
    validator: (request) => {
      validRequest(operatorRequestSchema, request);
      if (view.state !== 'paused')
        throw ApplicationFailure.nonRetryable(
          `resume is for a paused workflow; this one is ${view.state}`,
          'NotAllowed',
        );
    },
  });
  setHandler(refreshUpdate, (request) => act('refresh', request, view.state, 're-observing the backend'), {
    validator: (request) => validRequest(operatorRequestSchema, request),
  });

  await condition(() => finished);
}
