import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManagedProcess, waitUntil } from './process';

describe('waitUntil', () => {
  const logFile = () => join(mkdtempSync(join(tmpdir(), 'steward-process-')), 'server.log');

  it('stops a server that is still starting when its time is up, so nothing keeps the caller alive', async () => {
    const server = ManagedProcess.start('slow-server', process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      logFile: logFile(),
    });
    await expect(
      waitUntil('slow server ready', () => Promise.resolve(false), { timeoutMs: 300, intervalMs: 50, process: server }),
    ).rejects.toThrow(/slow server ready.*not ready after 0.3s/s);
    expect(server.running).toBe(false);
  });

  it('leaves a server that became ready running', async () => {
    const server = ManagedProcess.start('quick-server', process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      logFile: logFile(),
    });
    try {
      await waitUntil('quick server ready', () => Promise.resolve(true), { timeoutMs: 300, process: server });
      expect(server.running).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
