// The client against the real MidoNet emulator (deploy/local/midonet): idempotent ensure/remove/observe, the
// token, and how every failure is classified for Temporal.
import { createServer, type AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { request } from 'undici';
import { EmulatorAdmin, startMidonetEmulator, type MidonetEmulator } from '../../deploy/local/midonet';
import { createMidonetActivities } from './activities';
import { backendResource, createMidonetClient, settlingUnanswered, type MidonetClient } from './client';
import type { MidonetFailureType } from './errors';
import type { MidonetConnection } from './http';

const BRIDGE = 'b0000000-0000-4000-8000-000000000001';
const OTHER_BRIDGE = 'b0000000-0000-4000-8000-000000000002';
const PORT = 'a0000000-0000-4000-8000-000000000001';
const PEER = 'a0000000-0000-4000-8000-000000000002';
const OTHER_PEER = 'a0000000-0000-4000-8000-000000000003';
const ROUTER = 'c0000000-0000-4000-8000-000000000001';
const CHAIN = 'd0000000-0000-4000-8000-000000000001';
const RULE = 'e0000000-0000-4000-8000-000000000001';
const ZONE = 'f0000000-0000-4000-8000-000000000001';
const HOST = '90000000-0000-4000-8000-000000000001';
const MISSING = '00000000-0000-4000-8000-00000000dead';

const bridge = (name = 'b1') => backendResource('Bridge', '', { id: BRIDGE, name, tenantId: 'midonetkube' });
const chain = (name = 'KUBE-TEST') => backendResource('Chain', '', { id: CHAIN, name, tenantId: 'midonetkube' });
const bridgePort = (id = PORT) => backendResource('Port', BRIDGE, { id, type: 'Bridge' });

let emulator: MidonetEmulator;
let admin: EmulatorAdmin;
let client: MidonetClient;
const connect = (extra: Partial<MidonetConnection> = {}) =>
  createMidonetClient({ baseUrl: emulator.url, username: 'admin', password: 'secret', ...extra });

beforeAll(async () => {
  emulator = await startMidonetEmulator({ port: 0 });
  admin = new EmulatorAdmin(emulator.adminUrl);
});
afterAll(() => emulator.close());
beforeEach(async () => {
  await admin.reset();
  client = connect();
});

/** The ApplicationFailure a call rejects with; fails the test if the call succeeds. */
async function failureOf(call: Promise<unknown>): Promise<ApplicationFailure> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ApplicationFailure);
  return outcome.error as ApplicationFailure;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const logins = async () => (await admin.counters()).byKind.Login?.POST ?? 0;

