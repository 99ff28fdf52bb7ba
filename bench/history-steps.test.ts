import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historySteps, stepEvents, stepsTable } from './history-steps';

const recorded = (name: string) =>
  (
    JSON.parse(readFileSync(join(__dirname, '..', 'test', 'replay', 'histories', `${name}.json`), 'utf8')) as {
      events: { eventType: string }[];
    }
  ).events;

describe('a history cut into its steps', () => {
  it('gives one step per workflow task, and every event to exactly one step', () => {
    const events = recorded('object-pod-deleted');
    const steps = historySteps(events);
    expect(steps).toHaveLength(3);
    expect(steps.reduce((sum, step) => sum + stepEvents(step), 0)).toBe(events.length);
    expect(steps[0]).toEqual({
      wokenBy: ['WORKFLOW_EXECUTION_STARTED'],
      task: 3,
      commands: [
        'MARKER_RECORDED (local syncObject)',
        'TIMER_STARTED (dependencyRetry)',
        'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES (LifecycleState)',
      ],
    });
    expect(steps[2]!.wokenBy).toEqual(['WORKFLOW_EXECUTION_SIGNALED (observed)']);
    expect(steps[2]!.commands.at(-1)).toBe('WORKFLOW_EXECUTION_COMPLETED');
  });

  it('counts an activity: scheduled by one step, its start and completion wake the next', () => {
    const steps = historySteps(recorded('deleted'));
    expect(steps[0]!.commands).toContain('ACTIVITY_TASK_SCHEDULED (pushTranslation)');
    expect(steps[1]!.wokenBy).toEqual(['ACTIVITY_TASK_STARTED', 'ACTIVITY_TASK_COMPLETED']);
  });

  it('reads the event types `temporal workflow show --output json` prints as well as the SDK`s', () => {
    const steps = historySteps([
      { eventType: 'WorkflowExecutionStarted' },
      { eventType: 'WorkflowTaskScheduled' },
      { eventType: 'WorkflowTaskStarted' },
      { eventType: 'WorkflowTaskCompleted' },
      { eventType: 'WorkflowExecutionCompleted' },
    ]);
    expect(steps).toEqual([
      { wokenBy: ['WORKFLOW_EXECUTION_STARTED'], task: 3, commands: ['WORKFLOW_EXECUTION_COMPLETED'] },
    ]);
  });

  it('prints a table with the total in its title', () => {
    expect(stepsTable('a Pod', historySteps(recorded('object-pod-deleted')))).toMatch(/^### a Pod: 21 events\n/);
  });
});
