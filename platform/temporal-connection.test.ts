import { freePort } from '../worker/ports';
import { connectClient, TemporalUnreachableError } from './temporal-connection';

describe('the Temporal connection factory', () => {
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
});
