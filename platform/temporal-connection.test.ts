import pino from 'pino';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { freePort } from '../worker/ports';
import {
  connectClient,
  connectClientWhenReachable,
  connectionOptions,
  StoppedWaitingError,
  TemporalUnreachableError,
} from './temporal-connection';

describe('the Temporal connection factory', () => {
  it("reads each PEM from its file, else from the profile's PEM, and sends the profile's headers", async () => {
    const caFile = join(mkdtempSync(join(tmpdir(), 'steward-tls-')), 'ca.pem');
    writeFileSync(caFile, 'CA FROM FILE');
    const options = await connectionOptions({
      address: 'temporal:7233',
      namespace: 'default',
      tls: { caFile, clientCertPem: 'CERT', clientKeyPem: 'KEY', serverName: 'temporal.prod' },
      metadata: { 'x-tenant': 't' },
    });
    expect(options).toMatchObject({
      tls: {
        serverNameOverride: 'temporal.prod',
        serverRootCACertificate: Buffer.from('CA FROM FILE'),
        clientCertPair: { crt: Buffer.from('CERT'), key: Buffer.from('KEY') },
      },
      metadata: { 'x-tenant': 't' },
    });
  });

  it('fails with the address and namespace when nothing listens there, instead of hanging', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const failure = connectClient({ address, namespace: 'steward' });
    await expect(failure).rejects.toBeInstanceOf(TemporalUnreachableError);
    await expect(failure).rejects.toThrow(`Temporal at ${address} (namespace steward) is not reachable`);
  });

  it('says TLS was used when it was, since a TLS/plaintext mismatch looks like an unreachable server', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    await expect(connectClient({ address, namespace: 'default', tls: {} })).rejects.toThrow(
      `Temporal at ${address} (namespace default, TLS) is not reachable`,
    );
  });

  it('waits while Temporal does not answer, logging each attempt once with why, until told to stop', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const lines: { attempt: number; reason: string; msg: string }[] = [];
    const log = pino(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    );
    const stop = new AbortController();
    const seen: Error[] = [];
    const waiting = connectClientWhenReachable(
      { address, namespace: 'default' },
      {
        log,
        signal: stop.signal,
        backoff: { initialMs: 10, maxMs: 10 },
        onUnreachable: (error) => {
          seen.push(error);
          if (seen.length === 2) stop.abort();
        },
      },
    );
    await expect(waiting).rejects.toBeInstanceOf(StoppedWaitingError);
    expect(seen).toHaveLength(2);
    expect(lines.map(({ attempt, msg }) => ({ attempt, msg }))).toEqual([
      { attempt: 1, msg: 'Temporal is not reachable: waiting for it' },
      { attempt: 2, msg: 'Temporal is not reachable: waiting for it' },
    ]);
    expect(lines[0]!.reason).toContain(`Temporal at ${address} (namespace default) is not reachable`);
  }, 30_000);
});
