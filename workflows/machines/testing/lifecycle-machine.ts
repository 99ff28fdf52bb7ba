import {
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type ContextFrom,
  type EventFromLogic,
  type ExecutableActionsFrom,
  type InputFrom,
  type SnapshotFrom,
} from 'xstate';
import type { ActionRecord, CleanupRequest, OperatorRequest } from '../../../model/messages';
import { stateName, type CommonLifecycleEvent } from '../common';
import { exploreTransitions } from './explore';

/**
 * What the path tests of the lifecycle machines share: samples of the events every machine handles alike, their
 * reachable transitions typed as the machine's own, a scenario runner, and the check of the operator's actions.
 */

/**
 * One sample of each timer's and operator's event, in this order, with a cleanup of each mode in `cleanupModes`, and
 * each mode that gives up also said `evenIfLive`.
 */
export function timerAndOperatorEvents(
  at: string,
  request: OperatorRequest,
  cleanupModes: readonly CleanupRequest['mode'][],
): (CommonLifecycleEvent & { at: string })[] {
  return [
    { type: 'retry', at },
    { type: 'driftCheck', at },
    ...cleanupModes.flatMap((mode) =>
      (mode === 'retry' ? [{}] : [{}, { evenIfLive: true }]).map((live) => ({
        type: 'cleanup' as const,
        request: { ...request, mode, ...live },
        at,
      })),
    ),
    { type: 'pause', request, at },
    { type: 'resume', request, at },
    { type: 'refresh', request, at },
    { type: 'resumed', at },
  ];
}

export interface MachineEdge<TMachine extends AnyStateMachine> {
  from: SnapshotFrom<TMachine>;
  event: EventFromLogic<TMachine>;
  to: SnapshotFrom<TMachine>;
  /** Types of the actions the transition asks the interpreter to run. */
  actions: string[];
}

/** Every transition of the machine's reachable states (explore.ts), told apart by `key`. */
export function machineEdges<TMachine extends AnyStateMachine>(
  machine: TMachine,
  input: InputFrom<TMachine>,
  events: readonly EventFromLogic<TMachine>[],
  key: (snapshot: SnapshotFrom<TMachine>) => string,
): MachineEdge<TMachine>[] {
  return exploreTransitions(machine, input, events, (s) => key(s as SnapshotFrom<TMachine>)) as MachineEdge<TMachine>[];
}

/**
 * `run(...events)`: sends them from the machine's start and returns the state reached, its context, and the actions
 * of the last step as `describe` shows them.
 */
export function scenarioRunner<TMachine extends AnyStateMachine, TAction>(
  machine: TMachine,
  input: InputFrom<TMachine>,
  describe: (action: ExecutableActionsFrom<TMachine>) => TAction,
) {
  return (...sequence: EventFromLogic<TMachine>[]) => {
    let [snapshot, actions] = initialTransition(machine, input);
    for (const event of sequence) [snapshot, actions] = transition(machine, snapshot, event);
    const last = snapshot as AnyMachineSnapshot;
    return {
      state: stateName(last.value),
      context: last.context as ContextFrom<TMachine>,
      actions: actions.map(describe),
    };
  };
}

/**
 * A cleanup that gives up (`orphan`, `force`) ends the lifecycle, so it is taken only while the object is on its way
 * out (`ending`, as the test states it) or when the operator said `evenIfLive`; `retry` is taken regardless.
 */
export function expectGivingUpOnlyWhenEnding<TContext extends { actions: ActionRecord[] }>(
  edges: readonly {
    from: { context: TContext; value: unknown };
    event: { type: string; request?: unknown };
    to: { context: TContext };
  }[],
  ending: (context: TContext) => boolean,
): void {
  const givingUp = edges.filter((e) => {
    const request = e.event.request as CleanupRequest | undefined;
    return (
      e.event.type === 'cleanup' &&
      request?.mode !== 'retry' &&
      e.to.context.actions.length > e.from.context.actions.length
    );
  });
  expect(givingUp.length).toBeGreaterThan(0);
  const unsaid = givingUp.filter((e) => !ending(e.from.context) && !(e.event.request as CleanupRequest).evenIfLive);
  expect(
    unsaid.map((e) => `${JSON.stringify(e.from.value)} --cleanup ${(e.event.request as CleanupRequest).mode}-->`),
  ).toEqual([]);
  expect(givingUp.some((e) => !ending(e.from.context))).toBe(true);
}

/** Every operator action a machine accepts is recorded once, with who asked, why and when; others leave no record. */
export function expectOperatorActionsRecorded(
  edges: readonly {
    from: { context: { actions: ActionRecord[] } };
    event: { type: string };
    to: { context: { actions: ActionRecord[] } };
  }[],
  expected: { requestedBy: string; reason: string; at: string },
): void {
  for (const e of edges.filter((e) => ['cleanup', 'pause', 'resume', 'refresh'].includes(e.event.type))) {
    const grew = e.to.context.actions.length - e.from.context.actions.length;
    expect([0, 1]).toContain(grew);
    if (grew === 1) expect(e.to.context.actions.at(-1)).toMatchObject({ action: e.event.type, ...expected });
  }
}
