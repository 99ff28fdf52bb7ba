import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { startInProcessWorker, type InProcessWorker } from '../test/support';
import { cancelSignal, goSignal, interpreterToy } from './testing/interpreter-workflows';

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
    expect(await handle.result()).toEqual({ value: 'failed', log: ['go@stamped', 'actionFailed:ToyRefused:the backend said no@stamped'] });
  });

  it('cancels a timer the machine cancels (no TIMER_FIRED, one TIMER_CANCELED)', async () => {
    const handle = await start('cancel', { fail: false });
    await handle.signal(goSignal);
    for (let i = 0; i < 50 && !(await handle.fetchHistory()).events?.some((e) => e.eventType === EVENT_TYPE_TIMER_STARTED); i++) await new Promise((r) => setTimeout(r, 20));
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
    expect(await second.result()).toEqual({ value: 'cancelled', log: ['go@stamped', 'worked=42@stamped', 'cancel@stamped'] });
  });
});
