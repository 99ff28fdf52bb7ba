import type { State } from '@temporalio/worker';
import { failedChecks, type Check } from '../platform/http';

/**
 * What the probes answer. Liveness asks nothing of Temporal: a Temporal outage must not restart every worker (they
 * would crash-loop until it is back, and lose their caches); only a worker whose loop has ended is dead, and one
 * still waiting for Temporal to answer at start is alive. Readiness is what the worker's reach decides: a worker
 * that cannot reach Temporal (or its cluster) takes no traffic, and comes back by itself.
 */
export const livenessProblems = (state: State): string[] =>
  state === 'FAILED' || state === 'STOPPED' ? [`worker is ${state}`] : [];

export async function readinessProblems(state: State, checks: readonly Check[]): Promise<string[]> {
  const problems = state === 'RUNNING' ? [] : [`worker is ${state}`];
  return [...problems, ...(await failedChecks(checks))];
}