describe('ensure', () => {
  it('creates (201) and then finds the same object unchanged', async () => {
    await expect(client.ensure(bridge())).resolves.toEqual({ outcome: 'created' });
    await expect(client.ensure(bridge())).resolves.toEqual({ outcome: 'unchanged' });
    const { Bridge } = await admin.dump();
    expect(Bridge).toEqual([expect.objectContaining({ id: BRIDGE, name: 'b1' })]);
  });

  it('updates a kind that has PUT when its body changed, and reports what changed', async () => {
    await client.ensure(bridge('old'));
    await expect(client.ensure(bridge('new'))).resolves.toEqual({
      outcome: 'updated',
      diff: [{ field: 'name', desired: 'new', observed: 'old' }],
    });
    expect((await admin.dump()).Bridge).toEqual([expect.objectContaining({ id: BRIDGE, name: 'new' })]);
    await expect(client.observe(bridge('new'))).resolves.toEqual({ exists: true, upToDate: true, diff: [] });
  });

  it('reports a conflict, and changes nothing, for a kind without PUT whose body changed', async () => {
    await client.ensure(chain('old'));
    await expect(client.ensure(chain('new'))).resolves.toEqual({
      outcome: 'conflict',
      diff: [{ field: 'name', desired: 'new', observed: 'old' }],
      reason: expect.stringContaining('no PUT') as string,
    });
    expect((await admin.dump()).Chain).toEqual([expect.objectContaining({ id: CHAIN, name: 'old' })]);
    expect((await admin.counters()).byMethod.PUT).toBeUndefined();
  });

  it('reports a conflict when MidoNet refuses the PUT: a TunnelZone that keeps its name clashes with itself (MNA-1293)', async () => {
    await client.ensure(backendResource('TunnelZone', '', { id: ZONE, name: 'DefaultTunnelZone', type: 'vxlan' }));
    await expect(
      client.ensure(backendResource('TunnelZone', '', { id: ZONE, name: 'DefaultTunnelZone', type: 'gre' })),
    ).resolves.toEqual({
      outcome: 'conflict',
      diff: [{ field: 'type', desired: 'gre', observed: 'vxlan' }],
      reason: expect.stringMatching(/PUT \/tunnel_zones\/.* answered 409: Tunnel zone name already exists/) as string,
    });
  });

  it('treats the 500 of a duplicate MAC table entry (MNA-1315) as "already there" and compares', async () => {
    await client.ensure(bridge());
    await client.ensure(bridgePort());
    const entry = backendResource('MACPort', BRIDGE, { macAddr: 'ac:ca:ba:00:00:01', portId: PORT });
    await expect(client.ensure(entry)).resolves.toEqual({ outcome: 'created' });
    await expect(client.ensure(entry)).resolves.toEqual({ outcome: 'unchanged' });
    expect((await admin.counters()).byStatus['500']).toBe(1);
  });

  it('links two ports once, finds the link unchanged, and reports a link to another peer as a conflict', async () => {
    await client.ensure(bridge());
    for (const id of [PORT, PEER, OTHER_PEER]) await client.ensure(bridgePort(id));
    const link = (peerId: string) => backendResource('PortLink', PORT, { portId: null, peerId });
    await expect(client.ensure(link(PEER))).resolves.toEqual({ outcome: 'created' });
    await expect(client.ensure(link(PEER))).resolves.toEqual({ outcome: 'unchanged' });
    await expect(client.ensure(link(OTHER_PEER))).resolves.toMatchObject({
      outcome: 'conflict',
      diff: [{ field: 'peerId', desired: OTHER_PEER, observed: PEER }],
    });
    await expect(client.remove(link(PEER))).resolves.toEqual({ outcome: 'deleted' });
    await expect(client.observe(link(PEER))).resolves.toEqual({ exists: false });
  });

  it('fails retryably on a 409 for an object that is not there (a binding before its host is in a tunnel zone)', async () => {
    await admin.seedHost({ id: HOST, name: 'node1' });
    await client.ensure(bridge());
    await client.ensure(bridgePort());
    const failure = await failureOf(
      client.ensure(
        backendResource('HostInterfacePort', HOST, { hostId: HOST, portId: PORT, interfaceName: 'midokube-mido' }),
      ),
    );
    expect(failure).toMatchObject({ type: 'MidonetConflict', nonRetryable: false });
    expect(failure.message).toMatch(`POST /hosts/${HOST}/ports answered 409`);
  });
});

describe('remove', () => {
  it('deletes, and a second remove of the same object counts as done (404)', async () => {
    await client.ensure(bridge());
    await expect(client.remove(bridge())).resolves.toEqual({ outcome: 'deleted' });
    await expect(client.remove(bridge())).resolves.toEqual({ outcome: 'absent' });
    expect((await admin.dump()).Bridge).toEqual([]);
  });

  it('counts an object taken by a cascade as done: a bridge takes its ports', async () => {
    await client.ensure(bridge());
    await client.ensure(bridgePort());
    await client.remove(bridge());
    await expect(client.remove(bridgePort())).resolves.toEqual({ outcome: 'absent' });
  });
});

