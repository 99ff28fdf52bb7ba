import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { clusterFilter, LIFECYCLE_KINDS, type LifecycleKind } from '../model/naming';
import { K8sKind, LifecycleState } from '../model/search-attributes';

export interface ObjectCountOptions {
  client: Client;
  registry: Registry;
  log: Logger;
  /** Only the leading starter counts: the load on the visibility store does not grow with replicas. */
  isLeader: () => boolean;
  intervalMs?: number;
  /** Counts only this cluster's workflows (`clusterFilter`). */
  clusterId?: string;
  /** A kind's top-level states, one count query each (the machines': workflows/machines). */
  states: (kind: LifecycleKind) => readonly string[];
}

/**
 * Feeds `steward_objects` from visibility count queries, every 30 s by default, while this starter leads; a follower
 * exports no values, so the installation's count is one series per kind and state whatever the replicas. Temporal
 * groups counts only by ExecutionStatus, so it is one query per kind, then one per state for kinds that have objects.
 * A server without count support (or unreachable) leaves the last values and is logged once until it answers again.
 */
export function countObjectsByState({
  client,
  registry,
  clusterId,
  log,
  isLeader,
  intervalMs = 30_000,
  states,
}: ObjectCountOptions) {
  const objects = new Gauge({
    name: 'steward_objects',
    help: 'Kubernetes objects with a running lifecycle workflow, by kind and machine state (LifecycleState search attribute); counted by the leading starter',
    labelNames: ['kind', 'state'],
    registers: [registry],
  });
  let failing = false;
  const inThisCluster = ['ExecutionStatus="Running"', clusterFilter(clusterId) ?? []].flat();
  const count = async (...conditions: string[]) =>
    (await client.workflow.count([...inThisCluster, ...conditions].join(' AND '))).count;

  async function refresh(): Promise<void> {
    if (!isLeader()) {
      objects.reset();
      return;
    }
    try {
      const values: { kind: string; state: string; value: number }[] = [];
      for (const kind of LIFECYCLE_KINDS) {
        const byKind = `${K8sKind.name}="${kind}"`;
        const total = await count(byKind);
        if (total === 0) continue;
        let known = 0;
        for (const state of states(kind)) {
          const value = await count(byKind, `${LifecycleState.name}="${state}"`);
          known += value;
          if (value > 0) values.push({ kind, state, value });
        }
        if (total > known) values.push({ kind, state: 'other', value: total - known });
      }
      // Swapped in one synchronous step, so a scrape never sees half a refresh; and none from a lead lost meanwhile.
      objects.reset();
      if (isLeader()) for (const { kind, state, value } of values) objects.set({ kind, state }, value);
      if (failing) log.info('counting objects per lifecycle state works again');
      failing = false;
    } catch (error) {
      if (!failing)
        log.warn(
          { err: error },
          'cannot count objects per lifecycle state in Temporal visibility; keeping the last values',
        );
      failing = true;
    }
  }

  // One refresh at a time, and the last one awaited at stop: a count still retrying once the connection is closed
  // throws from the SDK's retry timer, out of reach of any catch.
  let running: Promise<void> | undefined;
  const once = () => (running ??= refresh().finally(() => (running = undefined)));
  const timer = setInterval(() => void once(), intervalMs);
  timer.unref();
  return {
    refresh: once,
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
