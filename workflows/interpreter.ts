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
 * (`driftCheck`, `stuckRetry` …) and its summary in the Temporal UI. A third, `abandon` ({ action }), calls off a
 * running action the workflow named abandonable (a long backend call): its outcome comes back as `abandoned` once it
 * has stopped, or as its result or failure if it ended first.
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
const ABANDONED = Symbol('abandoned');

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
 * The built-in actions, for a machine's `setup({ actions })`: declared there so machines name them with typed
 * params; this interpreter, not xstate, carries them out.
 */
export const builtInActions = {
  startTimer: (_: unknown, _params: TimerParams<{ type: string }>) => {},
  cancelTimer: (_: unknown, _params: { id: string }) => {},
  abandon: (_: unknown, _params: { action: string }) => {},
};
const BUILT_IN = new Set(Object.keys(builtInActions));

/** The outcome of an abandoned action, as the machine hears it. */
export interface AbandonedEvent {
  type: 'abandoned';
  action: string;
}

export interface RunHooks<TEvent> {
  onSnapshot?: (snapshot: AnyMachineSnapshot, settled: boolean) => void;
  beforeAction?: (type: string) => void;
  shouldStop?: () => boolean;
  /** Synchronous when it needs no activity to decide (nearly always), so that no promise is made for it. */
  admit?: (event: TEvent, before: AnyMachineSnapshot, after: AnyMachineSnapshot) => boolean | Promise<boolean>;
  /** Actions a machine may call off while they run (`abandon`): run in a cancellation scope of their own. */
  abandonable?: readonly string[];
}

/** The abandonable action running, if any. */
interface Running {
  type: string;
  scope: CancellationScope;
  abandoned: boolean;
  settled: boolean;
}

export class Interpreter<TContext, TEvent extends EventObject, TParams> {
  private readonly queue: TEvent[] = [];
  private readonly timers = new Map<string, { scope: CancellationScope; periodic: boolean; armed: boolean }>();
  private running: Running | undefined;
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

  /** The events sent and not yet stepped: once the machine is done, what came after its end. */
  get unprocessed(): readonly TEvent[] {
    return [...this.queue];
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
  async run(executors: Executors<TParams, TEvent>, hooks: RunHooks<TEvent> = {}): Promise<void> {
    for (;;) {
      const actions = this.pending;
      this.pending = [];
      for (const action of actions) {
        hooks.beforeAction?.(action.type);
        // Every promise a workflow makes costs the SDK a stack trace (for its stack-trace query), a third of a
        // lifecycle's workflow-thread CPU: none is made where nothing waits.
        const executed = this.execute(action, executors, hooks);
        if (executed) await executed;
      }
      hooks.onSnapshot?.(this.snapshot, this.done || this.queue.length === 0);
      if (this.done) return;
      if (this.queue.length === 0) await condition(() => this.queue.length > 0 || (hooks.shouldStop?.() ?? false));
      const event = this.queue.shift();
      if (!event) return;
      const [next, pending] = this.step(this.snapshot, event);
      if (!(await this.admitted(event, next, hooks))) continue;
      [this.snapshot, this.pending] = [next, pending];
    }
  }

  private admitted(event: TEvent, next: AnyMachineSnapshot, hooks: RunHooks<TEvent>): boolean | Promise<boolean> {
    return hooks.admit?.(event, this.snapshot, next) ?? true;
  }

  /**
   * Runs an abandonable action in a scope of its own. Meanwhile the events that come are taken in, in order, as long as
   * each starts no action of its own (only timers, or `abandon`): a deletion can call the action off. An event that
   * would start one waits, with those behind it, until the action ends, as every event does while other actions run.
   */
  private async abandonably(type: string, call: () => Promise<Produced<TEvent>>, hooks: RunHooks<TEvent>) {
    const running: Running = { type, scope: new CancellationScope(), abandoned: false, settled: false };
    this.running = running;
    const outcome = running.scope.run(call);
    const settle = () => {
      running.settled = true;
    };
    void outcome.then(settle, settle);
    try {
      let taking = true;
      while (taking && !running.settled) {
        await condition(() => running.settled || this.queue.length > 0);
        if (!running.settled) taking = await this.takeWhileRunning(hooks);
      }
      return await outcome;
    } catch (error) {
      if (running.abandoned && isCancellation(error)) return ABANDONED;
      throw error;
    } finally {
      this.running = undefined;
    }
  }

  /** Takes queued events in while each starts only built-in actions; false at the first that would start another. */
  private async takeWhileRunning(hooks: RunHooks<TEvent>): Promise<boolean> {
    while (this.queue.length > 0) {
      const event = this.queue[0]!;
      const [next, actions] = this.step(this.snapshot, event);
      if (!actions.every((a) => BUILT_IN.has(a.type))) return false;
      this.queue.shift();
      if (!(await this.admitted(event, next, hooks))) continue;
      this.snapshot = next;
      for (const action of actions) await this.execute(action, {} as Executors<TParams, TEvent>, hooks);
      hooks.onSnapshot?.(this.snapshot, false);
    }
    return true;
  }

  /** Runs the action: a promise for an executor's, none for starting a timer (the SDK traces every promise made). */
  private execute(
    action: { type: string; params?: unknown },
    executors: Executors<TParams, TEvent>,
    hooks: RunHooks<TEvent>,
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
      case 'abandon':
        this.abandon((action.params as { action: string }).action);
        return undefined;
      default:
        return this.executeWith(action, executors, hooks);
    }
  }

  /** Cancels the running action's scope, if it is that one: an activity is asked to stop (its cancellation type says how long that is waited for). */
  private abandon(type: string): void {
    const running = this.running;
    if (running?.type !== type || running.settled || running.abandoned) return;
    running.abandoned = true;
    running.scope.cancel();
  }

  private async executeWith(
    action: { type: string; params?: unknown },
    executors: Executors<TParams, TEvent>,
    hooks: RunHooks<TEvent>,
  ): Promise<void> {
    // An action the machine names outside its `*ActionParams` still has no executor.
    const executor = (executors as Record<string, ((params: unknown) => Promise<Produced<TEvent>>) | undefined>)[
      action.type
    ];
    if (!executor)
      throw ApplicationFailure.nonRetryable(`no executor for action ${action.type}`, Reason.MachineMisconfigured);
    try {
      const call = () => executor(action.params);
      const produced = hooks.abandonable?.includes(action.type)
        ? await this.abandonably(action.type, call, hooks)
        : await call();
      if (produced === ABANDONED) {
        this.send({ type: 'abandoned', action: action.type } as unknown as Unstamped<TEvent>);
        return;
      }
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
