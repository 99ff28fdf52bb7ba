import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { startInProcessWorker, type InProcessWorker } from '../test/support';
import { cancelSignal, goSignal, interpreterToy, periodicTimerToy } from './testing/interpreter-workflows';

const { EVENT_TYPE_TIMER_STARTED, EVENT_TYPE_TIMER_FIRED, EVENT_TYPE_TIMER_CANCELED } = temporal.api.enums.v1.EventType;

/** The interpreter on its own, on the stack's real Temporal server, with a toy machine (workflows/testing). */
describe('interpreter', () => {
  const taskQueue = `interpreter-${Date.now()}`;
  let client: Client;
  let worker: InProcessWorker;

  beforeAll(async () => {
    worker = await startInProcessWorker({
      taskQueue,
      workflowsPath: require.resolve('./testing/interpreter-workflows'),
      activities: {
        work: async ({ fail }: { fail: boolean }) => {
          if (fail) throw ApplicationFailure.nonRetryable('the backend said no', 'ToyRefused');
          return Promise.resolve(42);
        },
      },
    });
    client = worker.client;
  });

  afterAll(() => worker?.stop());

  const start = (id: string, input: Parameters<typeof interpreterToy>[0]) =>
    client.workflow.start(interpreterToy, { taskQueue, workflowId: `${taskQueue}/${id}`, args: [input] });

  it('runs an action as an activity, feeds its result back as an event stamped with workflow time, and fires a Temporal timer', async () => {
    const handle = await start('ok', { fail: false });
    await handle.signal(goSignal);
    const result = await handle.result();
    expect(result).toEqual({ value: 'finished', log: ['go@stamped', 'worked=42@stamped', 'tick@stamped'] });
    const types = (await handle.fetchHistory()).events?.map((e) => e.eventType) ?? [];
    expect(types).toContain(EVENT_TYPE_TIMER_STARTED);
    expect(types).toContain(EVENT_TYPE_TIMER_FIRED);
  });

  it('turns a failed activity into an actionFailed event with its type as reason and its message', async () => {
    const handle = await start('fail', { fail: true });
    await handle.signal(goSignal);
    expect(await handle.result()).toEqual({
      value: 'failed',
      log: ['go@stamped', 'actionFailed:ToyRefused:the backend said no@stamped'],
    });
  });

  it('cancels a timer the machine cancels (no TIMER_FIRED, one TIMER_CANCELED)', async () => {
    const handle = await start('cancel', { fail: false });
    await handle.signal(goSignal);
    for (
      let i = 0;
      i < 50 && !(await handle.fetchHistory()).events?.some((e) => e.eventType === EVENT_TYPE_TIMER_STARTED);
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    await handle.signal(cancelSignal);
    expect((await handle.result()).value).toBe('cancelled');
    const types = (await handle.fetchHistory()).events?.map((e) => e.eventType) ?? [];
    expect(types).toContain(EVENT_TYPE_TIMER_CANCELED);
    expect(types).not.toContain(EVENT_TYPE_TIMER_FIRED);
  });

  it('stops when asked and continues from the persisted { value, context } in a new run', async () => {
    const first = await start('persist-1', { fail: false, stopAfterWork: true });
    await first.signal(goSignal);
    const stopped = await first.result();
    expect(stopped.value).toBe('waiting');
    expect(JSON.parse(JSON.stringify(stopped.persisted))).toEqual(stopped.persisted);
    // Entry actions do not run again on restore: the new run waits for an event, like `resumed` in the lifecycles.
    const second = await start('persist-2', { fail: false, persisted: stopped.persisted! });
    await second.signal(cancelSignal);
    expect(await second.result()).toEqual({
      value: 'cancelled',
      log: ['go@stamped', 'worked=42@stamped', 'cancel@stamped'],
    });
  });

  describe('a periodic timer (drift check) leaving its state and coming back', () => {
    const run = async (id: string, pauseAwayMs: number) => {
      const handle = await client.workflow.start(periodicTimerToy, {
        taskQueue,
        workflowId: `${taskQueue}/${id}`,
      });
      const count = async (type: temporal.api.enums.v1.EventType) =>
        ((await handle.fetchHistory()).events ?? []).filter((e) => e.eventType === type).length;
      // Each step in a workflow task of its own: a timer started and cancelled within one task never reaches the server.
      const completedTasks = () => count(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
      const afterTask = async (n: number) => {
        for (let i = 0; i < 100 && (await completedTasks()) < n; i++) await new Promise((r) => setTimeout(r, 20));
      };
      await afterTask(1);
      await handle.signal(goSignal);
      await afterTask(2);
      await new Promise((r) => setTimeout(r, pauseAwayMs));
      await handle.signal(goSignal);
      const log = await handle.result();
      return {
        log,
        started: await count(EVENT_TYPE_TIMER_STARTED),
        cancelled: await count(EVENT_TYPE_TIMER_CANCELED),
        fired: await count(EVENT_TYPE_TIMER_FIRED),
      };
    };

    it('is only disarmed and re-armed: one timer, no cancel', async () => {
      expect(await run('periodic-kept', 0)).toEqual({
        log: ['go', 'go', 'check'],
        started: 1,
        cancelled: 0,
        fired: 1,
      });
    });

    it('when it fires while disarmed, is dropped (no event for the machine) and started afresh on return', async () => {
      expect(await run('periodic-dropped', 2_500)).toEqual({
        log: ['go', 'go', 'check'],
        started: 2,
        cancelled: 0,
        fired: 2,
      });
    });
  });
});
