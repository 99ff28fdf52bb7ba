// MidoNet activities: thin, plain-JSON wrappers over the client, one typed input object each (STYLE habit 3).
// Failures are the client's typed ApplicationFailures, so Temporal retries exactly the retryable ones.
import type { BackendResource } from '../../model/translation/types';
import type { EnsureResult, MidonetClient, MidonetObservation, RemoveResult } from './client';
import { createMidonetInventoryActivities } from './inventory';
import type { MidonetHost } from './kinds';
import type { DeletionGuard } from '../deletion-guard';

export interface MidonetActivityDeps {
  client: MidonetClient;
  /** The guard against mass deletion, asked before the sweeper deletes (none without Kubernetes). */
  guard?: DeletionGuard;
}

export interface ResourceInput {
  resource: BackendResource;
}

export function createMidonetActivities({ client, guard }: MidonetActivityDeps) {
  return {
    midonetEnsure: ({ resource }: ResourceInput): Promise<EnsureResult> => client.ensure(resource),
    midonetRemove: ({ resource }: ResourceInput): Promise<RemoveResult> => client.remove(resource),
    midonetObserve: ({ resource }: ResourceInput): Promise<MidonetObservation> => client.observe(resource),
    midonetListHosts: async (_input: Record<string, never> = {}): Promise<{ hosts: MidonetHost[] }> => ({
      hosts: await client.listHosts(),
    }),
    ...createMidonetInventoryActivities(client, guard),
  };
}

export type MidonetActivities = ReturnType<typeof createMidonetActivities>;
