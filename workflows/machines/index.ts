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

/** A kind's top-level states, one count query each. A state not listed still shows, summed as `other`. */
export const lifecycleStates = (kind: LifecycleKind): readonly string[] =>
  Object.keys(lifecycleMachines[kind].root.states);
