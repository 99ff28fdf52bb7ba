// Port links (ref §1.4 PortLink): POST /ports/{id}/link pairs two free ports symmetrically; DELETE unlinks
// both sides and is idempotent. There is no GET or PUT on a link (405).
import { z } from 'zod';
import type { Ctx } from '../context';
import { load } from '../crud';
import { conflict, emptyStatus } from '../errors';
import { apiBase, param, readBody, sendCreated, sendStatus } from '../http';
import { itemUri } from '../kinds';
import { MEDIA } from '../media-types';
import type { ApiRouter } from '../router';
import type { PortRec } from '../state';
import { isUuid, uuid } from '../validation';

const schema = z.object({
  // Documented as required, but link() never reads it except to build Location.
  portId: uuid.nullish(),
  // The ref is silent on a missing peerId; it cannot work, so it is a validation error.
  peerId: uuid,
});

function portId(raw: string): string {
  if (!isUuid(raw)) throw emptyStatus(404, 'malformed port id');
  return raw.toLowerCase();
}

export function registerLinks(router: ApiRouter, ctx: Ctx): void {
  router.add('POST', '/ports/:id/link', 'PortLink', async (req, reply) => {
    const body = readBody(req, MEDIA.PortLink, schema);
    const state = ctx.store.state;
    const port = load<PortRec>(state, 'Port', portId(param(req, 'id')));
    const peer = load<PortRec>(state, 'Port', body.peerId);
    if (port.peerId !== null || peer.peerId !== null || port.id === peer.id) throw conflict('Ports are not linkable.');
    port.peerId = peer.id;
    peer.peerId = port.id;
    // Location is built from the body's portId, so it is absent when portId is (ref §1.4 PortLink).
    const location = body.portId == null ? undefined : `${itemUri('Port', body.portId, apiBase(req))}/link`;
    return sendCreated(reply, location);
  });

  router.add('DELETE', '/ports/:id/link', 'PortLink', async (req, reply) => {
    const state = ctx.store.state;
    const port = load<PortRec>(state, 'Port', portId(param(req, 'id')));
    const peer = port.peerId === null ? undefined : state.ports[port.peerId];
    if (peer) peer.peerId = null;
    port.peerId = null;
    return sendStatus(reply, 204);
  });
}
