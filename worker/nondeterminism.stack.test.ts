import { WorkflowFailedError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { startInProcessWorker, waitFor, type InProcessWorker } from '../test/support';
import { WORKFLOW_FAILURE_ERROR_TYPES } from './index';
import { changesOnReplay } from './testing/nondeterministic-workflows';

const { EVENT_TYPE_WORKFLOW_TASK_FAILED } = temporal.api.enums.v1.EventType;

// Chaos seed 82: a Pod's run whose replay could not match its history was retried for ever and held its object's
// finalizers for good. Steward's Workers fail such a run instead, so the starter's repair can start it again.
describe('a workflow task that fails on nondeterminism', () => {
  const suffix = Date.now().toString(36);
  const workers: InProcessWorker[] = [];
  // No cache: every workflow task replays the history from its start, so the second one meets the changed path.
  const start = async (
    taskQueue: string,
    options: { workflowFailureErrorTypes?: typeof WORKFLOW_FAILURE_ERROR_TYPES },
  ) => {
    const worker = await startInProcessWorker({
      taskQueue,
      workflowsPath: require.resolve('./testing/nondeterministic-workflows'),
      activities: {},
      maxCachedWorkflows: 0,
      ...options,
    });
    workers.push(worker);
    return worker.client.workflow.start(changesOnReplay, { taskQueue, workflowId: `${taskQueue}/run` });
  };

  afterAll(async () => {
    for (const worker of workers) await worker.stop();
  });

  it("fails the run on Steward's Workers, saying why", async () => {
    const handle = await start(`nondeterminism-steward-${suffix}`, {
      workflowFailureErrorTypes: WORKFLOW_FAILURE_ERROR_TYPES,
    });
    const failure = await handle.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(String((failure as WorkflowFailedError).cause?.message)).toMatch(
      /Nondeterminism error: No command scheduled for event HistoryEvent\(id: \d+, TimerStarted\)/,
    );
    expect((await handle.describe()).status.name).toBe('FAILED');
  });

  it("is retried for ever, its run left running, on the SDK's defaults (what Steward's Workers did before)", async () => {
    const handle = await start(`nondeterminism-default-${suffix}`, {});
    const failed = await waitFor(
      'a failed workflow task',
      async () => (await handle.fetchHistory()).events?.find((e) => e.eventType === EVENT_TYPE_WORKFLOW_TASK_FAILED),
      20_000,
    );
    expect(failed.workflowTaskFailedEventAttributes?.failure?.message).toMatch(/Nondeterminism error/);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('nondeterminism test done');
  });
});
