import { initialTransition, type AnyMachineSnapshot, type AnyStateMachine, type EventObject } from 'xstate';
import { stepperOf } from '../../interpreter';

/**
 * Model-based testing support: every transition of a machine's reachable state space, found breadth-first by
 * sending every sample event in every state, through the same step the workflows take (`stepperOf`: so eventless
 * `always` steps settle exactly as they do there). States are told apart by `key`, which should keep only what
 * guards read, so the space stays finite.
 */
export interface Edge<TEvent> {
  from: AnyMachineSnapshot;
  event: TEvent;
  to: AnyMachineSnapshot;
  /** Types of the actions the transition asks the interpreter to run. */
  actions: string[];
}

export function exploreTransitions<TEvent extends EventObject>(
  machine: AnyStateMachine,
  input: unknown,
  events: readonly TEvent[],
  key: (snapshot: AnyMachineSnapshot) => string,
): Edge<TEvent>[] {
  const [initial] = initialTransition(machine, input);
  const step = stepperOf(machine);
  const seen = new Set([key(initial)]);
  const queue: AnyMachineSnapshot[] = [initial];
  const edges: Edge<TEvent>[] = [];
  // An index, not shift(): shifting a queue of tens of thousands of states is quadratic.
  for (let next = 0; next < queue.length; next++) {
    const from = queue[next]!;
    if (from.status === 'done') continue;
    for (const event of events) {
      const [to, actions] = step(from, event);
      if (to === from) continue;
      edges.push({ from, event, to, actions: actions.map((a) => a.type) });
      if (!seen.has(key(to))) {
        seen.add(key(to));
        queue.push(to);
      }
    }
  }
  return edges;
}
