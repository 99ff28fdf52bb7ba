// The pusher's two batched activities: a whole Translation is pushed (or deleted) in one activity, in order, with
// a heartbeat after each resource, so a Translation costs a constant number of history events whatever its size,
// and a retry resumes after the last resource done. Both use the workflow's own record of what it pushed, which
// is what makes removing a resource, or changing one MidoNet cannot update, safe (seed 000's first two limits).
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ANNOTATIONS, type BackendResource, type PushedResource } from '../../workflows/translation/types';
import { checkResource, identify, type MidonetClient } from './client';
import { midonetFailure, type MidonetFailureDetails } from './errors';
import { invalidTranslation, validateResources } from './validate';

export interface PushInput {
  /** Who asks, for messages: `translation/<ns>/<name>`. */
  owner: string;
  resources: BackendResource[];
  /** What this Translation pushed before (its workflow's record). */
  previous: PushedResource[];
}

export interface PushResult {
  pushed: PushedResource[];
  /** Resources of `previous` no longer wanted, deleted in reverse order. */
  removed: PushedResource[];
  /** Resources MidoNet cannot update in place that were deleted and created again. */
  recreated: string[];
}

export interface DeleteInput {
  owner: string;
  /** Deleted in reverse order. */
  resources: BackendResource[];
  /** An operator's `cleanup --mode force`: a resource MidoNet refuses to delete is recorded as failed and skipped. */
  force?: boolean;
}

/**
 * A missing parent or referenced object usually belongs to another Translation not pushed yet (a Pod's port needs
 * its Node's bridge; a Node's address routes need the router port of its main Translation, pushed by a sibling
 * workflow at the same time): midonet-kubernetes retries those, and so do we, until the retries run out and the
 * machine shows `stuck`. MidoNet answers 400, not 404, for a route whose next-hop port does not exist (ref §1.4).
 */
function waitForOtherTranslations(error: unknown, resource: BackendResource): never {
  if (!(error instanceof ApplicationFailure)) throw error;
  const missing = error.type === 'MidonetParentMissing' || error.type === 'MidonetReferenceMissing';
  const routeWithoutPort = error.type === 'MidonetValidation' && resource.kind === 'Route' && resource.body.includes('"nextHopPort"');
  if (missing || routeWithoutPort) throw midonetFailure('MidonetDependencyMissing', error.message, error.details?.[0] as MidonetFailureDetails | undefined);
  // MidoNet only says the host is in no tunnel zone; what puts it in one is its Node's annotation.
  if (error.type === 'MidonetConflict' && resource.kind === 'HostInterfacePort') {
    const hint = `host ${resource.parent} joins a tunnel zone through its Node's annotation ${ANNOTATIONS.tunnelEndpointIP}: is it set, and its Node-Tunnel-Endpoint Translation pushed?`;
    throw midonetFailure('MidonetConflict', `${error.message}; ${hint}`, error.details?.[0] as MidonetFailureDetails | undefined);
  }
  throw error;
}

const record = (resource: BackendResource, state: PushedResource['state']): PushedResource => ({
  kind: resource.kind,
  parent: resource.parent ?? '',
  body: resource.body,
  ...identify(resource),
  state,
});

/** A refusal no retry can change (a 4xx, a bad resource), as opposed to a backend that may recover. */
const isRefusal = (error: unknown) => error instanceof ApplicationFailure && error.nonRetryable;

export function createPushActivities({ client }: { client: MidonetClient }) {
  async function removeInReverse(resources: BackendResource[], startAt: number, progress: (done: number) => void, force = false): Promise<PushedResource[]> {
    const removed: PushedResource[] = [];
    const reversed = [...resources].reverse();
    for (let i = startAt; i < reversed.length; i++) {
      const resource = reversed[i]!;
      try {
        const { outcome } = await client.remove(resource);
        removed.push(record(resource, outcome === 'deleted' ? 'deleted' : 'absent'));
      } catch (error) {
        if (!force || !isRefusal(error)) throw error;
        Context.current().log.warn(`force: ${resource.kind} ${identify(resource).id} could not be deleted and is left: ${(error as Error).message}`);
        removed.push(record(resource, 'failed'));
      }
      progress(i + 1);
    }
    return removed;
  }

  return {
    async pushTranslation({ owner, resources, previous }: PushInput): Promise<PushResult> {
      // The whole Translation is checked before any of it is pushed: nothing half-pushed for a bad resource.
      const problems = validateResources(resources);
      if (problems.length > 0) throw invalidTranslation(owner, problems);
      const ctx = Context.current();
      const resumeAt = (ctx.info.heartbeatDetails as number | undefined) ?? 0;
      const wanted = new Set(resources.map((r) => identify(r).key));
      const stale = previous.filter((p) => !wanted.has(p.key) && p.state === 'synced');
      const removed = await removeInReverse(stale, 0, () => ctx.heartbeat(resumeAt));
      const ours = new Map(previous.map((p) => [p.key, p]));
      const pushed: PushedResource[] = [];
      const recreated: string[] = [];
      for (const [index, resource] of resources.entries()) {
        if (index >= resumeAt) {
          const result = await client.ensure(resource).catch((error: unknown) => waitForOtherTranslations(error, resource));
          if (result.outcome === 'conflict') {
            const { key, id } = identify(resource);
            // Only what this Translation itself pushed may be deleted and created again; anything else may belong to
            // another Translation (seed 000's third limit), which an operator must resolve.
            if (!ours.has(key)) {
              throw midonetFailure(
                'ResourceConflict',
                `${owner}: ${resource.kind} ${id} exists in MidoNet with another body and was not pushed by this Translation (${result.reason}); differences: ${JSON.stringify(result.diff)}`,
              );
            }
            await client.remove(resource);
            await client.ensure(resource);
            recreated.push(key);
          }
          ctx.heartbeat(index + 1);
        }
        pushed.push(record(resource, 'synced'));
      }
      return { pushed, removed, recreated };
    },

    /**
     * Deletes in reverse order. A resource that is not a valid MidoNet resource was never pushed (a push checks the
     * whole Translation first), so it is skipped rather than refused: an invalid Translation still deletes cleanly.
     */
    async deleteTranslation({ resources, force }: DeleteInput): Promise<{ removed: PushedResource[] }> {
      const ctx = Context.current();
      const resumeAt = (ctx.info.heartbeatDetails as number | undefined) ?? 0;
      const deletable = resources.filter((resource) => checkResource(resource).ok);
      return { removed: await removeInReverse(deletable, resumeAt, (done) => ctx.heartbeat(done), force) };
    },
  };
}

export type PushActivities = ReturnType<typeof createPushActivities>;
