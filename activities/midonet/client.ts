// The typed MidoNet client. ensure / remove / observe are written once here for every kind; what differs between
// kinds (paths, media types, PUT or not, what a duplicate answers) is data in kinds.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { identify, type BackendKind, type BackendResource } from '../../model/translation/types';
import { checkResource, type Resolved } from './check';
import { diffBody, type FieldDiff } from './compare';
import {
  midonetFailure,
  missingFailure,
  replyFailure,
  wrongObjectFailure,
  type MidonetFailureDetails,
  type Reply,
} from './errors';
import { createTransport, type Call, type MidonetConnection, type Send } from './http';
import {
  host,
  hostsCollection,
  tenantCollections,
  tenantResource,
  type MidonetBody,
  type MidonetHost,
  type TenantKind,
} from './kinds';

export type EnsureResult =
  | { outcome: 'created' }
  | { outcome: 'unchanged' }
  | { outcome: 'updated'; diff: FieldDiff[] }
  /** The object exists with another body and cannot be changed in place; the caller decides (delete + create, or an operator). */
  | { outcome: 'conflict'; diff: FieldDiff[]; reason: string };

/** `deleted` does not prove the object existed: Router, Route and TunnelZone answer 204 for missing ones too. */
export type RemoveResult = { outcome: 'deleted' } | { outcome: 'absent' };

export type MidonetObservation = { exists: false } | { exists: true; upToDate: boolean; diff: FieldDiff[] };

export interface MidonetClient {
  /**
   * Create, or bring an existing object to the body where the API allows it. Idempotent. Given what `observe` just
   * found, it starts from that: nothing is posted for an object that is there.
   */
  ensure(resource: BackendResource, observed?: MidonetObservation): Promise<EnsureResult>;
  /**
   * Delete and create again: how a kind without PUT takes a new body. An ordered kind (a rule) is created at the
   * position the old one held, so traffic keeps going through its chain in the same order.
   */
  replace(resource: BackendResource): Promise<void>;
  /** Delete; an object already gone counts as done. */
  remove(resource: BackendResource): Promise<RemoveResult>;
  /** Delete a resource known only by its kind and ID (a record in `status.childResources`); kinds with an ID of their own only. */
  removeById(kind: BackendKind, id: string): Promise<RemoveResult>;
  /** Read only: does it exist, and what differs from the body. */
  observe(resource: BackendResource): Promise<MidonetObservation>;
  listHosts(): Promise<MidonetHost[]>;
  /** The Bridges, Routers or Chains whose `tenantId` is this tenant. */
  listTenant(kind: TenantKind, tenant: string): Promise<TenantResource[]>;
}

export interface TenantResource {
  kind: TenantKind;
  id: string;
  name?: string;
}

/** Builds a Translation entry from a typed body, so callers get the kind's body type checked. */
export function backendResource<K extends BackendKind>(kind: K, parent: string, body: MidonetBody<K>): BackendResource {
  return { kind, parent, body: JSON.stringify(body) };
}

const ok = (reply: Reply): boolean => reply.status >= 200 && reply.status < 300;
const observedObject = z.record(z.string(), z.unknown());
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** Where a kind with IDs of its own keeps each (kinds.ts `item` paths, which need only the ID for these). */
const ITEMS_BY_ID: Partial<Record<BackendKind, string>> = {
  TunnelZone: '/tunnel_zones',
  Router: '/routers',
  Bridge: '/bridges',
  Port: '/ports',
  Route: '/routes',
  Chain: '/chains',
  Rule: '/rules',
};

function resolve(resource: BackendResource): Resolved {
  const checked = checkResource(resource);
  if (checked.ok) return checked.resolved;
  const { field, message } = checked.problem;
  throw midonetFailure(
    'MidonetBadResource',
    `${resource.kind} resource (parent ${resource.parent || 'none'}): ${field}: ${message}`,
  );
}

/** An object MidoNet answered with, accepted only if it names the resource asked for (`Resolved.names`). */
const namedAs = (r: Resolved) =>
  z.looseObject(
    Object.fromEntries(
      Object.entries(r.names).map(([field, asked]) => [
        field,
        z.string().refine((value) => value.toLowerCase() === asked.toLowerCase(), {
          error: (issue) => `is ${JSON.stringify(issue.input)}, not ${asked}`,
        }),
      ]),
    ),
  );

