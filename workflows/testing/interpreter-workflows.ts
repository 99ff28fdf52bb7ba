import { ApplicationFailure, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import { assign, setup } from 'xstate';
import { Interpreter, type PersistedMachine } from '../interpreter';

/**
 * A toy machine and workflow that exercise the interpreter alone on a real Temporal server: actions run as
 * activities, results and failures come back as events stamped with workflow time, timers are Temporal timers
 * (started, fired, cancelled), and a run can stop early and continue from its persisted `{ value, context }`.
 */
const { work } = proxyActivities<{ work(input: { fail: boolean }): Promise<number> }>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

type ToyEvent =
  | { type: 'go'; at: string }
  | { type: 'worked'; value: number; at: string }
  | { type: 'actionFailed'; action: string; reason: string; message: string; at: string }
  | { type: 'tick'; at: string }
  | { type: 'cancel'; at: string };

interface ToyContext {
  fail: boolean;
  log: string[];
}

const toyMachine = setup({
  types: { context: {} as ToyContext, events: {} as ToyEvent, input: {} as { fail: boolean } },
  actions: {
    work: (_, _params: { fail: boolean }) => {},
    startTimer: (_, _params: { id: string; delayMs: number; event: { type: string } }) => {},
    cancelTimer: (_, _params: { id: string }) => {},
    note: assign(({ context, event }) => ({
      log: [
        ...context.log,
        `${event.type}${event.type === 'worked' ? `=${event.value}` : ''}${event.type === 'actionFailed' ? `:${event.reason}:${event.message}` : ''}@${event.at ? 'stamped' : 'missing'}`,
      ],
    })),
  },
}).createMachine({
  context: ({ input }) => ({ fail: input.fail, log: [] }),
  initial: 'idle',
  states: {
    idle: { on: { go: { target: 'working', actions: 'note' } } },
    working: {
      entry: { type: 'work', params: ({ context }) => ({ fail: context.fail }) },
      on: { worked: { target: 'waiting', actions: 'note' }, actionFailed: { target: 'failed', actions: 'note' } },
    },
    waiting: {
      entry: { type: 'startTimer', params: { id: 'tick', delayMs: 300, event: { type: 'tick' } } },
      on: {
        tick: { target: 'finished', actions: 'note' },
        cancel: { target: 'cancelled', actions: ['note', { type: 'cancelTimer', params: { id: 'tick' } }] },
      },
    },
    cancelled: { type: 'final' },
    failed: { type: 'final' },
    finished: { type: 'final' },
  },
});

export const goSignal = defineSignal('go');
export const cancelSignal = defineSignal('cancel');

export interface ToyResult {
  value: string;
  log: string[];
  persisted?: PersistedMachine;
}

export async function interpreterToy(input: {
  fail: boolean;
  stopAfterWork?: boolean;
  persisted?: PersistedMachine;
}): Promise<ToyResult> {
  const interpreter = new Interpreter<ToyContext, ToyEvent, { work: { fail: boolean } }>(
    toyMachine,
    input.persisted ? { persisted: input.persisted } : { input: { fail: input.fail } },
  );
  setHandler(goSignal, () => interpreter.send({ type: 'go' }));
  setHandler(cancelSignal, () => interpreter.send({ type: 'cancel' }));
  await interpreter.run(
    {
      work: async ({ fail }: { fail: boolean }) => ({ type: 'worked' as const, value: await work({ fail }) }),
    },
    { shouldStop: () => input.stopAfterWork === true && interpreter.snapshot.value === 'waiting' },
  );
  if (!interpreter.done && !input.stopAfterWork) throw ApplicationFailure.nonRetryable('stopped without a reason');
  return {
    value: String(interpreter.snapshot.value),
    log: interpreter.context.log,
    ...(interpreter.done ? {} : { persisted: interpreter.persisted(1) }),
  };
}

/**
 * A periodic timer across states: `resting` starts it on entry and cancels it on exit, `go` moves between `resting`
 * and `away`. With `keep`, leaving only disarms it and coming back re-arms the running one.
 */
type PeriodicEvent = { type: 'go'; at: string } | { type: 'check'; at: string };

const periodicMachine = setup({
  types: { context: {} as { log: string[] }, events: {} as PeriodicEvent },
  actions: {
    startTimer: (_, _params: { id: string; delayMs: number; event: { type: string }; periodic: boolean }) => {},
    cancelTimer: (_, _params: { id: string }) => {},
    note: assign(({ context, event }) => ({ log: [...context.log, event.type] })),
  },
}).createMachine({
  context: { log: [] },
  initial: 'resting',
  states: {
    resting: {
      entry: { type: 'startTimer', params: { id: 'check', delayMs: 1_500, event: { type: 'check' }, periodic: true } },
      exit: { type: 'cancelTimer', params: { id: 'check' } },
      on: { go: { target: 'away', actions: 'note' }, check: { target: 'checked', actions: 'note' } },
    },
    away: { on: { go: { target: 'resting', actions: 'note' }, check: { actions: 'note' } } },
    checked: { type: 'final' },
  },
});

export async function periodicTimerToy(): Promise<string[]> {
  const interpreter = new Interpreter<{ log: string[] }, PeriodicEvent, object>(periodicMachine, { input: {} });
  setHandler(goSignal, () => interpreter.send({ type: 'go' }));
  await interpreter.run({});
  return interpreter.context.log;
}
