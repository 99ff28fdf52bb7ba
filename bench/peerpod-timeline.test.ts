import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Long from 'long';
import { peerPodStages, type TimedEvent } from './peerpod-timeline';
import { median, percentile } from './stats';

const recorded = (name: string) =>
  (
    JSON.parse(readFileSync(join(__dirname, '..', 'test', 'replay', 'histories', `${name}.json`), 'utf8')) as {
      events: TimedEvent[];
    }
  ).events;

describe("a peer pod's create cut into its stages", () => {
  it('reads them from a recorded history: workflow started 45.663, VM activity 45.898 → 48.987 (to the millisecond)', () => {
    const events = recorded('peerpod-libvirt-pod-deleted');
    const created = Date.parse('2026-12-03T03:12:45.500Z');
    const stages = peerPodStages(created, events)!;
    expect(stages.toWorkflow).toBeCloseTo(0.163, 3);
    expect(stages.toActivity).toBeCloseTo(0.235, 3);
    expect(stages.activity).toBeCloseTo(3.089, 3);
  });

  it('reads the Timestamps of fetchHistory() alike, and the last attempt of a retried activity', () => {
    const at = (ms: number) => ({ seconds: Long.fromNumber(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
    const events: TimedEvent[] = [
      { eventId: Long.fromNumber(1), eventTime: at(10_000), workflowExecutionStartedEventAttributes: {} },
      {
        eventId: Long.fromNumber(5),
        eventTime: at(10_200),
        activityTaskScheduledEventAttributes: { activityType: { name: 'cloudCreateAndRecordPodVm' } },
      },
      {
        eventId: Long.fromNumber(6),
        eventTime: at(14_000),
        activityTaskStartedEventAttributes: { scheduledEventId: Long.fromNumber(5) },
      },
      {
        eventId: Long.fromNumber(7),
        eventTime: at(16_500),
        activityTaskCompletedEventAttributes: { scheduledEventId: Long.fromNumber(5) },
      },
    ];
    expect(peerPodStages(9_000, events)).toEqual({ toWorkflow: 1, toActivity: 4, activity: 2.5 });
  });

  it('has none without a completed VM activity (a run that ended before its VM was made)', () => {
    const events = recorded('peerpod-libvirt-pod-deleted').filter((e) => !e.activityTaskCompletedEventAttributes);
    expect(peerPodStages(0, events)).toBeUndefined();
    expect(peerPodStages(0, recorded('object-pod-deleted'))).toBeUndefined();
  });
});

describe('summaries', () => {
  it('takes the median of an odd and an even count, and none of none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeUndefined();
  });

  it('takes a percentile by nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 0.99)).toBe(99);
    expect(percentile(sorted, 0.5)).toBe(50);
    expect(percentile([], 0.5)).toBe(0);
  });
});