describe('observe', () => {
  it('answers "does not exist" without creating anything', async () => {
    await expect(client.observe(bridge())).resolves.toEqual({ exists: false });
    expect((await admin.dump()).Bridge).toEqual([]);
  });

  it('answers what differs, and changes nothing', async () => {
    await client.ensure(bridge('old'));
    await expect(client.observe(bridge('new'))).resolves.toEqual({
      exists: true,
      upToDate: false,
      diff: [{ field: 'name', desired: 'new', observed: 'old' }],
    });
    expect((await admin.dump()).Bridge).toEqual([expect.objectContaining({ name: 'old' })]);
  });
});

describe('auth', () => {
  it('logs in once and reuses the token across calls', async () => {
    await client.ensure(bridge());
    await client.observe(bridge());
    await client.ensure(chain());
    expect(await logins()).toBe(1);
  });

  it('logs in once for concurrent first calls', async () => {
    await Promise.all([client.observe(bridge()), client.observe(chain()), client.listHosts()]);
    expect(await logins()).toBe(1);
  });

  it('logs in again, once, after the token is invalidated, and the call succeeds', async () => {
    await client.ensure(bridge());
    await admin.revokeTokens();
    await expect(client.ensure(chain())).resolves.toEqual({ outcome: 'created' });
    expect(await logins()).toBe(2);
  });

  it('logs in again only once when concurrent calls all meet the invalidated token', async () => {
    await client.ensure(bridge());
    await admin.revokeTokens();
    await Promise.all([client.observe(bridge()), client.observe(chain()), client.listHosts()]);
    expect(await logins()).toBe(2);
  });

  it('fails retryably with MidonetUnauthorized when the call is refused even after one re-login', async () => {
    await admin.injectFault({ method: 'GET', path: '/bridges/*', action: 'error', status: 401, message: 'nope' });
    const failure = await failureOf(client.observe(bridge()));
    expect(failure).toMatchObject({ type: 'MidonetUnauthorized', nonRetryable: false });
    expect(await logins()).toBe(2);
  });

  it('fails retryably with MidonetUnauthorized when the credentials are refused', async () => {
    await admin.configure({ credentials: { username: 'admin', password: 'other' } });
    const failure = await failureOf(client.ensure(bridge()));
    expect(failure).toMatchObject({ type: 'MidonetUnauthorized', nonRetryable: false });
    expect(failure.message).toMatch('POST /login answered 401: Invalid credentials');
  });
});

