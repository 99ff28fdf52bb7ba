// Issue 3 acceptance: the sample cluster's Translations (2 Nodes, 3 Pods, a Service with 2 ports, its Endpoints,
// the globals) pushed with the client into the emulator give exactly the expected backend objects; removing them
// in reverse order leaves only what must stay; the emulator's state survives a restart.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmulatorAdmin, startMidonetEmulator, type MidonetEmulator, type StateDump } from '../../deploy/local/midonet';
import {
  SAMPLE_CLUSTER_RESOURCE_COUNTS,
  sampleCluster,
  sampleClusterTranslations,
} from '../../model/translation/sample-cluster';
import { createMidonetClient, type MidonetClient } from './client';

const cluster = sampleCluster();
const translations = sampleClusterTranslations(cluster);
// The deployer creates the cluster router (seed 001); Steward finds it there and never removes it.
const ROUTER_TRANSLATION = 'midonet-global.4.cluster-router';
const routerResource = translations.find((t) => t.name === ROUTER_TRANSLATION)!.resources[0]!;
const CLUSTER_ROUTER = '21607839-c6b4-5b98-8aa1-89a1aab61bca';

let dir: string;
let emulator: MidonetEmulator;
let admin: EmulatorAdmin;
let client: MidonetClient;

async function start(): Promise<void> {
  emulator = await startMidonetEmulator({ port: 0, dataFile: join(dir, 'midonet.json') });
  admin = new EmulatorAdmin(emulator.adminUrl);
  client = createMidonetClient({ baseUrl: emulator.url, username: 'admin', password: 'secret' });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'steward-sample-cluster-'));
  await start();
});
afterAll(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  await admin.reset();
  for (const host of cluster.hosts) await admin.seedHost(host);
  await client.ensure(routerResource);
});

/** Every resource of every Translation, in order; the outcome of each ensure, keyed `<translation> <kind> <n>`. */
async function pushAll(): Promise<Record<string, string>> {
  const outcomes: Record<string, string> = {};
  for (const t of translations) {
    for (const [i, r] of t.resources.entries()) outcomes[`${t.name} ${r.kind} ${i}`] = (await client.ensure(r)).outcome;
  }
  return outcomes;
}

const ids = (entries: Record<string, unknown>[] | undefined) => (entries ?? []).map((e) => e.id as string).sort();
const count = (dump: StateDump) =>
  Object.fromEntries(Object.entries(dump).map(([kind, entries]) => [kind, entries.length]));
/** IDs the Translations give a kind. */
const translatedIds = (kind: string) =>
  translations
    .flatMap((t) => t.resources)
    .filter((r) => r.kind === kind)
    .map((r) => (JSON.parse(r.body) as { id: string }).id)
    .sort();
// A link is symmetric: the dump may list it from either end.
const pair = (a: unknown, b: unknown) => [String(a), String(b)].sort().join('↔');
/** One key per object of a kind without an id, from a Translation entry and from the dump. */
interface Keyed {
  fromTranslation: (parent: string, body: Record<string, string>) => string;
  fromDump: (e: Record<string, unknown>) => string;
}
/** Keyed by the parent and `fields`; the dump names the parent `parentField`. */
const byParentAnd = (parentField: string, ...fields: string[]): Keyed => ({
  fromTranslation: (parent, b) => [parent, ...fields.map((f) => b[f])].map(String).join('/'),
  fromDump: (e) => [e[parentField], ...fields.map((f) => e[f])].map(String).join('/'),
});
const keyed: Record<string, Keyed> = {
  PortLink: { fromTranslation: (parent, b) => pair(parent, b.peerId), fromDump: (e) => pair(e.portId, e.peerId) },
  TunnelZoneHost: byParentAnd('tunnelZoneId', 'hostId', 'ipAddress'),
  HostInterfacePort: byParentAnd('hostId', 'portId', 'interfaceName'),
  MACPort: byParentAnd('bridgeId', 'macAddr', 'portId'),
  IPv4MACPair: byParentAnd('bridgeId', 'ip', 'mac'),
};

