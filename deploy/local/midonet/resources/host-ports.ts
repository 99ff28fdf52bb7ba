// Host interface port bindings (ref §1.4 HostInterfacePort). A binding is data on the Port (hostId +
// interfaceName), so this is a view: POST runs the five checks in the server's order, DELETE clears the pair.
import { z } from 'zod';
import type { Ctx } from '../context';
import { load } from '../crud';
import { ApiError, conflict, emptyStatus } from '../errors';
import { apiBase, negotiate, param, readBody, sendCreated, sendJson, sendStatus } from '../http';
import { itemUri } from '../kinds';
import { MEDIA } from '../media-types';
import type { ApiRouter } from '../router';
import type { HostRec, PortRec } from '../state';
import { isUuid, uuid } from '../validation';

const schema = z.object({
  portId: uuid,
  interfaceName: z.string().min(1),
  // A hostId in the body is ignored: the path wins.
});

function id(raw: string): string {
  if (!isUuid(raw)) throw emptyStatus(404, 'malformed id');
  return raw.toLowerCase();
}

export function renderBinding(port: PortRec, base: string): Record<string, unknown> {
  const host = itemUri('Host', port.hostId!, base);
  return {
    portId: port.id,
    hostId: port.hostId,
    interfaceName: port.interfaceName,
    uri: `${host}/ports/${port.id}`,
    host,
    port: itemUri('Port', port.id, base),
  };
}

export function registerHostPorts(router: ApiRouter, ctx: Ctx): void {
  const kind = 'HostInterfacePort';

  router.add('GET', '/hosts/:parentId/ports', kind, async (req, reply) => {
    const type = negotiate(req, MEDIA.HostInterfacePort, 'collection');
    const state = ctx.store.state;
    const host = load<HostRec>(state, 'Host', id(param(req, 'parentId')));
    const base = apiBase(req);
    const bound = Object.values(state.ports).filter((p) => p.hostId === host.id && p.interfaceName !== null);
    return sendJson(
      reply,
      type,
      bound.map((p) => renderBinding(p, base)),
    );
  });

  router.add('POST', '/hosts/:parentId/ports', kind, async (req, reply) => {
    const body = readBody(req, MEDIA.HostInterfacePort, schema);
    const state = ctx.store.state;
    const host = load<HostRec>(state, 'Host', id(param(req, 'parentId')));
    if (!Object.values(state.tunnelZoneHosts).some((m) => m.hostId === host.id)) {
      throw conflict('The specified host is not in any tunnel zone.');
    }
    const port = load<PortRec>(state, 'Port', body.portId);
    if (port.interfaceName !== null) throw conflict(`Port ${port.id} is already bound to an interface`);
    if (Object.values(state.ports).some((p) => p.hostId === host.id && p.interfaceName === body.interfaceName)) {
      throw conflict(`Interface ${body.interfaceName} is already bound to a port.`);
    }
    port.hostId = host.id;
    port.interfaceName = body.interfaceName;
    return sendCreated(reply, `${itemUri('Host', host.id, apiBase(req))}/ports/${port.id}`);
  });

  router.add('GET', '/hosts/:parentId/ports/:id', kind, async (req, reply) => {
    const type = negotiate(req, MEDIA.HostInterfacePort, 'item');
    const state = ctx.store.state;
    const host = load<HostRec>(state, 'Host', id(param(req, 'parentId')));
    const port = state.ports[id(param(req, 'id'))];
    if (port?.hostId !== host.id) throw new ApiError(404, 'Host interface port not found');
    return sendJson(reply, type, renderBinding(port, apiBase(req)));
  });

  router.add('DELETE', '/hosts/:parentId/ports/:id', kind, async (req, reply) => {
    // The host in the path is not checked upstream; only the port must exist.
    const port = load<PortRec>(ctx.store.state, 'Port', id(param(req, 'id')));
    if (port.hostId !== null) port.previousHostId = port.hostId;
    port.hostId = null;
    port.interfaceName = null;
    return sendStatus(reply, 204);
  });
}
