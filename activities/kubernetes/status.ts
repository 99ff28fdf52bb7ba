// A Translation's status (STYLE habit 9): observedGeneration, the backend resources with their state, and the
// Ready and Synced conditions, computed in one place from what the workflow knows. Transition times change only
// when a status or state changes, so `kubectl get` ages and watchers see real transitions, not rewrites.

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface ConditionInput {
  status: ConditionStatus;
  /** Short CamelCase reason, shared with the Event and the workflow's last error. */
  reason: string;
  message: string;
}

export interface Condition extends ConditionInput {
  type: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface ChildResourceInput {
  kind: string;
  id: string;
  state: string;
  lastTransitionTime?: string;
}

export interface ChildResource extends ChildResourceInput {
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface TranslationStatus {
  observedGeneration: number;
  childResources: ChildResource[];
  conditions: Condition[];
}

export interface StatusInput {
  generation: number;
  /** Absent: the ones there are kept (a large Translation's push writes its own record). */
  childResources?: ChildResourceInput[];
  /** With the ones there kept: none is claimed to be synced any more (what they hang off went away). */
  unverified?: boolean;
  ready: ConditionInput;
  synced: ConditionInput;
}

/** metav1.Time has second precision; writing it so keeps what we write equal to what we read back. */
export const kubeTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

export function nextStatus(
  previous: Partial<TranslationStatus> | undefined,
  input: StatusInput,
  now: string,
): TranslationStatus {
  const { generation } = input;
  const condition = (type: string, next: ConditionInput): Condition => {
    const before = previous?.conditions?.find((c) => c.type === type);
    const lastTransitionTime = before && before.status === next.status ? before.lastTransitionTime : now;
    return {
      type,
      status: next.status,
      reason: next.reason,
      message: next.message,
      lastTransitionTime,
      observedGeneration: generation,
    };
  };
  const known = new Map((previous?.childResources ?? []).map((c) => [`${c.kind}:${c.id}`, c]));
  const kept = (previous?.childResources ?? []).map((c) =>
    input.unverified && c.state === 'synced' ? { ...c, state: 'unverified', lastTransitionTime: now } : c,
  );
  if (!input.childResources)
    return {
      observedGeneration: generation,
      childResources: kept,
      conditions: [condition('Ready', input.ready), condition('Synced', input.synced)],
    };
  const childResources = input.childResources.map((child): ChildResource => {
    const before = known.get(`${child.kind}:${child.id}`);
    const kept = before && before.state === child.state ? before.lastTransitionTime : now;
    return {
      kind: child.kind,
      id: child.id,
      state: child.state,
      lastTransitionTime: child.lastTransitionTime ?? kept,
      observedGeneration: generation,
    };
  });
  return {
    observedGeneration: generation,
    childResources,
    conditions: [condition('Ready', input.ready), condition('Synced', input.synced)],
  };
}