/**
 * Refuses a success reply about another object (a body, or a POST's Location naming an ID that is not this
 * resource's): acting on it would take another object's state for this one's, e.g. call it drift and replace it.
 */
function refuseOtherObject(method: Call['method'], path: string, reply: Reply, r: Resolved): void {
  const body = observedObject.safeParse(reply.json);
  const about = body.success ? namedAs(r).safeParse(body.data) : undefined;
  if (about && !about.success) throw wrongObjectFailure(method, path, reply, z.prettifyError(about.error));
  const own = new Set([r.parent, ...Object.values(r.names)].map((id) => id.toLowerCase()));
  const foreign = (reply.location?.match(UUIDS) ?? []).filter((id) => !own.has(id.toLowerCase()));
  if (foreign.length) throw wrongObjectFailure(method, path, reply, `Location ${reply.location} names ${foreign[0]}`);
}

// Shared with the pusher's machine, which records what a push may have created before it knows.
export { identify };

/** The object MidoNet holds for this resource, or undefined. */
async function read(send: Send, r: Resolved): Promise<Record<string, unknown> | undefined> {
  const { path, media } = r.paths.observe ?? { path: r.paths.item, media: r.spec.media };
  const reply = await send({ method: 'GET', path, media });
  if (reply.status === 404) return undefined;
  if (!ok(reply)) throw replyFailure('GET', path, reply);
  const observed = observedObject.safeParse(reply.json);
  if (!observed.success)
    throw midonetFailure('MidonetBadResponse', `MidoNet GET ${path} answered ${reply.status} without a JSON object`, {
      method: 'GET',
      path,
      status: reply.status,
    });
  refuseOtherObject('GET', path, reply, r);
  return r.spec.present && !r.spec.present(observed.data) ? undefined : observed.data;
}

async function observeResolved(send: Send, r: Resolved): Promise<MidonetObservation> {
  const observed = await read(send, r);
  if (!observed) return { exists: false };
  const diff = diffBody(r.body, observed, r.spec.ignore);
  return { exists: true, upToDate: diff.length === 0, diff };
}

async function create(send: Send, r: Resolved, raw = r.raw): Promise<Reply> {
  const posted = await send({ method: 'POST', path: r.paths.create, media: r.spec.media, body: raw });
  if (posted.status === 404) throw missingFailure('POST', r.paths.create, posted, r.parent);
  if (ok(posted)) refuseOtherObject('POST', r.paths.create, posted, r);
  return posted;
}

async function removeAt(send: Send, item: string): Promise<RemoveResult> {
  const reply = await send({ method: 'DELETE', path: item });
  if (ok(reply)) return { outcome: 'deleted' };
  // Cascades routinely take later resources with them (a chain its rules, a bridge its ports).
  if (reply.status === 404) return { outcome: 'absent' };
  throw replyFailure('DELETE', item, reply);
}

async function list<T>(send: Send, path: string, media: string, item: z.ZodType<T>): Promise<T[]> {
  const reply = await send({ method: 'GET', path, media });
  if (!ok(reply)) throw replyFailure('GET', path, reply);
  const items = z.array(item).safeParse(reply.json);
  if (!items.success)
    throw midonetFailure('MidonetBadResponse', `MidoNet GET ${path}: ${z.prettifyError(items.error)}`, {
      method: 'GET',
      path,
      status: reply.status,
    });
  return items.data;
}

