import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { backendChangedSignal } from '../../model/messages';
import { LifecycleState } from '../../model/search-attributes';

/**
 * Whether MidoNet answers, as this worker's calls see it. While it does not, it is asked again every `probeMs`, so its
 * return is seen at once rather than at a stuck lifecycle's next retry; on its return the stuck lifecycles that push
 * into it are woken (`wake`). Only a missing answer counts as down (no connection, a timeout, 502–504): a 500 is an
 * answer (MidoNet gives one for a duplicate MAC entry, MNA-1315).
 */
export interface MidonetHealth {
  /** Every exchange's outcome: answered or not. */
  observe(answered: boolean): void;
  stop(): void;
}

export function watchMidonetHealth({
  probe,
  wake,
  log,
  probeMs = 5_000,
}: {
  /** A harmless call whose outcome reaches `observe` (it goes through the same transport). */
  probe: () => Promise<unknown>;
  wake: () => Promise<void>;
  log: Logger;
  probeMs?: number;
}): MidonetHealth {
  let timer: NodeJS.Timeout | undefined;
  const stopProbing = () => {
    clearInterval(timer);
    timer = undefined;
  };
  return {
    observe(answered) {
      if (!answered && !timer) {
        log.warn('MidoNet does not answer: asking it again every %d ms until it does', probeMs);
        timer = setInterval(() => void probe().catch(() => {}), probeMs);
        timer.unref();
      } else if (answered && timer) {
        stopProbing();
        log.info('MidoNet answers again: waking the lifecycles stuck on it');
        void wake().catch((error: unknown) => log.warn({ err: error }, 'could not wake the stuck lifecycles'));
      }
    },
    stop: stopProbing,
  };
}

/** The lifecycles that push into MidoNet, and take a `backendChanged` notice. */
const MIDONET_LIFECYCLES = [
  'translationLifecycle',
  'nodeLifecycle',
  'podLifecycle',
  'serviceLifecycle',
  'endpointsLifecycle',
];

/** Signals every running lifecycle that pushes into MidoNet and is stuck (visibility's `LifecycleState`): retry now. */
export async function wakeStuckMidonetLifecycles(temporal: Client, log: Logger): Promise<void> {
  const types = MIDONET_LIFECYCLES.map((type) => `'${type}'`).join(', ');
  const query = `${LifecycleState.name} = 'stuck' AND ExecutionStatus = 'Running' AND WorkflowType IN (${types})`;
  const ids: string[] = [];
  for await (const workflow of temporal.workflow.list({ query })) ids.push(workflow.workflowId);
  const notice = { by: 'MidoNet answers again', ids: [] };
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
  log.info({ woken: ids.length }, 'woke the lifecycles stuck on MidoNet');
}
