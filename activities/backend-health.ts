import { WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import type { Logger } from 'pino';
import { backendChangedSignal } from '../model/messages';
import { LifecycleState } from '../model/search-attributes';

/**
 * Whether a backend (MidoNet, the cloud, the Kubernetes API) answers, as this worker's calls see it. While it does
 * not, it is asked again every `probeMs`, so its return is seen at once rather than at a stuck lifecycle's next retry;
 * on its return the stuck lifecycles that call it are woken (`wake`). A worker cannot know what the one before it saw
 * (an outage, or a return whose later wakes died with that worker), so its first answer counts as a return too: it
 * asks once at start. Only a missing answer counts as down (no
 * connection, a timeout, 502–504 for MidoNet and the API server, `CloudUnavailable` for the cloud): an error the
 * backend gives is an answer.
 */
export interface BackendHealth {
  /** Every exchange's outcome: answered or not. */
  observe(answered: boolean): void;
  stop(): void;
}

export function watchBackendHealth({
  backend,
  probe,
  wake,
  log,
  probeMs = 5_000,
  settleMs = 15_000,
  settleWakes = 3,
}: {
  /** Its name in the log: `MidoNet`, `the cloud`. */
  backend: string;
  /** A harmless call whose outcome reaches `observe` (it goes through the same transport). */
  probe: () => Promise<unknown>;
  /** `by`: why, as the notice says it. */
  wake: (by: string) => Promise<void>;
  log: Logger;
  probeMs?: number;
  /**
   * After the return it wakes them `settleWakes` times more, every `settleMs`: a lifecycle whose attempts failed
   * during the outage runs out of retries, and shows as stuck, only after its last attempt's deadline and its retry
   * backoff (and its status write), which may be well after the return and the first wake's list.
   */
  settleMs?: number;
  settleWakes?: number;
}): BackendHealth {
  let timer: NodeJS.Timeout | undefined;
  let settling: NodeJS.Timeout | undefined;
  let answeredOnce = false;
  const settle = (by: string, left: number) => {
    clearTimeout(settling);
    if (left === 0) return;
    settling = setTimeout(() => {
      wakeLogged(by);
      settle(by, left - 1);
    }, settleMs);
    settling.unref();
  };
  const wakeLogged = (by: string) =>
    void wake(by).catch((error: unknown) => log.warn({ err: error }, 'could not wake the stuck lifecycles'));
  const first = setImmediate(() => void probe().catch(() => {}));
  const stopProbing = () => {
    clearInterval(timer);
    timer = undefined;
  };
  return {
    observe(answered) {
      if (answered && (timer || !answeredOnce)) {
        const returned = timer !== undefined;
        const by = returned ? `${backend} answers again` : `${backend} answers a worker just started`;
        answeredOnce = true;
        stopProbing();
        log.info('%s: waking the lifecycles stuck on it', by);
        wakeLogged(by);
        // Only an outage this worker saw leaves attempts failing after it: at start, one wake is all.
        if (returned) settle(by, settleWakes);
      } else if (!answered && !timer) {
        log.warn('%s does not answer: asking it again every %d ms until it does', backend, probeMs);
        timer = setInterval(() => void probe().catch(() => {}), probeMs);
        timer.unref();
      }
    },
    stop() {
      clearImmediate(first);
      stopProbing();
      clearTimeout(settling);
    },
  };
}

/** The lifecycles that push into MidoNet, and take a `backendChanged` notice. */
export const MIDONET_LIFECYCLES = [
  'translationLifecycle',
  'nodeLifecycle',
  'podLifecycle',
  'serviceLifecycle',
  'endpointsLifecycle',
];

/** The lifecycles that call the cloud. */
export const CLOUD_LIFECYCLES = ['peerPodLifecycle'];

/**
 * Signals every running lifecycle of `workflowTypes` on this worker's task queues that is stuck (visibility's
 * `LifecycleState`): retry now. Not another installation's, nor another worker's sharing the namespace: those ask their
 * backends themselves. `by` says why, in the notice its history keeps.
 */
export async function wakeStuckLifecycles(
  temporal: Client,
  log: Logger,
  {
    workflowTypes,
    taskQueues,
    by,
    wake = (handle) => handle.signal(backendChangedSignal, { by, ids: [] }),
  }: {
    workflowTypes: string[];
    taskQueues: string[];
    by: string;
    /** How each is woken: a `backendChanged` notice unless said otherwise (an operator's cleanup retry). */
    wake?: (handle: WorkflowHandle) => Promise<void>;
  },
): Promise<number> {
  const list = (values: string[]) => values.map((value) => `'${value}'`).join(', ');
  const query =
    `${LifecycleState.name} = 'stuck' AND ExecutionStatus = 'Running' AND WorkflowType IN (${list(workflowTypes)})` +
    ` AND TaskQueue IN (${list(taskQueues)})`;
  const ids: string[] = [];
  for await (const workflow of temporal.workflow.list({ query })) ids.push(workflow.workflowId);
  for (let i = 0; i < ids.length; i += 20)
    await Promise.all(
      ids.slice(i, i + 20).map((id) =>
        wake(temporal.workflow.getHandle(id)).catch((error: unknown) => {
          if (!(error instanceof WorkflowNotFoundError)) throw error;
        }),
      ),
    );
  log.info({ woken: ids.length, by }, 'woke the stuck lifecycles');
  return ids.length;
}
