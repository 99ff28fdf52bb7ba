import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  sleep,
} from '@temporalio/workflow';
import {
  createActor,
  initialTransition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventObject,
  type ExecutableActionObject,
  type StateValue,
} from 'xstate';
import { Reason } from '../model/vocabulary';

/**
 * Runs a pure XState machine inside a Temporal workflow. The machine only decides; this loop takes the next
 * event, asks `transition` for the next snapshot and its actions, runs each action through an executor (usually
 * an activity) and feeds what the executor returns back as events. Two actions are built in, because timers
 * belong to Temporal, not to the machine: `startTimer` ({ id, delayMs, event, jitter? }) schedules a durable timer
 * that sends `event` when it fires, and `cancelTimer` ({ id }) cancels it. A timer's id is what it waits for
 * (`driftCheck`, `stuckRetry` …) and its summary in the Temporal UI.
 */

type Step = (snapshot: AnyMachineSnapshot, event: EventObject) => [AnyMachineSnapshot, ExecutableActionObject[]];

/**
 * xstate's `transition(machine, snapshot, event)`, with one inert actor scope for all of a machine's steps: xstate's
 * makes a new actor, and with it the machine's initial snapshot, at every call, which is most of a step's cost.
 * Steward's machines invoke and spawn nothing, so the scope carries nothing from one step to the next; the actions
 * come back in order, for the caller to run. What the model-based tests explore, and what the workflows run.
 */
export function stepperOf(machine: AnyStateMachine): Step {
  const self = createActor(machine);
  let actions: ExecutableActionObject[] = [];
  const scope: Parameters<AnyStateMachine['transition']>[2] = {
    self,
    id: '',
    sessionId: '',
    system: self.system,
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    actionExecutor: (action) => actions.push(action),
  };
  return (snapshot, event) => {
    actions = [];
    return [machine.transition(snapshot, event, scope) as AnyMachineSnapshot, actions];
  };
}

/** What survives continue-as-new: plain JSON only (a Map or class instance would arrive as `{}`). */
export interface PersistedMachine<TContext = unknown> {
  version: number;
  value: StateValue;
  context: TContext;
}

/** An action that failed after its retries, as an event the machine can handle. */
export interface ActionFailedEvent {
  type: 'actionFailed';
  action: string;
  reason: string;
  message: string;
}

/** An event as executors and signal handlers produce it; the interpreter adds `at`. */
export type Unstamped<E> = E extends unknown ? Omit<E, 'at'> : never;

/** One executor per action the machine names (timers aside), typed from its `*ActionParams`: a missing one does not compile. */
export type Executors<TParams, TEvent> = { [K in keyof TParams]: (params: TParams[K]) => Promise<Produced<TEvent>> };
type Produced<TEvent> = Unstamped<TEvent> | Unstamped<TEvent>[] | void;

export interface TimerParams<TEvent> {
  /** What the timer waits for, in camelCase: also its summary in the Temporal UI's timeline. */
  id: string;
  delayMs: number;
  event: TEvent;
  /** Spread re-observations of many objects: the delay varies by up to this fraction (deterministic in workflows). */
  jitter?: number;
  /**
   * A periodic timer (a drift check), where the deadline may be kept: cancelling it only disarms it (no history
   * event) and starting it again re-arms the one still running; one that fires disarmed is dropped, and one still
   * running when the workflow ends costs nothing.
   */
  periodic?: boolean;
}

/**
 * The two built-in actions, for a machine's `setup({ actions })`: declared there so machines name them with typed
 * params; this interpreter, not xstate, carries them out.
 */
export const timerActions = {
  startTimer: (_: unknown, _params: TimerParams<{ type: string }>) => {},
  cancelTimer: (_: unknown, _params: { id: string }) => {},
};

export class Interpreter<TContext, TEvent extends EventObject, TParams> {
  private readonly queue: TEvent[] = [];
  private readonly timers = new Map<string, { scope: CancellationScope; periodic: boolean; armed: boolean }>();
  private pending: { type: string; params?: unknown }[];
  private readonly step: Step;
  snapshot: AnyMachineSnapshot;

  constructor(machine: AnyStateMachine, start: { persisted: PersistedMachine } | { input: unknown }) {
    this.step = stepperOf(machine);
    if ('persisted' in start) {
      this.snapshot = machine.resolveState({
        value: start.persisted.value,
        context: start.persisted.context,
      }) as AnyMachineSnapshot;
      this.pending = [];
    } else {
      [this.snapshot, this.pending] = initialTransition(machine, start.input);
    }
  }

  /** Queues an event, stamped with the workflow time (`at`), which is deterministic on replay. */
  send(event: Unstamped<TEvent>): void {
    this.queue.push({ ...event, at: new Date().toISOString() } as unknown as TEvent);
  }

  get context(): TContext {
    return this.snapshot.context as TContext;
  }

  get done(): boolean {
    return this.snapshot.status === 'done';
  }

  persisted(version: number): PersistedMachine {
    return { version, value: this.snapshot.value as StateValue, context: this.snapshot.context as unknown };
  }

