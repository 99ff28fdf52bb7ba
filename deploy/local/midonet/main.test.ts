/* eslint-disable @typescript-eslint/no-unsafe-assignment -- tests read response JSON loosely */
// main.ts as the embedded stack runs it: a ready line on stdout, clean exit with state flushed on SIGTERM.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Api, id, T } from './testing/conformance';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'midonet-main-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

test('prints {"ready":true,url,adminUrl,pid}, serves, and flushes state on SIGTERM before exiting 0', async () => {
  const dataFile = join(dir, 'state.json');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(__dirname, 'main.ts'), '--port', '0', '--data-file', dataFile],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  try {
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const ready = JSON.parse(line) as { ready: boolean; url: string; adminUrl: string; pid: number };
    expect(ready).toEqual({
      ready: true,
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/midonet-api$/),
      adminUrl: expect.stringMatching(/\/_emulator$/),
      pid: child.pid,
    });
    const api = new Api(ready.url);
    await api.login();
    await api.create('/chains', T.chain, { id: id(1) });
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(JSON.parse(await readFile(dataFile, 'utf8'))).toMatchObject({ chains: { [id(1)]: { id: id(1) } } });
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