describe('the sample cluster pushed into the emulator', () => {
  it('gives exactly the expected objects, counted per kind and checked by ID', async () => {
    const outcomes = await pushAll();
    // Everything is new but the router the deployer made.
    expect(Object.entries(outcomes).filter(([, outcome]) => outcome !== 'created')).toEqual([
      [`${ROUTER_TRANSLATION} Router 0`, 'unchanged'],
    ]);

    const dump = await admin.dump();
    // What the Translations hold (counted by hand there), the hosts the agents registered, and per Node the Local
    // route MidoNet adds for the router port.
    expect(count(dump)).toEqual({
      ...SAMPLE_CLUSTER_RESOURCE_COUNTS,
      Host: 2,
      Route: SAMPLE_CLUSTER_RESOURCE_COUNTS.Route + 2,
    });
    for (const kind of ['TunnelZone', 'Router', 'Bridge', 'Port', 'Chain', 'Rule'])
      expect([kind, ids(dump[kind as keyof StateDump])]).toEqual([kind, translatedIds(kind)]);
    for (const [kind, key] of Object.entries(keyed)) {
      const wanted = translations
        .flatMap((t) => t.resources)
        .filter((r) => r.kind === kind)
        .map((r) => key.fromTranslation(r.parent, JSON.parse(r.body) as Record<string, string>));
      expect([kind, dump[kind as keyof StateDump].map(key.fromDump).sort()]).toEqual([kind, wanted.sort()]);
    }
    // Translated routes by ID; the other two are the Local /32 routes MidoNet adds for each router port's address.
    const routes = dump.Route;
    const translated = translatedIds('Route');
    expect(routes.filter((r) => translated.includes(r.id as string)).length).toBe(translated.length);
    expect(
      routes
        .filter((r) => !translated.includes(r.id as string))
        .map((r) => [r.type, r.dstNetworkAddr, r.dstNetworkLength])
        .sort(),
    ).toEqual([
      ['Local', '10.1.1.1', 32],
      ['Local', '10.1.2.1', 32],
    ]);
    // A few published test vectors (ref §2.3), so the IDs are not only checked against themselves.
    expect(ids(dump.Bridge)).toContain('d1c5f0f1-d501-5330-b521-b2daaf3d238b');
    expect(ids(dump.Port)).toEqual(
      expect.arrayContaining([
        '3f0a6a70-d576-5f19-afe8-716588fbf223',
        '3779194d-91e0-51d0-98e0-9adc61e6ffc0',
        '78181522-c44d-52e7-96c9-801b2f7d5f66',
        '2116e331-6186-5900-b627-392aab45b2ec',
      ]),
    );
    expect(ids(dump.Chain)).toEqual(
      expect.arrayContaining([
        '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f',
        '901ce55e-dc0c-5ad7-991e-1e28f72223e9',
        '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0',
      ]),
    );
    // Head insertion gives midonet-kubernetes' rule order (ref §2.4 Globals).
    const order = (chainId: string) =>
      dump.Rule.filter((r) => r.chainId === chainId)
        .sort((a, b) => (a.position as number) - (b.position as number))
        .map((r) => r.type);
    expect(order('901ce55e-dc0c-5ad7-991e-1e28f72223e9')).toEqual(['rev_snat', 'rev_dnat']);
  });

  it('is unchanged when pushed again, as every re-push by the pusher must be', async () => {
    await pushAll();
    const again = await pushAll();
    expect(Object.entries(again).filter(([, outcome]) => outcome !== 'unchanged')).toEqual([]);
  });

  it('removed in reverse order, leaves only the hosts and the deployer’s router', async () => {
    await pushAll();
    const owned = translations.filter((t) => t.name !== ROUTER_TRANSLATION).reverse();
    for (const t of owned)
      for (const r of [...t.resources].reverse())
        expect((await client.remove(r)).outcome).toMatch(/^(deleted|absent)$/);

    const dump = await admin.dump();
    expect(count(dump)).toEqual({
      ...Object.fromEntries(Object.keys(dump).map((kind) => [kind, 0])),
      Host: 2,
      Router: 1,
    });
    expect(ids(dump.Router)).toEqual([CLUSTER_ROUTER]);
    expect(ids(dump.Host)).toEqual(cluster.hosts.map((h) => h.id).sort());
  });

  it('keeps its state across an emulator restart on the same data file', async () => {
    await pushAll();
    const before = await admin.dump();
    await emulator.close();
    await start();
    // URIs name the listening port, which changes with the restart.
    const withoutOrigin = (dump: StateDump, url: string) =>
      JSON.parse(JSON.stringify(dump).replaceAll(new URL(url).origin, 'ORIGIN')) as unknown;
    const oldUrl = (before.Bridge[0]!.uri as string).replace(/\/midonet-api\/.*/, '');
    expect(withoutOrigin(await admin.dump(), emulator.url)).toEqual(withoutOrigin(before, oldUrl));
    const again = await pushAll();
    expect(Object.entries(again).filter(([, outcome]) => outcome !== 'unchanged')).toEqual([]);
  });
});
