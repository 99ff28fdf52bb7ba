// The generic CRUD behaviour of MidonetResource (ref §1.2), written once. A resource module supplies only
// what differs per kind (its body schema, how a body becomes a record, its JSON rendering); paths, media
// types, allowed methods, missing-delete status and cascades come from the declarations in kinds.ts.
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { deleteRecord, rows } from './cascade';
import type { Ctx, EmulatorConfig } from './context';
import { alreadyExists, emptyStatus, notFound, type ApiError } from './errors';
import { apiBase, negotiate, param, readBody, sendCreated, sendJson, sendStatus } from './http';
import { itemUri, KINDS, type CollectionDecl, type KindName } from './kinds';
import type { ApiRouter } from './router';
import type { State } from './state';
import { isUuid } from './validation';

export interface RenderCtx {
  state: State;
  /** Absolute URI of /midonet-api as the client reached it. */
  base: string;
}

export interface WriteCtx<B> {
  state: State;
  config: EmulatorConfig;
  body: B;
  /** The key of the record being written. */
  key: string;
  parentId: string | undefined;
  collection: CollectionDecl | undefined;
}

export interface KindBehaviour<R, B> {
  kind: KindName;
  schema?: z.ZodType<B>;
  /** Key of the record a POST would create; generates the id when the body has none. */
  keyFor?: (body: B, parentId: string | undefined) => string;
  /** Checks references (404/409/400) and returns the new record. Must not change state before it cannot fail. */
  create?: (c: WriteCtx<B>) => R;
  update?: (c: WriteCtx<B> & { existing: R }) => R;
  /** Runs after the record is stored, for side effects such as a router port's Local route. */
  afterCreate?: (c: WriteCtx<B> & { record: R }) => void;
  beforeDelete?: (state: State, record: R) => void;
  render: (record: R, c: RenderCtx) => Record<string, unknown>;
  /** Overrides the default list (records whose `via` field is the parent), e.g. to keep rule order. */
  list?: (state: State, parentId: string | undefined, collection: CollectionDecl) => R[];
  /** Path segment → id part of the key, or null when it cannot name a record (→ 404). Default: a UUID. */
  parseId?: (raw: string) => string | null;
  missing?: (key: string) => ApiError;
  duplicate?: (key: string, config: EmulatorConfig) => ApiError;
}

/** Erases the record/body types so behaviours of different kinds can sit in one list. */
export type AnyBehaviour = KindBehaviour<unknown, unknown>;
export const defineKind = <R, B>(behaviour: KindBehaviour<R, B>): AnyBehaviour => behaviour as unknown as AnyBehaviour;

const parseUuid = (raw: string): string | null => (isUuid(raw) ? raw.toLowerCase() : null);

export function missingError(b: AnyBehaviour, key: string): ApiError {
  return b.missing?.(key) ?? notFound(KINDS[b.kind].storageClass, key);
}

/** Loads a record by key or throws the kind's 404. */
export function load<R>(state: State, kind: KindName, key: string): R {
  const record = rows(state, kind)[key];
  if (!record) throw notFound(KINDS[kind].storageClass, key);
  return record as R;
}

export function registerKind(router: ApiRouter, ctx: Ctx, b: AnyBehaviour): void {
  const decl = KINDS[b.kind];
  const parseId = b.parseId ?? parseUuid;

  const parentOf = (req: FastifyRequest, kind: KindName | undefined): string | undefined => {
    if (!kind) return undefined;
    const parentId = parseUuid(param(req, 'parentId'));
    // Jersey cannot convert a malformed UUID path parameter and answers 404.
    if (!parentId) throw emptyStatus(404, 'malformed parent id');
    load(ctx.store.state, kind, parentId);
    return parentId;
  };

  const itemKey = (req: FastifyRequest): string | null => {
    const parentKind = decl.collections.find((c) => c.parent)?.parent;
    const id = parseId(param(req, 'id'));
    if (id === null) return null;
    if (!decl.itemPath.includes(':parentId')) return id;
    return `${parentOf(req, parentKind)}/${id}`;
  };

  for (const collection of decl.collections) {
    router.declare(collection.path, b.kind);
    if (collection.list !== false) {
      router.add('GET', collection.path, b.kind, async (req, reply) => {
        const type = negotiate(req, decl.media, 'collection');
        const state = ctx.store.state;
        const parentId = parentOf(req, collection.parent);
        let records = b.list
          ? b.list(state, parentId, collection)
          : Object.values(rows(state, b.kind)).filter((r) => !collection.via || r[collection.via] === parentId);
        const tenant = (req.query as Record<string, string | undefined>).tenant_id;
        if (collection.tenantFilter && tenant !== undefined) {
          records = records.filter((r) => (r as { tenantId?: unknown }).tenantId === tenant);
        }
        const c = { state, base: apiBase(req) };
        return sendJson(
          reply,
          type,
          records.map((r) => b.render(r, c)),
        );
      });
    }
    if (collection.create) {
      router.add('POST', collection.path, b.kind, async (req, reply) => {
        const body = readBody(req, decl.media, b.schema!);
        const state = ctx.store.state;
        const parentId = parentOf(req, collection.parent);
        const key = b.keyFor!(body, parentId);
        if (rows(state, b.kind)[key]) {
          throw b.duplicate?.(key, ctx.config) ?? alreadyExists(decl.storageClass, key);
        }
        const c = { state, config: ctx.config, body, key, parentId, collection };
        const record = b.create!(c);
        rows(state, b.kind)[key] = record as Record<string, unknown>;
        b.afterCreate?.({ ...c, record });
        return sendCreated(reply, itemUri(b.kind, key, apiBase(req)));
      });
    }
  }

  router.add('GET', decl.itemPath, b.kind, async (req, reply) => {
    const type = negotiate(req, decl.media, 'item');
    const key = itemKey(req);
    const record = key === null ? undefined : rows(ctx.store.state, b.kind)[key];
    if (key === null || !record) throw key === null ? emptyStatus(404, 'malformed id') : missingError(b, key);
    return sendJson(reply, type, b.render(record, { state: ctx.store.state, base: apiBase(req) }));
  });

  if (decl.put) {
    router.add('PUT', decl.itemPath, b.kind, async (req, reply) => {
      const body = readBody(req, decl.media, b.schema!);
      const key = itemKey(req);
      if (key === null) throw emptyStatus(404, 'malformed id');
      const state = ctx.store.state;
      const existing = rows(state, b.kind)[key];
      if (!existing) throw missingError(b, key);
      const record = b.update!({
        state,
        config: ctx.config,
        body,
        key,
        parentId: undefined,
        collection: undefined,
        existing,
      });
      rows(state, b.kind)[key] = record as Record<string, unknown>;
      return sendStatus(reply, decl.okStatus ?? 204);
    });
  }

  router.add('DELETE', decl.itemPath, b.kind, async (req, reply) => {
    const key = itemKey(req);
    const state = ctx.store.state;
    const existing = key === null ? undefined : rows(state, b.kind)[key];
    if (key === null || !existing) {
      if (decl.missingDelete === 204) return sendStatus(reply, 204);
      throw key === null ? emptyStatus(404, 'malformed id') : missingError(b, key);
    }
    b.beforeDelete?.(state, existing);
    req.cascaded = deleteRecord(state, b.kind, key);
    return sendStatus(reply, decl.okStatus ?? 204);
  });
}
