// What the sweeper needs from MidoNet: the top-level resources of one tenant, and deleting a batch of them. Deleting
// a bridge, router or chain cascades to its ports, routes and rules (ref §1.4), so nothing below them is listed.
import { Context } from '@temporalio/activity';
import { settlingUnanswered, type MidonetClient, type TenantResource } from './client';
import { tenantKinds, type TenantKind } from './kinds';
import type { DeletionGuard } from '../deletion-guard';

export interface TenantInput {
  tenant: string;
}

export interface DeleteResourcesInput {
  resources: { kind: TenantKind; id: string }[];
}

export interface DeleteResourcesResult {
  deleted: number;
  /** Already gone (a cascade, someone else): done all the same. */
  absent: number;
}

function heartbeat(details: number): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // Called outside an activity (tests): nobody to heartbeat to.
  }
}

export function createMidonetInventoryActivities(client: MidonetClient, guard?: DeletionGuard) {
  return {
    midonetListTenantResources: async ({ tenant }: TenantInput): Promise<{ resources: TenantResource[] }> => {
      const lists = await Promise.all(tenantKinds.map((kind) => client.listTenant(kind, tenant)));
      return { resources: lists.flat() };
    },

    /** One by one, heartbeating each; a retry simply deletes again (a missing one is `absent`). */
    midonetDeleteResources: async ({ resources }: DeleteResourcesInput): Promise<DeleteResourcesResult> => {
      // Orphans of a mass deletion are the same resources: the sweeper waits for the go-ahead as the lifecycles do.
      await guard?.check('the orphan sweeper');
      const result = { deleted: 0, absent: 0 };
      const midonet = settlingUnanswered(client, () => heartbeat(result.deleted + result.absent));
      for (const { kind, id } of resources) {
        const { outcome } = await midonet.remove({ kind, parent: '', body: JSON.stringify({ id }) });
        result[outcome === 'deleted' ? 'deleted' : 'absent']++;
        heartbeat(result.deleted + result.absent);
      }
      return result;
    },
  };
}
