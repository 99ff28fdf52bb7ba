// What bridges and routers, MidoNet's two virtual devices, share (ref §1.4 Bridge, Router): their first body
// fields, chain and mirror references, the links GET renders, and a PUT that rebuilds the record as POST does.
// Each kind places its own fields between these pieces, so records and `violations` keep the kind's field order.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineKind, type AnyBehaviour, type RenderCtx } from '../crud';
import { itemUri } from '../kinds';
import { requireNone } from '../refs';
import type { DeviceRec, State } from '../state';
import { uuid, uuidList } from '../validation';

/** The body fields both device schemas open with. */
export const fields = {
  id: uuid.nullish(),
  tenantId: z.string().nullish(),
  name: z.string().max(255).nullish(),
  adminStateUp: z.boolean().nullish(),
  inboundFilterId: uuid.nullish(),
  outboundFilterId: uuid.nullish(),
};

export const mirrorFields = { inboundMirrorIds: uuidList, outboundMirrorIds: uuidList };

type DeviceBody = z.infer<z.ZodObject<typeof fields & typeof mirrorFields>>;

/** Mirrors are not emulated, so naming one is a 404. */
export function requireNoMirrors(b: DeviceBody): void {
  requireNone('Mirror', b.inboundMirrorIds);
  requireNone('Mirror', b.outboundMirrorIds);
}

/** The record fields both kinds open with; absent means null, and a device is up unless told otherwise. */
export function head(id: string, b: DeviceBody): Omit<DeviceRec, keyof typeof mirrorFields> {
  return {
    id,
    tenantId: b.tenantId ?? null,
    name: b.name ?? null,
    adminStateUp: b.adminStateUp ?? true,
    inboundFilterId: b.inboundFilterId ?? null,
    outboundFilterId: b.outboundFilterId ?? null,
  };
}

export function mirrorLists(b: DeviceBody): Pick<DeviceRec, keyof typeof mirrorFields> {
  return { inboundMirrorIds: b.inboundMirrorIds ?? [], outboundMirrorIds: b.outboundMirrorIds ?? [] };
}

export function chainUri(id: string | null, base: string): string | null {
  return id === null ? null : itemUri('Chain', id, base);
}

/** The links a device's GET starts with; each kind adds its own sub-resources under `uri`. */
export function links(kind: 'Bridge' | 'Router', r: DeviceRec, base: string) {
  const uri = itemUri(kind, r.id, base);
  return {
    uri,
    inboundFilter: chainUri(r.inboundFilterId, base),
    outboundFilter: chainUri(r.outboundFilterId, base),
    ports: `${uri}/ports`,
    peerPorts: `${uri}/peer_ports`,
  };
}

/** A device kind: a POST without an id gets a fresh UUID, and PUT replaces every user field. */
export function define<R extends DeviceRec, B extends DeviceBody>(device: {
  kind: 'Bridge' | 'Router';
  schema: z.ZodType<B>;
  fromBody: (state: State, id: string, body: B) => R;
  render: (record: R, c: RenderCtx) => Record<string, unknown>;
}): AnyBehaviour {
  const { kind, schema, fromBody, render } = device;
  return defineKind<R, B>({
    kind,
    schema,
    keyFor: (b) => b.id ?? randomUUID(),
    create: ({ state, key, body }) => fromBody(state, key, body),
    update: ({ state, key, body }) => fromBody(state, key, body),
    render,
  });
}
