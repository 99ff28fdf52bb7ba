import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onFreePort } from './ports';

describe('onFreePort', () => {
  const log = () => join(mkdtempSync(join(tmpdir(), 'steward-ports-')), 'server.log');

  it('tries another free port when the server says its port was taken meanwhile', async () => {
    const file = log();
    const ports: number[] = [];
    await onFreePort(file, (port) => {
      ports.push(port);
      if (ports.length > 1) return Promise.resolve();
      writeFileSync(file, `listen tcp 127.0.0.1:${port}: bind: address already in use\n`);
      return Promise.reject(new Error('exited before it was ready'));
    });
    expect(ports).toHaveLength(2);
    expect(ports.every((p) => p > 0)).toBe(true);
  });

  it('gives up after the attempts, and at once on any other failure', async () => {
    const file = log();
    writeFileSync(file, 'bind: address already in use\n');
    let calls = 0;
    await expect(onFreePort(file, () => Promise.reject(new Error(`attempt ${++calls}`)), 3)).rejects.toThrow('attempt 3');
    const other = log();
    calls = 0;
    await expect(onFreePort(other, () => Promise.reject(new Error(`attempt ${++calls}`)))).rejects.toThrow('attempt 1');
  });
});
