import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePorts } from '../../worker/ports';
import { retryWhenPortTaken } from './ports';

describe('freePorts', () => {
  it('gives distinct ports within one call (picked one after the other, 3 in 2,000 triples came back the same)', async () => {
    let repeated = 0;
    for (let i = 0; i < 5_000; i++) if (new Set(await freePorts(3)).size < 3) repeated++;
    expect(repeated).toBe(0);
  });
});

describe('retryWhenPortTaken', () => {
  const log = () => join(mkdtempSync(join(tmpdir(), 'steward-ports-')), 'server.log');
  const taken = (file: string, port: number) =>
    appendFileSync(file, `listen tcp 127.0.0.1:${port}: bind: address already in use\n`);

  it('tries another free port when the server says its port was taken meanwhile', async () => {
    const file = log();
    const ports: number[] = [];
    const result = await retryWhenPortTaken(file, async () => {
      const port = await freePort();
      ports.push(port);
      if (ports.length > 1) return port;
      taken(file, port);
      throw new Error('exited before it was ready');
    });
    expect(ports).toHaveLength(2);
    expect(ports.every((p) => p > 0)).toBe(true);
    expect(result).toBe(ports[1]);
  });

  it("reads Node's and Python's wording alike (the emulator, moto)", async () => {
    for (const line of [
      'Error: listen EADDRINUSE: address already in use 127.0.0.1:35757',
      'OSError: [Errno 98] Address already in use',
    ]) {
      const file = log();
      let calls = 0;
      const result = await retryWhenPortTaken(file, () => {
        if (++calls > 1) return Promise.resolve('up');
        appendFileSync(file, `${line}\n`);
        return Promise.reject(new Error('exited before it was ready'));
      });
      expect(result).toBe('up');
    }
  });

  it('gives up after the attempts, and at once on any other failure', async () => {
    const file = log();
    let calls = 0;
    await expect(
      retryWhenPortTaken(
        file,
        () => {
          taken(file, 1);
          return Promise.reject(new Error(`attempt ${++calls}`));
        },
        3,
      ),
    ).rejects.toThrow('attempt 3');
    const other = log();
    calls = 0;
    await expect(retryWhenPortTaken(other, () => Promise.reject(new Error(`attempt ${++calls}`)))).rejects.toThrow(
      'attempt 1',
    );
  });

  it('reads only what this attempt logged: a taken port of an earlier run in the same log does not make it retry', async () => {
    const file = log();
    writeFileSync(file, 'bind: address already in use\n');
    let calls = 0;
    await expect(retryWhenPortTaken(file, () => Promise.reject(new Error(`attempt ${++calls}`)))).rejects.toThrow(
      'attempt 1',
    );
  });
});