  /**
   * Runs until the machine is done or `shouldStop` says so (e.g. continue-as-new is due). `onSnapshot` sees every
   * new snapshot (state query, search attributes, current details), `settled` when no event waits behind it: the
   * machine is done or rests until something happens. `beforeAction` sees each action before it runs. `admit` may
   * refuse an event after seeing what it would do (`after`): the machine then stays as it was, as if never sent.
   */
  async run(
    executors: Executors<TParams, TEvent>,
    hooks: {
      onSnapshot?: (snapshot: AnyMachineSnapshot, settled: boolean) => void;
      beforeAction?: (type: string) => void;
      shouldStop?: () => boolean;
      /** Synchronous when it needs no activity to decide (nearly always), so that no promise is made for it. */
      admit?: (event: TEvent, before: AnyMachineSnapshot, after: AnyMachineSnapshot) => boolean | Promise<boolean>;
    } = {},
  ): Promise<void> {
    for (;;) {
      const actions = this.pending;
      this.pending = [];
      for (const action of actions) {
        hooks.beforeAction?.(action.type);
        // Every promise a workflow makes costs the SDK a stack trace (for its stack-trace query), a third of a
        // lifecycle's workflow-thread CPU: none is made where nothing waits.
        const executed = this.execute(action, executors);
        if (executed) await executed;
      }
      hooks.onSnapshot?.(this.snapshot, this.done || this.queue.length === 0);
      if (this.done) return;
      if (this.queue.length === 0) await condition(() => this.queue.length > 0 || (hooks.shouldStop?.() ?? false));
      const event = this.queue.shift();
      if (!event) return;
      const [next, pending] = this.step(this.snapshot, event);
      const admitted = hooks.admit?.(event, this.snapshot, next) ?? true;
      if (!(typeof admitted === 'boolean' ? admitted : await admitted)) continue;
      [this.snapshot, this.pending] = [next, pending];
    }
  }

  /** Runs the action: a promise for an executor's, none for starting a timer (the SDK traces every promise made). */
  private execute(
    action: { type: string; params?: unknown },
    executors: Executors<TParams, TEvent>,
  ): Promise<void> | undefined {
    switch (action.type) {
      case 'startTimer':
        this.startTimer(action.params as TimerParams<Unstamped<TEvent>>);
        return undefined;
      case 'cancelTimer':
        this.cancelTimer((action.params as { id: string }).id);
        // The timer's cancel command is given once its scope's cancellation has run: awaited, it comes before what
        // follows, as histories have it.
        return Promise.resolve();
      default:
        return this.executeWith(action, executors);
    }
  }

  private async executeWith(
    action: { type: string; params?: unknown },
    executors: Executors<TParams, TEvent>,
  ): Promise<void> {
    // An action the machine names outside its `*ActionParams` still has no executor.
    const executor = (executors as Record<string, ((params: unknown) => Promise<Produced<TEvent>>) | undefined>)[
      action.type
    ];
    if (!executor)
      throw ApplicationFailure.nonRetryable(`no executor for action ${action.type}`, Reason.MachineMisconfigured);
    try {
      const produced = await executor(action.params);
      for (const event of ([] as Unstamped<TEvent>[]).concat(produced ?? [])) this.send(event);
    } catch (error) {
      if (isCancellation(error)) throw error;
      this.send(actionFailed(action.type, error) as unknown as Unstamped<TEvent>);
    }
  }

  private startTimer({ id, delayMs, event, jitter = 0, periodic = false }: TimerParams<Unstamped<TEvent>>): void {
    const running = this.timers.get(id);
    if (running?.periodic) {
      running.armed = true;
      return;
    }
    this.cancelTimer(id);
    // Math.random is seeded per workflow run by the SDK, so this replays identically.
    const delay = Math.round(delayMs * (1 + jitter * (Math.random() * 2 - 1)));
    const timer = { scope: new CancellationScope(), periodic, armed: true };
    this.timers.set(id, timer);
    void timer.scope
      .run(() => sleep(delay, { summary: id }))
      .then(
        () => {
          this.timers.delete(id);
          if (timer.armed) this.send(event);
        },
        (error: unknown) => {
          if (!isCancellation(error)) throw error;
        },
      );
  }

  private cancelTimer(id: string): void {
    const timer = this.timers.get(id);
    if (!timer) return;
    if (timer.periodic) {
      timer.armed = false;
      return;
    }
    timer.scope.cancel();
    this.timers.delete(id);
  }
}

/** The failure's type (our CamelCase reason vocabulary) and message, from an activity or a workflow-side error. */
export function actionFailed(action: string, error: unknown): ActionFailedEvent {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure)
    return { type: 'actionFailed', action, reason: cause.type ?? Reason.ActionFailed, message: cause.message };
  const message = cause instanceof Error ? cause.message : String(cause);
  return {
    type: 'actionFailed',
    action,
    reason: error instanceof ActivityFailure ? Reason.ActivityTimedOut : Reason.ActionFailed,
    message,
  };
}