describe('failures', () => {
  it('backend down (503 on every call) → retryable MidonetUnavailable', async () => {
    await admin.setDown(true, 'unavailable');
    const failure = await failureOf(client.ensure(bridge()));
    expect(failure).toMatchObject({ type: 'MidonetUnavailable', nonRetryable: false });
    expect(failure.message).toMatch(/answered 503/);
  });

  it('backend down (connections dropped) → retryable MidonetUnavailable', async () => {
    await client.observe(bridge()); // logged in before the backend goes away
    await admin.setDown(true, 'drop');
    const failure = await failureOf(client.ensure(bridge()));
    expect(failure).toMatchObject({ type: 'MidonetUnavailable', nonRetryable: false });
    expect(failure.message).toMatch(`MidoNet POST /bridges: `);
  });

  it('a 400 → non-retryable MidonetValidation with the violations in the message', async () => {
    const failure = await failureOf(client.ensure(bridge('x'.repeat(300))));
    expect(failure).toMatchObject({
      type: 'MidonetValidation',
      nonRetryable: true,
      details: [expect.objectContaining({ status: 400, violations: [expect.objectContaining({ property: 'name' })] })],
    });
    expect(failure.message).toMatch(/^MidoNet POST \/bridges answered 400: Validation error\(s\) found: name: /);
  });

  it('a missing parent → non-retryable MidonetParentMissing naming it', async () => {
    const failure = await failureOf(client.ensure(backendResource('Port', MISSING, { id: PORT, type: 'Bridge' })));
    expect(failure).toMatchObject({
      type: 'MidonetParentMissing',
      nonRetryable: true,
      details: [expect.objectContaining({ missingId: MISSING })],
    });
    expect(failure.message).toMatch(
      `POST /bridges/${MISSING}/ports answered 404: There is no Network with ID ${MISSING}`,
    );
  });

  it('a missing referenced object other than the parent → non-retryable MidonetReferenceMissing', async () => {
    await client.ensure(chain());
    const failure = await failureOf(
      client.ensure(backendResource('Rule', CHAIN, { id: RULE, type: 'jump', jumpChainId: MISSING })),
    );
    expect(failure).toMatchObject({
      type: 'MidonetReferenceMissing',
      nonRetryable: true,
      details: [expect.objectContaining({ missingId: MISSING })],
    });
  });

  it('no answer within timeoutMs → retryable MidonetTimeout; the retry is safe whether or not the lost call was carried out', async () => {
    const quick = connect({ timeoutMs: 100 });
    await quick.observe(bridge()); // logged in before the latency
    await admin.injectFault({ path: '/bridges', action: 'latency', latencyMs: 400, times: 1 });
    const failure = await failureOf(quick.ensure(bridge()));
    expect(failure).toMatchObject({ type: 'MidonetTimeout', nonRetryable: false });
    expect(failure.message).toMatch('MidoNet POST /bridges: no answer within 100 ms');
    // Let the emulator finish with the abandoned request (its delay is a plain timer) before the retry.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await expect(quick.ensure(bridge())).resolves.toEqual({
      outcome: expect.stringMatching(/^(created|unchanged)$/) as string,
    });
    expect((await admin.dump()).Bridge).toHaveLength(1);
  });

  describe('a write that got no answer', () => {
    const late = { timeoutMs: 100, lateWriteMs: 700 };
    const unsettled = (failure: ApplicationFailure) =>
      (failure.details?.[0] as { unsettledUntil?: number }).unsettledUntil;

    it('is marked with how long MidoNet may still carry it out; a read, or a write that never reached MidoNet, is not', async () => {
      const quick = connect(late);
      await quick.observe(bridge());
      await admin.injectFault({ path: '/bridges/*', action: 'latency', latencyMs: 300 });
      const before = Date.now();
      const write = await failureOf(quick.remove(bridge()));
      expect(unsettled(write)).toBeGreaterThanOrEqual(before + 700);
      expect(unsettled(await failureOf(quick.observe(bridge())))).toBeUndefined();
      // Logged in, then MidoNet's port closes: the DELETE never left.
      const closed = await closedPort();
      const api = new URL(emulator.url);
      const away = connect({
        ...late,
        request: (url, options) => {
          const href = url as string;
          return request(href.endsWith('/login') ? href : href.replace(api.host, `127.0.0.1:${closed}`), options);
        },
      });
      await away.listHosts().catch(() => undefined);
      const refused = await failureOf(away.remove(bridge()));
      expect(refused.message).toMatch(/\(ECONNREFUSED\)$/);
      expect(unsettled(refused)).toBeUndefined();
    });

    it('fails the settling client only once MidoNet can no longer carry it out, keeping the activity alive meanwhile', async () => {
      await client.ensure(bridge());
      const quick = connect(late);
      await quick.observe(bridge());
      await admin.injectFault({ method: 'DELETE', path: '/bridges/*', action: 'latency', latencyMs: 400, times: 1 });
      let beats = 0;
      const failure = await failureOf(settlingUnanswered(quick, () => beats++).remove(bridge()));
      expect(failure).toMatchObject({ type: 'MidonetTimeout', nonRetryable: false });
      expect(beats).toBeGreaterThan(0);
      // The late DELETE has landed: a push made now is not undone by it.
      expect((await admin.dump()).Bridge ?? []).toEqual([]);
      await expect(client.ensure(bridge())).resolves.toEqual({ outcome: 'created' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await admin.dump()).Bridge).toHaveLength(1);
    });

    it('the plain client fails at once, while the late DELETE is still to land (what the settling client waits out)', async () => {
      await client.ensure(bridge());
      const quick = connect(late);
      await quick.observe(bridge());
      await admin.injectFault({ method: 'DELETE', path: '/bridges/*', action: 'latency', latencyMs: 400, times: 1 });
      await failureOf(quick.remove(bridge()));
      expect((await admin.dump()).Bridge).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await admin.dump()).Bridge ?? []).toEqual([]);
    });
  });

  it('a failure of the next call only: the retry Temporal would make succeeds', async () => {
    await admin.injectFault({ method: 'POST', path: '/bridges', action: 'error', status: 500, times: 1 });
    await expect(failureOf(client.ensure(bridge()))).resolves.toMatchObject({
      type: 'MidonetUnavailable',
      nonRetryable: false,
    });
    await expect(client.ensure(bridge())).resolves.toEqual({ outcome: 'created' });
  });

  // [what it checks, status the backend answers, reason, retryable]
  const statuses: Array<[string, number, MidonetFailureType, boolean]> = [
    ['a 500 is the backend failing: retry', 500, 'MidonetUnavailable', true],
    ['a 502 from a proxy in front of MidoNet: retry', 502, 'MidonetUnavailable', true],
    ['a 503 (read timeout in MidoNet): retry', 503, 'MidonetUnavailable', true],
    ['a 405 means the operation does not exist for the kind: never retry', 405, 'MidonetUnsupported', false],
    ['a 406 means the media type was refused: never retry', 406, 'MidonetMediaType', false],
    ['a 415 likewise, from JAX-RS negotiation: never retry', 415, 'MidonetMediaType', false],
    ['a 403 is a refusal the client cannot fix by waiting: never retry', 403, 'MidonetRejected', false],
  ];
  it.each(statuses)('%s', async (_what, status, type, retryable) => {
    await admin.injectFault({
      method: 'POST',
      path: '/bridges',
      action: 'error',
      status,
      message: `injected ${status}`,
    });
    const failure = await failureOf(client.ensure(bridge()));
    expect(failure).toMatchObject({ type, nonRetryable: !retryable });
    expect(failure.message).toBe(`MidoNet POST /bridges answered ${status}: injected ${status}`);
  });
});

