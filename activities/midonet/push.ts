// The pusher's two batched activities: a whole Translation is pushed (or deleted) in one activity, in order, with
// a heartbeat after each resource, so a Translation costs a constant number of history events whatever its size,
// and a retry resumes after the last resource done. Both use the workflow's own record of what it pushed, which
// is what makes removing a resource, or changing one MidoNet cannot update, safe (seed 000's first two limits).
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TranslationIndex } from '../kubernetes/translation-index';
import type { BackendChanged } from '../../workflows/messages';
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
  /** Other Translations told that resources they name were created or removed. */
  notified: number;
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

/**
 * The other Translations, as the worker's watch of them knows them (activities/kubernetes/translation-index.ts):
 * who owns a resource, and whom to tell when resources they name change under them.
 */
export interface Neighbours {
  index: TranslationIndex;
  /** The watch has listed every Translation: an owner not in the index does not exist. */
  synced(): boolean;
  /** Signals `backendChanged` to these pusher workflows; a workflow that does not run is skipped. */
  notify(workflowIds: string[], notice: BackendChanged): Promise<void>;
}

export interface PushDeps {
  client: MidonetClient;
  /** Without them (a worker without Kubernetes) no claim is checked and nobody is told. */
  neighbours?: Neighbours;
}

/** The MidoNet ID a resource has of its own (a body `id`); kinds identified by parent and body have none. */
function ownId(resource: BackendResource): string | undefined {
  const { id } = identify(resource);
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id) ? id : undefined;
}

const NOTICE_IDS = 20;
const SYNC_WAIT_MS = 10_000;

export function createPushActivities({ client, neighbours }: PushDeps) {
  /** Who owns what is only known once the watch has listed every Translation. */
  async function neighboursListed(owner: string): Promise<void> {
    for (let waited = 0; neighbours && !neighbours.synced(); waited += 200) {
      if (waited >= SYNC_WAIT_MS) throw ApplicationFailure.retryable(`${owner}: the worker's watch of Translations has not listed them yet`, 'TranslationsNotListed');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * One owner per resource (issue 10, defect 1): a resource that another, senior Translation records as pushed is
   * not this one's to push, to delete or to report; it is refused whole, naming the owner, until the owner lets go
   * (its deletion tells this one, which then pushes and owns it).
   */
  async function refuseClaimed(owner: string, resources: BackendResource[]): Promise<void> {
    if (!neighbours) return;
    await neighboursListed(owner);
    const claimed = resources.flatMap((resource) => {
      const { key, id } = identify(resource);
      const other = neighbours.index.ownerOf(key, owner);
      return other ? [`${resource.kind} ${id} (owned by ${other})`] : [];
    });
    if (claimed.length > 0) {
      const shown = claimed.slice(0, 5).join(', ') + (claimed.length > 5 ? ` and ${claimed.length - 5} more` : '');
      throw midonetFailure('ResourceClaimed', `${owner}: ${claimed.length} resources are pushed and recorded by another Translation: ${shown}`);
    }
  }

  /** Tells the Translations that name these IDs (only those waiting for a dependency, for created ones). */
  async function tell(owner: string, ids: string[], waitingOnly: boolean): Promise<number> {
    if (!neighbours || ids.length === 0) return 0;
    const targets = neighbours.index.mentioning(ids, owner, { waiting: waitingOnly });
    if (targets.length === 0) return 0;
    await neighbours.notify(targets, { by: owner, ids: ids.slice(0, NOTICE_IDS) }).catch((error: unknown) => {
      // A notice only speeds up what their drift checks and retries find anyway: it never fails the push.
      Context.current().log.warn(`${owner}: could not tell ${targets.length} Translations that resources they name changed: ${(error as Error).message}`);
    });
    return targets.length;
  }

  /** Another Translation's resource is never removed by this one, even one it listed (it was refused for it). */
  const ownedByAnother = (owner: string, resource: BackendResource) => neighbours?.index.ownerOf(identify(resource).key, owner) !== undefined;

  const idsOf = (resources: BackendResource[]) => resources.flatMap((r) => ownId(r) ?? []);

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
      await refuseClaimed(owner, resources);
      const ctx = Context.current();
      const resumeAt = (ctx.info.heartbeatDetails as number | undefined) ?? 0;
      const wanted = new Set(resources.map((r) => identify(r).key));
      const stale = previous.filter((p) => !wanted.has(p.key) && (p.state === 'synced' || p.state === 'pending') && !ownedByAnother(owner, p));
      const removed = await removeInReverse(stale, 0, () => ctx.heartbeat(resumeAt));
      const ours = new Map(previous.map((p) => [p.key, p]));
      const pushed: PushedResource[] = [];
      const recreated: string[] = [];
      const created: BackendResource[] = [];
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
            created.push(resource);
          } else if (result.outcome === 'created') created.push(resource);
          ctx.heartbeat(index + 1);
        }
        pushed.push(record(resource, 'synced'));
      }
      const gone = removed.filter((r) => r.state === 'deleted');
      const notified = (await tell(owner, idsOf(created), true)) + (await tell(owner, idsOf(gone), false));
      return { pushed, removed, recreated, notified };
    },

    /**
     * Deletes in reverse order. A resource that is not a valid MidoNet resource was never pushed (a push checks the
     * whole Translation first), so it is skipped rather than refused: an invalid Translation still deletes cleanly.
     */
    async deleteTranslation({ owner, resources, force }: DeleteInput): Promise<{ removed: PushedResource[]; notified: number }> {
      const ctx = Context.current();
      const resumeAt = (ctx.info.heartbeatDetails as number | undefined) ?? 0;
      await neighboursListed(owner);
      const deletable = resources.filter((resource) => checkResource(resource).ok && !ownedByAnother(owner, resource));
      const removed = await removeInReverse(deletable, resumeAt, (done) => ctx.heartbeat(done), force);
      // What MidoNet removed with them (a bridge's ports, a port's routes) may be another Translation's: it is told.
      return { removed, notified: await tell(owner, idsOf(removed.filter((r) => r.state === 'deleted')), false) };
    },
  };
}

export type PushActivities = ReturnType<typeof createPushActivities>;
