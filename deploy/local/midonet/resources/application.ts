// GET / (ref §1.1 Root resource): a reduced Application document with the top-level links. midonet-kubernetes
// never calls it; it is here so a client can probe the API. The ref lists no fields, so only links are given.
import type { Ctx } from '../context';
import { apiBase, negotiate, sendJson } from '../http';
import { APPLICATION_TYPE } from '../media-types';
import type { ApiRouter } from '../router';

const media = { item: [APPLICATION_TYPE], collection: [], negotiation: 'jaxrs', json: true } as const;

export function registerApplication(router: ApiRouter, _ctx: Ctx): void {
  router.add('GET', '/', 'Application', async (req, reply) => {
    const type = negotiate(req, media, 'item');
    const base = apiBase(req);
    const links = ['bridges', 'routers', 'ports', 'chains', 'hosts', 'tunnel_zones'];
    return sendJson(reply, type, {
      uri: `${base}/`,
      version: 'v5',
      ...Object.fromEntries(links.map((l) => [l.replace(/_(.)/g, (_m, c: string) => c.toUpperCase()), `${base}/${l}`])),
      bridgeTemplate: `${base}/bridges/{id}`,
      routerTemplate: `${base}/routers/{id}`,
      portTemplate: `${base}/ports/{id}`,
      chainTemplate: `${base}/chains/{id}`,
      ruleTemplate: `${base}/rules/{id}`,
      routeTemplate: `${base}/routes/{id}`,
      hostTemplate: `${base}/hosts/{id}`,
      tunnelZoneTemplate: `${base}/tunnel_zones/{id}`,
    });
  });
}
