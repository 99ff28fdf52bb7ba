// Where a peer pod's create spends its time, from its workflow's history: the Pod's create call returned → its
// workflow started (the starter's informer, its start) → its VM activity started (the workflow task, the activity's
// dispatch by the server) → that activity completed (the VM made and started, its PeerPod written). The bench's
// "converged" adds its own poll of the PeerPods to the last of them. Event times are the server's clock and the
// bench's Date.now() the same machine's.

/** A history event as the SDK's `fetchHistory()` returns it (a Timestamp) or as JSON (an ISO string). */
export interface TimedEvent {
  eventId?: unknown;
  eventTime?: string | { seconds?: unknown; nanos?: number | null } | null;
  workflowExecutionStartedEventAttributes?: unknown;
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  activityTaskStartedEventAttributes?: { scheduledEventId?: unknown } | null;
  activityTaskCompletedEventAttributes?: { scheduledEventId?: unknown } | null;
}

export interface PeerPodStages {
  /** The Pod's create call returned → its workflow started. */
  toWorkflow: number;
  /** Its workflow started → its VM activity's first attempt started. */
  toActivity: number;
  /** The VM activity's last attempt started → completed (the VM made and started, its PeerPod written). */
  activity: number;
}

const VM_ACTIVITY = 'cloudCreateAndRecordPodVm';

function msOf(time: TimedEvent['eventTime']): number | undefined {
  if (!time) return undefined;
  if (typeof time === 'string') return Date.parse(time);
  return Number(time.seconds) * 1000 + (time.nanos ?? 0) / 1e6;
}

/** The stages of one peer pod's create, in seconds; undefined when its history has no completed VM activity. */
export function peerPodStages(podCreatedMs: number, events: TimedEvent[]): PeerPodStages | undefined {
  const started = msOf(events.find((e) => e.workflowExecutionStartedEventAttributes)?.eventTime);
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === VM_ACTIVITY);
  if (started === undefined || !scheduled) return undefined;
  const id = String(scheduled.eventId);
  const attempt = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === id);
  const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
  const attemptMs = msOf(attempt?.eventTime);
  const completedMs = msOf(completed?.eventTime);
  if (attemptMs === undefined || completedMs === undefined) return undefined;
  return {
    toWorkflow: (started - podCreatedMs) / 1000,
    toActivity: (attemptMs - started) / 1000,
    activity: (completedMs - attemptMs) / 1000,
  };
}
