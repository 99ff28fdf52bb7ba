import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { backendChangedSignal } from '../model/messages';
import { clusterFilter } from '../model/naming';
import { LifecycleState } from '../model/search-attributes';

/**
 * Whether a backend (MidoNet, the cloud, the Kubernetes API) answers, as this worker's calls see it. While it does
 * not, it is asked again every `probeMs`, so its return is seen at once rather than at a stuck lifecycle's next retry;
 * on its return the stuck lifecycles that call it are woken (`wake`). Only a missing answer counts as down (no
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
  wake: () => Promise<void>;
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
  const settle = (left: number) => {
    clearTimeout(settling);
    if (left === 0) return;
    settling = setTimeout(() => {
      wakeLogged();
      settle(left - 1);
    }, settleMs);
    settling.unref();
  };
  const wakeLogged = () =>
    void wake().catch((error: unknown) => log.warn({ err: error }, 'could not wake the stuck lifecycles'));
  const stopProbing = () => {
    clearInterval(timer);
    timer = undefined;
  };
  return {
    observe(answered) {
      if (!answered && !timer) {
        log.warn('%s does not answer: asking it again every %d ms until it does', backend, probeMs);
        timer = setInterval(() => void probe().catch(() => {}), probeMs);
        timer.unref();
      } else if (answered && timer) {
        stopProbing();
        log.info('%s answers again: waking the lifecycles stuck on it', backend);
        wakeLogged();
        settle(settleWakes);
      }
    },
    stop() {
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
 * Signals every running lifecycle of `workflowTypes` that is stuck (visibility's `LifecycleState`): retry now. `by`
 * says why, in the notice its history keeps.
 */
export async function wakeStuckLifecycles(
  temporal: Client,
  log: Logger,
  { workflowTypes, clusterId, by }: { workflowTypes: string[]; clusterId?: string; by: string },
): Promise<void> {
  const types = workflowTypes.map((type) => `'${type}'`).join(', ');
  const query = [
    `${LifecycleState.name} = 'stuck' AND ExecutionStatus = 'Running' AND WorkflowType IN (${types})`,
    clusterFilter(clusterId),
  ]
    .filter(Boolean)
    .join(' AND ');
  const ids: string[] = [];
  for await (const workflow of temporal.workflow.list({ query })) ids.push(workflow.workflowId);
  const notice = { by, ids: [] };
  for (let i = 0; i < ids.length; i += 20)
    await Promise.all(
      ids.slice(i, i + 20).map((id) =>
        temporal.workflow
          .getHandle(id)
          .signal(backendChangedSignal, notice)
          .catch((error: unknown) => {
            if (!(error instanceof WorkflowNotFoundError)) throw error;
          }),
      ),
    );
  log.info({ woken: ids.length, by }, 'woke the stuck lifecycles');
}
