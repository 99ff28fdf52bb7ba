import type { State } from '@temporalio/worker';

/**
 * What the probes answer. Liveness asks nothing of Temporal: a Temporal outage must not restart every worker (they
 * would crash-loop until it is back, and lose their caches); only a worker whose loop has ended is dead. Readiness
 * is what Temporal's reachability decides: a worker that cannot reach it takes no traffic, and comes back by itself.
 */
export const livenessProblems = (state: State): string[] =>
  state === 'FAILED' || state === 'STOPPED' ? [`worker is ${state}`] : [];

export async function readinessProblems(state: State, checkTemporal: () => Promise<unknown>): Promise<string[]> {
  const problems = state === 'RUNNING' ? [] : [`worker is ${state}`];
  await checkTemporal().catch((error: Error) => problems.push(error.message));
  return problems;
}
