import { backendResource, createMidonetClient } from './client';
import type { BackendKind, BackendResource } from '../../model/translation/types';
import { kinds } from './kinds';

const P = '11111111-2222-3333-4444-555555555555';
const I = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';

describe('kind table', () => {
  // [what it checks, kind, parent, body, POST path, item path]
  const cases: Array<[string, BackendKind, string, Record<string, unknown>, string, string]> = [
    [
      'a tunnel zone is top level',
      'TunnelZone',
      '',
      { id: I, name: 'z', type: 'vxlan' },
      '/tunnel_zones',
      `/tunnel_zones/${I}`,
    ],
    [
      'a tunnel zone member is keyed by host id under its zone',
      'TunnelZoneHost',
      P,
      { hostId: I, ipAddress: '192.0.2.1' },
      `/tunnel_zones/${P}/hosts`,
      `/tunnel_zones/${P}/hosts/${I}`,
    ],
    ['a router is top level', 'Router', '', { id: I }, '/routers', `/routers/${I}`],
    ['a bridge is top level', 'Bridge', '', { id: I }, '/bridges', `/bridges/${I}`],
    [
      'a Bridge-type port is created under its bridge, updated at /ports',
      'Port',
      P,
      { id: I, type: 'Bridge' },
      `/bridges/${P}/ports`,
      `/ports/${I}`,
    ],
    [
      'a Router-type port is created under its router',
      'Port',
      P,
      { id: I, type: 'Router' },
      `/routers/${P}/ports`,
      `/ports/${I}`,
    ],
    [
      'a legacy InteriorBridge port still goes under the bridge',
      'Port',
      P,
      { id: I, type: 'InteriorBridge' },
      `/bridges/${P}/ports`,
      `/ports/${I}`,
    ],
    [
      'a link is posted and deleted on its port',
      'PortLink',
      P,
      { portId: null, peerId: I },
      `/ports/${P}/link`,
      `/ports/${P}/link`,
    ],
    [
      'a route is created under its router, read at /routes',
      'Route',
      P,
      {
        id: I,
        type: 'Normal',
        srcNetworkAddr: '0.0.0.0',
        srcNetworkLength: 0,
        dstNetworkAddr: '10.1.0.0',
        dstNetworkLength: 24,
      },
      `/routers/${P}/routes`,
      `/routes/${I}`,
    ],
    ['a chain is top level', 'Chain', '', { id: I }, '/chains', `/chains/${I}`],
    [
      'a rule is created in its chain, read at /rules',
      'Rule',
      P,
      { id: I, type: 'rev_dnat', flowAction: 'accept' },
      `/chains/${P}/rules`,
      `/rules/${I}`,
    ],
    [
      'a binding is keyed by port id under its host',
      'HostInterfacePort',
      P,
      { hostId: P, portId: I, interfaceName: 'midokube-mido' },
      `/hosts/${P}/ports`,
      `/hosts/${P}/ports/${I}`,
    ],
    [
      'a MAC entry key uses dashes and the port id',
      'MACPort',
      P,
      { macAddr: 'ac:ca:ba:ca:12:f3', portId: I },
      `/bridges/${P}/mac_table`,
      `/bridges/${P}/mac_table/ac-ca-ba-ca-12-f3_${I}`,
    ],
    [
      'an ARP entry key is the IP and the dashed MAC',
      'IPv4MACPair',
      P,
      { ip: '10.1.2.2', mac: 'ac:ca:ba:ca:12:f3' },
      `/bridges/${P}/arp_table`,
      `/bridges/${P}/arp_table/10.1.2.2_ac-ca-ba-ca-12-f3`,
    ],
  ];
  it.each(cases)('%s', (_what, kind, parent, body, create, item) => {
    const paths = (kinds[kind].paths as (p: string, b: unknown) => { create: string; item: string })(parent, body);
    expect(paths).toMatchObject({ create, item });
  });

  it('only TunnelZone, Router, Bridge and Port have PUT, as in the real API', () => {
    expect(
      Object.entries(kinds)
        .filter(([, spec]) => spec.put)
        .map(([kind]) => kind),
    ).toEqual(['TunnelZone', 'Router', 'Bridge', 'Port']);
  });
});

describe('resource input', () => {
  // Never reaches the network: input is rejected before any call. The input is what a hand-written Translation may
  // carry, which the types do not allow: the client checks it at run time.
  const client = createMidonetClient({
    baseUrl: 'http://127.0.0.1:1/midonet-api',
    username: 'u',
    password: 'p',
    request: () => Promise.reject(new Error('no network in this test')),
  });
  const cases: Array<[string, { kind: string; parent?: string; body: string }, RegExp]> = [
    ['an unknown kind is named', { kind: 'Vtep', body: '{}' }, /unknown kind/],
    [
      'a parent on a top-level kind is refused',
      { kind: 'Bridge', parent: P, body: JSON.stringify({ id: I }) },
      /has no parent/,
    ],
    [
      'a child kind without its parent is refused',
      { kind: 'Rule', parent: '', body: JSON.stringify({ id: I, type: 'accept' }) },
      /parent is required/,
    ],
    ['a body that is not JSON is refused', { kind: 'Chain', body: '{id:' }, /not JSON/],
    [
      'a body without the id the paths need is refused, naming the field',
      { kind: 'Chain', body: '{"name":"x"}' },
      /id/,
    ],
  ];
  it.each(cases)('%s', async (_what, resource, message) => {
    const failure = await client.ensure(resource as BackendResource).catch((e: unknown) => e);
    expect(failure).toMatchObject({ type: 'MidonetBadResource', nonRetryable: true });
    expect((failure as Error).message).toMatch(message);
  });

  it('backendResource writes the typed body as the JSON string a Translation holds', () => {
    expect(backendResource('Chain', '', { id: I, name: 'KUBE-MAIN' })).toEqual({
      kind: 'Chain',
      parent: '',
      body: `{"id":"${I}","name":"KUBE-MAIN"}`,
    });
  });
});