describe('a reply about another object than the one asked for (misdirect fault)', () => {
  const OTHER_RULE = 'e0000000-0000-4000-8000-000000000002';
  const rule = (id: string) => backendResource('Rule', CHAIN, { id, type: 'accept' });
  /** Writes MidoNet carried out (a POST meeting 409 changes nothing). */
  const writes = async () => (await admin.journal()).filter((e) => e.status >= 200 && e.status < 300).length;
  /** Fails retryably as MidonetWrongObject, saying what was answered; returns the writes carried out meanwhile. */
  async function refused(call: () => Promise<unknown>, what: RegExp): Promise<number> {
    const before = await writes();
    const failure = await failureOf(call());
    expect(failure).toMatchObject({ type: 'MidonetWrongObject', nonRetryable: false });
    expect(failure.message).toMatch(what);
    return (await writes()) - before;
  }

  beforeEach(async () => {
    await client.ensure(backendResource('Bridge', '', { id: OTHER_BRIDGE, name: 'other', tenantId: 'midonetkube' }));
    await client.ensure(bridge('old'));
  });

  it('a GET answered with another bridge’s body is no drift: refused, and no PUT follows', async () => {
    await admin.injectFault({ action: 'misdirect', method: 'GET' });
    expect(await refused(() => client.ensure(bridge('new')), new RegExp(`is "${OTHER_BRIDGE}", not ${BRIDGE}`))).toBe(
      0,
    );
    await expect(failureOf(client.observe(bridge('new')))).resolves.toMatchObject({ type: 'MidonetWrongObject' });
    await admin.clearFaults();
    expect((await admin.dump()).Bridge).toEqual([
      expect.objectContaining({ id: OTHER_BRIDGE, name: 'other' }),
      expect.objectContaining({ id: BRIDGE, name: 'old' }),
    ]);
    await expect(client.ensure(bridge('new'))).resolves.toMatchObject({ outcome: 'updated' });
  });

  it('a rule is not replaced on another rule’s reply: no DELETE, no POST, both rules where they were', async () => {
    await client.ensure(chain());
    await client.ensure(rule(OTHER_RULE));
    await client.ensure(rule(RULE));
    const before = (await admin.dump()).Rule;
    await admin.injectFault({ action: 'misdirect', method: 'GET', path: '/rules/*' });
    expect(await refused(() => client.replace(rule(RULE)), new RegExp(`is "${OTHER_RULE}", not ${RULE}`))).toBe(0);
    expect((await admin.dump()).Rule).toEqual(before);
  });

  it('a PUT answered with another bridge’s body is refused; the retry finds the update made', async () => {
    await admin.injectFault({ action: 'misdirect', method: 'PUT', times: 1 });
    await refused(() => client.ensure(bridge('new')), /PUT \/bridges\/.* answered 200 about another object/);
    await expect(client.ensure(bridge('new'))).resolves.toEqual({ outcome: 'unchanged' });
  });

  it('a POST answered with another bridge’s Location is refused; the retry finds the bridge made', async () => {
    await client.remove(bridge());
    await admin.injectFault({ action: 'misdirect', method: 'POST', times: 1 });
    await refused(() => client.ensure(bridge()), new RegExp(`Location .* names ${OTHER_BRIDGE}`));
    await expect(client.ensure(bridge())).resolves.toEqual({ outcome: 'unchanged' });
  });

  it('a link, read on its port, is refused when another port answers', async () => {
    for (const id of [PORT, PEER]) await client.ensure(bridgePort(id));
    await admin.injectFault({ action: 'misdirect', method: 'GET', path: '/ports/*' });
    await refused(
      () => client.observe(backendResource('PortLink', PORT, { portId: null, peerId: PEER })),
      new RegExp(`is "${PEER}", not ${PORT}`),
    );
  });
});