export function createMidonetClient(
  connection: MidonetConnection,
  onExchange?: (answered: boolean) => void,
): MidonetClient {
  const send: Send = createTransport(connection, onExchange);

  async function ensure(resource: BackendResource, observed?: MidonetObservation): Promise<EnsureResult> {
    const r = resolve(resource);
    const { item } = r.paths;
    let seen = observed;
    if (!seen?.exists) {
      const posted = await create(send, r);
      if (ok(posted)) return { outcome: 'created' };
      if (!r.spec.duplicate.includes(posted.status)) throw replyFailure('POST', r.paths.create, posted);
      seen = await observeResolved(send, r);
      // "Already exists" but nothing there: a 409 for another reason (e.g. a host not yet in a tunnel zone), or a real 500.
      if (!seen.exists) throw replyFailure('POST', r.paths.create, posted);
    }
    if (seen.upToDate) return { outcome: 'unchanged' };
    if (!r.spec.put)
      return { outcome: 'conflict', diff: seen.diff, reason: `MidoNet cannot update a ${r.kind} in place (no PUT)` };

    const put = await send({ method: 'PUT', path: item, media: r.spec.media, body: r.raw });
    if (ok(put)) refuseOtherObject('PUT', item, put, r);
    if (ok(put)) return { outcome: 'updated', diff: seen.diff };
    // e.g. a TunnelZone PUT that keeps its name always clashes with itself (MNA-1293).
    if (put.status === 409)
      return { outcome: 'conflict', diff: seen.diff, reason: replyFailure('PUT', item, put).message };
    if (put.status === 404)
      throw missingFailure('PUT', item, put, r.parent, typeof r.body.id === 'string' ? r.body.id : undefined);
    throw replyFailure('PUT', item, put);
  }

  async function remove(resource: BackendResource): Promise<RemoveResult> {
    return removeAt(send, resolve(resource).paths.item);
  }

  async function replace(resource: BackendResource): Promise<void> {
    const r = resolve(resource);
    const position = r.spec.ordered && r.body.position == null ? (await read(send, r))?.position : undefined;
    await removeAt(send, r.paths.item);
    const raw = typeof position === 'number' ? JSON.stringify({ ...(JSON.parse(r.raw) as object), position }) : r.raw;
    const posted = await create(send, r, raw);
    if (!ok(posted)) throw replyFailure('POST', r.paths.create, posted);
  }

  async function removeById(kind: BackendKind, id: string): Promise<RemoveResult> {
    const collection = ITEMS_BY_ID[kind];
    if (!collection || !z.guid().safeParse(id).success)
      throw midonetFailure('MidonetBadResource', `${kind} ${id}: not a kind with IDs of its own, or not a UUID`);
    return removeAt(send, `${collection}/${id}`);
  }

  const listHosts = () => list(send, hostsCollection.path, hostsCollection.media, host);

  async function listTenant(kind: TenantKind, tenant: string): Promise<TenantResource[]> {
    const { path, media } = tenantCollections[kind];
    const listed = await list(send, `${path}?tenant_id=${encodeURIComponent(tenant)}`, media, tenantResource);
    // Checked again here: a server that ignored the filter must not hand the sweeper another tenant's objects.
    return listed
      .filter((r) => r.tenantId === tenant)
      .map((r) => ({ kind, id: r.id, ...(r.name ? { name: r.name } : {}) }));
  }

  return {
    ensure,
    replace,
    remove,
    removeById,
    observe: (resource) => observeResolved(send, resolve(resource)),
    listHosts,
    listTenant,
  };
}

const KEEP_ALIVE_MS = 5_000;

/**
 * The client, whose calls fail only once what they left unknown is settled. A write that got no answer (a timeout, a
 * connection cut after sending) may still be carried out by MidoNet afterwards; acting before then races it. The
 * race it closes: a deletion's retry meets 404, its finalizer goes, and the late DELETE removes what the next
 * incarnation (same name, same IDs) pushed. So such a failure is thrown after the time the transport gives (`lateWriteMs`),
 * calling `keepAlive` meanwhile (an activity's heartbeat, with its progress).
 */
export function settlingUnanswered(client: MidonetClient, keepAlive: () => void): MidonetClient {
  const settled = async (error: unknown): Promise<never> => {
    const until =
      error instanceof ApplicationFailure
        ? (error.details?.[0] as MidonetFailureDetails | undefined)?.unsettledUntil
        : undefined;
    for (let left = (until ?? 0) - Date.now(); left > 0; left = (until ?? 0) - Date.now()) {
      keepAlive();
      await sleep(Math.min(left, KEEP_ALIVE_MS));
    }
    throw error;
  };
  const settle = <R>(call: Promise<R>): Promise<R> => call.catch(settled);
  return {
    ensure: (resource, observed) => settle(client.ensure(resource, observed)),
    replace: (resource) => settle(client.replace(resource)),
    remove: (resource) => settle(client.remove(resource)),
    removeById: (kind, id) => settle(client.removeById(kind, id)),
    observe: (resource) => settle(client.observe(resource)),
    listHosts: () => settle(client.listHosts()),
    listTenant: (kind, tenant) => settle(client.listTenant(kind, tenant)),
  };
}
