import type { StarterStats } from './controller';

/** A Lease round ends every few seconds (renewSeconds), failed or not: none for this long is a loop that is stuck. */
export const LEASE_LOOP_STALLED_MS = 60_000;

/**
 * Liveness asks nothing of Temporal or the API server: an outage of either must not restart every starter (each
 * would list every object again on its way back). Only a Lease loop that stopped going round is a reason to restart.
 */
export function starterLiveness(stats: Pick<StarterStats, 'leaseRound'>, startedAt: number, now: number): string[] {
  const last = stats.leaseRound?.at ?? startedAt;
  return now - last > LEASE_LOOP_STALLED_MS
    ? [`the Lease loop has not gone round for ${Math.round((now - last) / 1000)} s`]
    : [];
}

/** Ready: it knows every watched object and who holds the Lease; a follower is as ready as the leader. */
export function starterReadiness(stats: Pick<StarterStats, 'synced' | 'leaseRound'>): string[] {
  const lease = stats.leaseRound;
  return [
    ...(stats.synced ? [] : ['the informers have not listed every watched kind since their last error']),
    ...(lease?.leaseKnown
      ? []
      : [lease ? 'the Lease could not be read at the last try' : 'the Lease has not been read yet']),
  ];
}
