// Helpers for the conformance suite: start an emulator on a free port and talk to it over HTTP as a client
// would. Media types are spelled out from the ref (§1.3) rather than imported, so the tests check the code.
import { request as httpRequest } from 'node:http';
import { EmulatorAdmin, startMidonetEmulator, type MidonetEmulator, type MidonetEmulatorOptions } from '../index';

const vnd = (name: string): string => `application/vnd.org.midonet.${name}+json`;

/** Item and collection media types, as ref §1.3 lists them. */
export const T = {
  bridge: vnd('Bridge-v4'),
  bridges: vnd('collection.Bridge-v4'),
  router: vnd('Router-v3'),
  routers: vnd('collection.Router-v3'),
  port: vnd('Port-v3'),
  ports: vnd('collection.Port-v3'),
  link: vnd('PortLink-v1'),
  route: vnd('Route-v1'),
  routes: vnd('collection.Route-v1'),
  chain: vnd('Chain-v1'),
  chains: vnd('collection.Chain-v1'),
  rule: vnd('Rule-v2'),
  rules: vnd('collection.Rule-v2'),
  host: vnd('Host-v3'),
  hosts: vnd('collection.Host-v3'),
  hostPort: vnd('HostInterfacePort-v1'),
  hostPorts: vnd('collection.HostInterfacePort-v1'),
  tunnelZone: vnd('TunnelZone-v1'),
  tunnelZones: vnd('collection.TunnelZone-v1'),
  tunnelZoneHost: vnd('TunnelZoneHost-v1'),
  tunnelZoneHosts: vnd('collection.TunnelZoneHost-v1'),
  /** midonet-kubernetes' spelling; the server declares MacPort (ref §1.3). */
  macPort: vnd('MACPort-v2'),
  macPorts: vnd('collection.MacPort-v2'),
  arp: vnd('IP4Mac-v1'),
  arps: vnd('collection.IP4Mac-v1'),
  error: vnd('Error-v1'),
  token: vnd('Token-v1'),
} as const;

export interface Reply {
  status: number;
  /** Lower-case names. */
  headers: { get(name: string): string | null };
  text: string;
  /** Parsed body, or undefined when empty. */
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
}

export interface RequestOptions {
  /** Content-Type; `null` sends none. */
  type?: string | null;
  /** Accept; `null` sends none. */
  accept?: string | null;
  body?: unknown;
  /** X-Auth-Token; `null` sends none. Default: the client's token. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** node:http rather than fetch: fetch adds headers (Accept: *\/*) that some tests must leave out. */
function send(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; headers: Reply['headers']; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: {
            get: (name) => {
              const value = res.headers[name.toLowerCase()];
              return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
            },
          },
          text,
        }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

export class Api {
  token: string | undefined;

  constructor(readonly url: string) {}

  async login(user = 'admin', password = 'secret'): Promise<string> {
    const res = await this.request('POST', '/login', {
      token: null,
      headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
    });
    if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
    this.token = (res.json as { key: string }).key;
    return this.token;
  }

  async request(method: string, path: string, o: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? this.token : o.token;
    if (token != null) headers['x-auth-token'] = token;
    if (o.accept != null) headers.accept = o.accept;
    if (o.body !== undefined && o.type !== null) headers['content-type'] = o.type ?? 'application/json';
    const payload = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    const res = await send(method, this.url + path, headers, payload);
    const text = res.text;
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  post(path: string, type: string, body: unknown): Promise<Reply> {
    return this.request('POST', path, { type, body });
  }

  put(path: string, type: string, body: unknown): Promise<Reply> {
    return this.request('PUT', path, { type, body });
  }

  get(path: string, accept: string): Promise<Reply> {
    return this.request('GET', path, { accept });
  }

  delete(path: string): Promise<Reply> {
    return this.request('DELETE', path);
  }

  /** POST that must succeed; returns the Location header. */
  async create(path: string, type: string, body: unknown): Promise<string> {
    const res = await this.post(path, type, body);
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
    return res.headers.get('location') ?? '';
  }
}

export interface Harness {
  emulator: MidonetEmulator;
  admin: EmulatorAdmin;
  api: Api;
}

/** Starts an emulator on a free port with a logged-in client. Close `emulator` in afterAll. */
export async function startHarness(options: MidonetEmulatorOptions = {}): Promise<Harness> {
  const emulator = await startMidonetEmulator({ port: 0, ...options });
  const api = new Api(emulator.url);
  await api.login();
  return { emulator, admin: new EmulatorAdmin(emulator.adminUrl), api };
}

/** A fixed, readable UUID per small number, so failures name the object. */
export const id = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

/** Builds a small topology used by several suites: a router, a bridge, linked ports, a host in a zone. */
export async function topology(h: Harness): Promise<void> {
  const { api, admin } = h;
  await admin.seedHost({ id: id(900), name: 'node-1', interfaces: [{ name: 'eth0' }] });
  await api.create('/tunnel_zones', T.tunnelZone, { id: id(800), name: 'zone', type: 'vxlan' });
  await api.create(`/tunnel_zones/${id(800)}/hosts`, T.tunnelZoneHost, { hostId: id(900), ipAddress: '192.0.2.1' });
  await api.create('/routers', T.router, { id: id(1), name: 'cluster' });
  await api.create('/bridges', T.bridge, { id: id(2), name: 'node-1' });
  await api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(3), type: 'Bridge' });
  await api.create(`/routers/${id(1)}/ports`, T.port, { id: id(4), type: 'Router', portSubnet: ['10.1.2.1/24'] });
  await api.create(`/ports/${id(3)}/link`, T.link, { portId: id(3), peerId: id(4) });
  await api.create(`/routers/${id(1)}/routes`, T.route, {
    id: id(5),
    type: 'Normal',
    srcNetworkAddr: '0.0.0.0',
    srcNetworkLength: 0,
    dstNetworkAddr: '10.1.2.0',
    dstNetworkLength: 24,
    nextHopPort: id(4),
  });
  await api.create(`/bridges/${id(2)}/ports`, T.port, { id: id(6), type: 'Bridge' });
  await api.create(`/hosts/${id(900)}/ports`, T.hostPort, { portId: id(6), interfaceName: 'midokube-mido' });
}
