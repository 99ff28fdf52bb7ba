import {
  NamespaceNotFoundError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type WorkflowClient,
  type WorkflowHandle,
} from '@temporalio/client';
import type { Observation } from '../../model/messages';
import { KNOWN_PATCHES } from '../../model/patches';
import { createHandler, isTransient, type HandlerOptions, type SignalClient } from './handler';
import { defaultWorkflowTypes } from './workflow-types';
import { observation, partialFake, silentLogger } from './testing/fakes';

/** What the Temporal client throws when the server answers with a gRPC status. */
const grpcError = (code: number) =>
  new ServiceError('Failed to signalWithStart', {
    cause: Object.assign(new Error(`${code} grpc`), { code, details: 'x', metadata: {} }),
  });
const UNAVAILABLE = 14;
const INVALID_ARGUMENT = 3;

/** The client's verbs a test names, plus deadline and abort scopes that only record what they were given. */
function temporal(
  workflow: Partial<SignalClient['workflow']>,
  scopes: { deadlines: number[] } = { deadlines: [] },
): SignalClient {
  const scoped: Pick<SignalClient['workflow'], 'withDeadline' | 'withAbortSignal'> = {
    withDeadline: (deadline, fn) => (scopes.deadlines.push(Number(deadline)), fn()),
    withAbortSignal: (_signal, fn) => fn(),
  };
  return { workflow: partialFake<SignalClient['workflow']>('client.workflow', { ...scoped, ...workflow }) };
}

function handlerWith(client: SignalClient, overrides: Partial<HandlerOptions> = {}) {
  const sent: Observation[] = [];
  const failures: { permanent: boolean }[] = [];
  const handler = createHandler({
    client,
    taskQueue: 'steward',
    workflowTypes: defaultWorkflowTypes,
    backoff: { initialMs: 1, maxMs: 4 },
    callTimeoutMs: 10_000,
    logger: silentLogger,
    isLeader: () => true,
    onSent: (obs) => sent.push(obs),
    onFailure: (_obs, _error, permanent) => failures.push({ permanent }),
    ...overrides,
  });
  return { handler, sent, failures };
}

/** A client verb that runs `fn` and answers like the real one: resolves, or rejects with what `fn` threw. */
const verb =
  <A extends unknown[]>(fn: (...args: A) => void) =>
  (...args: A): Promise<void> =>
    new Promise((resolve) => resolve(fn(...args)));

/** One call that sends an Observation: a start with it in the input, or a signal-with-start. */
interface Sending {
  verb: 'start' | 'signalWithStart';
  type: string;
  options: { args: [Record<string, unknown>]; signalArgs?: [Observation] } & Record<string, unknown>;
  obs: Observation;
}

/** Both verbs that send an Observation, answered by `fn` (which may throw what the server would). */
function sending(fn: (call: Sending) => void): Partial<SignalClient['workflow']> {
  // Each answers with the handle of run `run-1`.
  const as = (v: Sending['verb']) => async (type: string, options: Sending['options']) => {
    const obs = options.signalArgs?.[0] ?? (options.args[0].observation as Observation);
    await verb(fn)({ verb: v, type, options, obs });
    return { firstExecutionRunId: 'run-1', signaledRunId: 'run-1' };
  };
  return {
    start: as('start') as unknown as WorkflowClient['start'],
    signalWithStart: as('signalWithStart') as unknown as WorkflowClient['signalWithStart'],
  };
}

const pendingOf = (...list: Observation[]) => new Map(list.map((o) => [o.uid, o]));
const live = () => new AbortController().signal;