describe('activities', () => {
  it('take one input object and return plain JSON', async () => {
    const acts = createMidonetActivities({ client });
    await admin.seedHost({ id: HOST, name: 'node1' });
    const results = [
      await acts.midonetEnsure({ resource: bridge() }),
      await acts.midonetObserve({ resource: bridge('renamed') }),
      await acts.midonetListHosts({}),
      await acts.midonetRemove({ resource: bridge() }),
    ];
    expect(JSON.parse(JSON.stringify(results))).toEqual(results);
    expect(results).toEqual([
      { outcome: 'created' },
      { exists: true, upToDate: false, diff: [{ field: 'name', desired: 'renamed', observed: 'b1' }] },
      { hosts: [expect.objectContaining({ id: HOST, name: 'node1' })] },
      { outcome: 'deleted' },
    ]);
  });

  it('let a typed failure through unchanged', async () => {
    const acts = createMidonetActivities({ client });
    const failure = await failureOf(
      acts.midonetEnsure({ resource: backendResource('Port', OTHER_BRIDGE, { id: PORT, type: 'Bridge' }) }),
    );
    expect(failure.type).toBe('MidonetParentMissing');
  });
});

describe('listHosts', () => {
  it('lists the hosts agents registered', async () => {
    await admin.seedHost({ id: HOST, name: 'node1', addresses: ['192.0.2.10'] });
    await expect(client.listHosts()).resolves.toEqual([
      expect.objectContaining({ id: HOST, name: 'node1', alive: true, addresses: ['192.0.2.10'] }),
    ]);
  });
});

it('removing a Router that is not there succeeds: MidoNet answers 204 for missing routers', async () => {
  const router = backendResource('Router', '', { id: ROUTER, name: 'ClusterRouter' });
  await expect(client.remove(router)).resolves.toEqual({ outcome: 'deleted' });
});
