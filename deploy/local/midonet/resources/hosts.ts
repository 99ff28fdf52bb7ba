// Hosts (ref §1.4 Host). Agents register hosts upstream; here the admin endpoint seeds them (admin.ts), and
// the public API offers what the real one does to clients: list, get, the four-field PUT (200) and a
// DELETE (200) refused with 403 while the host is alive or has bindings.
import { z } from 'zod';
import type { Ctx } from '../context';
import { defineKind, load, type RenderCtx } from '../crud';
import { ApiError } from '../errors';
import { apiBase, negotiate, param, sendJson } from '../http';
import { itemUri } from '../kinds';
import { MEDIA } from '../media-types';
import type { ApiRouter } from '../router';
import type { HostInterfaceRec, HostRec } from '../state';

const putSchema = z.object({
  floodingProxyWeight: z.number().int().min(0),
  containerWeight: z.number().int().min(0),
  containerLimit: z.number().int().min(0),
  enforceContainerLimit: z.boolean(),
});
type PutBody = z.infer<typeof putSchema>;

function renderInterface(host: HostRec, i: HostInterfaceRec, base: string): Record<string, unknown> {
  return { hostId: host.id, ...i, uri: `${itemUri('Host', host.id, base)}/interfaces/${encodeURIComponent(i.name)}` };
}

export function renderHost(h: HostRec, { base }: Pick<RenderCtx, 'base'>): Record<string, unknown> {
  const uri = itemUri('Host', h.id, base);
  const { interfaces, ...rest } = h;
  return {
    ...rest,
    hostInterfaces: interfaces.map((i) => renderInterface(h, i, base)),
    uri,
    ports: `${uri}/ports`,
    interfaces: `${uri}/interfaces`,
  };
}

export const hosts = defineKind<HostRec, PutBody>({
  kind: 'Host',
  schema: putSchema,
  update: ({ existing, body }) => ({ ...existing, ...body }),
  beforeDelete: (state, host) => {
    // 403 texts are not in the ref; these say which precondition failed.
    if (host.alive) throw new ApiError(403, `Host ${host.id} is alive.`);
    if (Object.values(state.ports).some((p) => p.hostId === host.id)) {
      throw new ApiError(403, `Host ${host.id} has port bindings.`);
    }
  },
  render: renderHost,
});

/** GET /hosts/{id}/interfaces (media type not in the ref; see media-types.ts). */
export function registerHostInterfaces(router: ApiRouter, ctx: Ctx): void {
  router.add('GET', '/hosts/:parentId/interfaces', 'Host', async (req, reply) => {
    const type = negotiate(req, MEDIA.HostInterface, 'collection');
    const host = load<HostRec>(ctx.store.state, 'Host', param(req, 'parentId').toLowerCase());
    const base = apiBase(req);
    return sendJson(
      reply,
      type,
      host.interfaces.map((i) => renderInterface(host, i, base)),
    );
  });
}
