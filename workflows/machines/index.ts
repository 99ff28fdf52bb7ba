import type { AnyStateMachine } from 'xstate';
import type { LifecycleKind } from '../../model/naming';
import { objectMachine } from './object';
import { peerPodMachine } from './peerpod';
import { translationMachine } from './translation';

/** The machine of each lifecycle kind, whose states `steward_objects` counts. */
const lifecycleMachines: Record<LifecycleKind, AnyStateMachine> = {
  Node: objectMachine,
  Pod: objectMachine,
  Service: objectMachine,
  Endpoints: objectMachine,
  Translation: translationMachine,
  PeerPod: peerPodMachine,
};

/** A state node's states that are not nested further, as `stateName` says them (`own.tracking`). */
const leafStates = (node: AnyStateMachine['root']): string[] =>
  Object.entries(node.states).flatMap(([name, child]) =>
    Object.keys(child.states).length === 0 ? [name] : leafStates(child).map((leaf) => `${name}.${leaf}`),
  );

/** A kind's states, one count query each. A state not listed still shows, summed as `other`. */
export const lifecycleStates = (kind: LifecycleKind): readonly string[] => leafStates(lifecycleMachines[kind].root);