describe('handler', () => {
  it('starts the workflow of an incarnation seen first with the Observation in its input, with its type, id, task queue, summary, search attributes and patches', async () => {
    const calls: Sending[] = [];
    const { handler, sent } = handlerWith(temporal(sending((call) => void calls.push(call))));
    const node = observation({ ref: { kind: 'Node', name: 'node-1' }, uid: 'n-1' });
    const pending = pendingOf(node);
    await handler.drain(pending, live());

    expect(sent).toEqual([node]);
    expect(pending.size).toBe(0);
    const [{ verb: used, type, options }] = calls as [Sending];
    expect({ used, type }).toEqual({ used: 'start', type: 'nodeLifecycle' });
    expect(options).toMatchObject({ workflowId: 'node/node-1', taskQueue: 'steward', staticSummary: 'Node node-1' });
    expect(options.args).toEqual([{ ref: node.ref, patches: KNOWN_PATCHES, observation: node }]);
    // A Node has no namespace: no K8sNamespace attribute rather than an empty one.
    expect(
      (options.typedSearchAttributes as { key: { name: string }; value: string }[]).map(
        (p) => `${p.key.name}=${p.value}`,
      ),
    ).toEqual(['K8sKind=Node', 'K8sName=node-1', 'K8sUID=n-1']);
  });

  it('signals (with start) every later Observation of an incarnation whose workflow it started', async () => {
    const calls: Sending[] = [];
    const { handler } = handlerWith(temporal(sending((call) => void calls.push(call))));
    await handler.drain(pendingOf(observation({ projection: { v: 1 } })), live());
    await handler.drain(pendingOf(observation({ projection: { v: 2 } })), live());
    expect(calls.map((c) => [c.verb, c.obs.projection])).toEqual([
      ['start', { v: 1 }],
      ['signalWithStart', { v: 2 }],
    ]);
    const { options } = calls[1] as Sending;
    expect((options.signal as { name: string }).name).toBe('observed');
    expect(options.args).toEqual([{ ref: observation().ref, patches: KNOWN_PATCHES }]);
  });

  it('signals (with start) when the workflow runs already: an older incarnation finalizing, or started before this starter', async () => {
    const calls: Sending[] = [];
    const client = temporal(
      sending((call) => {
        calls.push(call);
        if (call.verb === 'start')
          throw new WorkflowExecutionAlreadyStartedError('already started', 'pod/default/web', 'podLifecycle');
      }),
    );
    const { handler, sent, failures } = handlerWith(client);
    await handler.drain(pendingOf(observation({ projection: { v: 1 } })), live());
    await handler.drain(pendingOf(observation({ projection: { v: 2 } })), live());
    expect(calls.map((c) => [c.verb, c.obs.projection])).toEqual([
      ['start', { v: 1 }],
      ['signalWithStart', { v: 1 }],
      ['signalWithStart', { v: 2 }],
    ]);
    expect({ sent: sent.length, failures }).toEqual({ sent: 2, failures: [] });
  });

  it('forgets an incarnation once it is gone: the same uid seen again (a re-list after a restore) starts a workflow again', async () => {
    const calls: string[] = [];
    const client = temporal({
      ...sending((call) => void calls.push(call.verb)),
      getHandle: () => partialFake<WorkflowHandle>('handle', { signal: verb(() => void calls.push('signal')) }),
    });
    const { handler } = handlerWith(client);
    await handler.drain(pendingOf(observation()), live());
    await handler.drain(pendingOf(observation({ gone: true })), live());
    await handler.drain(pendingOf(observation()), live());
    expect(calls).toEqual(['start', 'signal', 'start']);
  });

  it('gives every call to Temporal a deadline, so a call that hangs fails (DEADLINE_EXCEEDED) and is retried', async () => {
    const scopes = { deadlines: [] as number[] };
    const client = temporal(
      sending(() => undefined),
      scopes,
    );
    const { handler } = handlerWith(client);
    const before = Date.now();
    await handler.drain(pendingOf(observation()), live());
    expect(scopes.deadlines).toHaveLength(1);
    expect(scopes.deadlines[0]).toBeGreaterThanOrEqual(before + 10_000);
    expect(scopes.deadlines[0]).toBeLessThanOrEqual(Date.now() + 10_000);
  });

  it("gives the workflow the cluster's MidoNet tenant when one is configured", async () => {
    const calls: Sending[] = [];
    const { handler } = handlerWith(temporal(sending((call) => void calls.push(call))), { tenant: 'team-a' });
    const pod = observation({ ref: { kind: 'Pod', namespace: 'default', name: 'web' }, uid: 'p-1' });
    await handler.drain(pendingOf(pod), live());
    expect(calls[0]?.options.args).toEqual([
      { ref: pod.ref, tenant: 'team-a', patches: KNOWN_PATCHES, observation: pod },
    ]);
  });

  // A server that fails the first `failingCalls` calls with `failWith`: how many calls, deliveries and failures follow.
  it.each([
    {
      what: 'retries transient failures with backoff until the signal goes through, and sends it once',
      failWith: UNAVAILABLE,
      failingCalls: 2,
      expected: { calls: 3, sent: 1, failures: [{ permanent: false }, { permanent: false }], left: 0 },
    },
    {
      what: 'does not retry a permanent failure, and reports it so the predicate lets the object through next time',
      failWith: INVALID_ARGUMENT,
      failingCalls: Infinity,
      expected: { calls: 1, sent: 0, failures: [{ permanent: true }], left: 0 },
    },
  ])('$what', async ({ failWith, failingCalls, expected }) => {
    let calls = 0;
    const client = temporal(
      sending(() => {
        if (++calls <= failingCalls) throw grpcError(failWith);
      }),
    );
    const { handler, sent, failures } = handlerWith(client);
    const pending = pendingOf(observation());
    await handler.drain(pending, live());
    expect({ calls, sent: sent.length, failures, left: pending.size }).toEqual(expected);
  });

  it('sends the newest Observation of the object on retry, never an outdated one, and never drops the newest', async () => {
    const pending = pendingOf(observation({ projection: { v: 1 } }));
    const attempted: unknown[] = [];
    const client = temporal(
      sending(({ obs }) => {
        attempted.push(obs.projection);
        if (attempted.length === 1) {
          // The object changed while the server was unavailable.
          pending.set('uid-1', observation({ projection: { v: 2 } }));
          throw grpcError(UNAVAILABLE);
        }
      }),
    );
    const { handler, sent } = handlerWith(client);
    await handler.drain(pending, live());
    expect(attempted).toEqual([{ v: 1 }, { v: 2 }]);
    expect(sent.map((o) => o.projection)).toEqual([{ v: 2 }]);
    expect(pending.size).toBe(0);
  });

  it('sends again when a newer Observation arrived while the previous one was in flight', async () => {
    const pending = pendingOf(observation({ projection: { v: 1 } }));
    const client = temporal(
      sending(({ obs }) => {
        if ((obs.projection as { v: number }).v === 1) pending.set('uid-1', observation({ projection: { v: 2 } }));
      }),
    );
    const { handler, sent } = handlerWith(client);
    await handler.drain(pending, live());
    expect(sent.map((o) => o.projection)).toEqual([{ v: 1 }, { v: 2 }]);
  });

  it('tells a gone object with a plain signal, and a workflow that is not running means nothing to tell', async () => {
    const signalled: unknown[] = [];
    const handle = (id: string) =>
      partialFake<WorkflowHandle>(`handle(${id})`, {
        signal: verb((_def: unknown, obs: Observation) => {
          signalled.push([id, obs.gone]);
          if (id === 'pod/default/never-started') throw new WorkflowNotFoundError('not found', id, undefined);
        }) as unknown as WorkflowHandle['signal'],
      });
    // No start nor signalWithStart: a gone object must never start a workflow.
    const client = temporal({ getHandle: handle });
    const { handler, sent, failures } = handlerWith(client);
    const pending = pendingOf(
      observation({ gone: true }),
      observation({ gone: true, uid: 'uid-2', ref: { kind: 'Pod', namespace: 'default', name: 'never-started' } }),
    );
    await handler.drain(pending, live());
    expect(signalled).toEqual([
      ['pod/default/web', true],
      ['pod/default/never-started', true],
    ]);
    expect({ sent: sent.length, failures: failures.length, left: pending.size }).toEqual({
      sent: 2,
      failures: 0,
      left: 0,
    });
  });

  describe('observations of one workflow that wait together', () => {
    const peerPod = { kind: 'PeerPod' as const, namespace: 'default', name: 'vm-pod' };
    // A peer pod's Pod gone, and its PeerPod marked for deletion by the garbage collector 30 ms later.
    const together = () =>
      pendingOf(
        observation({ ref: peerPod, uid: 'pod-uid', gone: true }),
        observation({ ref: peerPod, uid: 'peerpod-uid', deleting: true }),
      );
    /** A handle whose `signal` records each call's observations and answers with what `fn` throws. */
    const handles = (calls: Observation[][], fn: (observations: Observation[]) => void = () => undefined) => ({
      getHandle: (id: string) =>
        partialFake<WorkflowHandle>(`handle(${id})`, {
          signal: verb((_def: unknown, ...observations: Observation[]) => {
            calls.push(observations);
            fn(observations);
          }),
        }),
    });

    it('go in one signal, oldest first, when the workflow runs (one workflow task for both)', async () => {
      const calls: Observation[][] = [];
      const { handler, sent, failures } = handlerWith(temporal(handles(calls)));
      const pending = together();
      await handler.drain(pending, live());
      expect(calls.map((c) => c.map((o) => o.uid))).toEqual([['pod-uid', 'peerpod-uid']]);
      expect({ sent: sent.length, failures: failures.length, left: pending.size }).toEqual({
        sent: 2,
        failures: 0,
        left: 0,
      });
    });

    it('go one by one when the workflow does not run: the gone one has nothing to tell, the other starts it', async () => {
      const calls: Observation[][] = [];
      const started: Sending[] = [];
      const client = temporal({
        ...handles(calls, () => {
          throw new WorkflowNotFoundError('not found', 'peerpod/default/vm-pod', undefined);
        }),
        ...sending((call) => void started.push(call)),
      });
      const { handler, sent } = handlerWith(client);
      const pending = together();
      await handler.drain(pending, live());
      expect(calls.map((c) => c.map((o) => o.uid))).toEqual([['pod-uid', 'peerpod-uid'], ['pod-uid']]);
      expect(started.map((c) => [c.verb, c.obs.uid])).toEqual([['start', 'peerpod-uid']]);
      expect({ sent: sent.length, left: pending.size }).toEqual({ sent: 2, left: 0 });
    });

    it('go one by one, each with its retries, when the signal of both fails', async () => {
      const calls: Observation[][] = [];
      const client = temporal({
        ...handles(calls, (observations) => {
          if (observations.length > 1) throw grpcError(UNAVAILABLE);
        }),
        ...sending(() => undefined),
      });
      const { handler, sent, failures } = handlerWith(client);
      const pending = together();
      await handler.drain(pending, live());
      expect(calls.map((c) => c.map((o) => o.uid))).toEqual([['pod-uid', 'peerpod-uid'], ['pod-uid']]);
      expect({ sent: sent.length, failures: failures.length, left: pending.size }).toEqual({
        sent: 2,
        failures: 2,
        left: 0,
      });
    });
  });

  it('sends nothing when not the leader (the fake client has no verbs at all) and keeps nothing', async () => {
    const { handler, sent } = handlerWith(temporal({}), { isLeader: () => false });
    const pending = pendingOf(observation());
    await handler.drain(pending, live());
    expect({ sent: sent.length, left: pending.size }).toEqual({ sent: 0, left: 0 });
  });

  it('stops retrying when aborted (leadership lost, shutdown) and leaves the Observation where it was', async () => {
    const controller = new AbortController();
    let calls = 0;
    const client = temporal(
      sending(() => {
        calls++;
        controller.abort();
        throw grpcError(UNAVAILABLE);
      }),
    );
    const { handler } = handlerWith(client, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    const pending = pendingOf(observation());
    await handler.drain(pending, controller.signal);
    expect({ calls, left: pending.size }).toEqual({ calls: 1, left: 1 });
  });

  it.each([
    { what: 'UNAVAILABLE (server down or restarting) is transient', error: grpcError(14), transient: true },
    { what: 'DEADLINE_EXCEEDED is transient', error: grpcError(4), transient: true },
    { what: 'RESOURCE_EXHAUSTED (rate limited) is transient', error: grpcError(8), transient: true },
    {
      what: 'INVALID_ARGUMENT (e.g. an unregistered search attribute) is permanent',
      error: grpcError(3),
      transient: false,
    },
    { what: 'NOT_FOUND is permanent', error: grpcError(5), transient: false },
    {
      what: 'namespace not found is transient (a cluster says so while its database restarts)',
      error: new NamespaceNotFoundError('default'),
      transient: true,
    },
    {
      what: 'a ServiceError with no gRPC status (connection failed underneath) is transient',
      error: new ServiceError('boom'),
      transient: true,
    },
    {
      what: 'any other error (a bug of ours, a payload that does not convert) is permanent',
      error: new TypeError('x'),
      transient: false,
    },
  ])('$what', ({ error, transient }) => {
    expect(isTransient(error)).toBe(transient);
  });
});

describe('handler timing, for the send latency metric', () => {
  it('tells how long each attempt took: the failed one that is retried, then the one that delivers', async () => {
    let calls = 0;
    const timed: [string, number][] = [];
    const slow = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const client = temporal({
      start: (async () => {
        await slow(30);
        if (++calls === 1) throw grpcError(UNAVAILABLE);
        return { firstExecutionRunId: 'run-1' };
      }) as unknown as WorkflowClient['start'],
    });
    const { handler } = handlerWith(client, {
      onSent: (_obs, seconds) => timed.push(['sent', seconds]),
      onFailure: (_obs, _error, permanent, seconds) => timed.push([permanent ? 'permanent' : 'transient', seconds]),
    });
    await handler.drain(pendingOf(observation()), live());
    expect(timed.map(([what]) => what)).toEqual(['transient', 'sent']);
    for (const [, seconds] of timed) expect(seconds).toBeGreaterThanOrEqual(0.025);
    for (const [, seconds] of timed) expect(seconds).toBeLessThan(1);
  });
});
