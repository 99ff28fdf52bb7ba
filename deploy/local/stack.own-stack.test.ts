import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './paths';
import { sleep } from './process';
import { stackFile, type StackInfo } from './stack';

/** True while the process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Runs `steward up` (the `npm start` path) in a child process and waits until it wrote stack.json. */
async function startUp() {
  const stateDir = mkdtempSync(join(tmpdir(), 'steward-up-'));
  let output = '';
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'bin', 'steward.cjs'), 'up', '--state-dir', stateDir, '--free-ports'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitFor(() => existsSync(stackFile(stateDir)) || child.exitCode !== null, 'stack.json');
  if (!existsSync(stackFile(stateDir))) throw new Error(`steward up failed:\n${output}`);
  await waitFor(() => output.includes('Press Ctrl-C'), 'the summary');
  const info = JSON.parse(readFileSync(stackFile(stateDir), 'utf8')) as StackInfo;
  return { child, info, exited, output: () => output };
}

describe('steward up (npm start)', () => {
  it('prints where everything is and, on Ctrl-C, stops every process it started', async () => {
    const { child, info, exited, output } = await startUp();
    const pids = Object.values(info.pids);
    expect(Object.keys(info.pids)).toEqual(
      expect.arrayContaining([
        'temporal',
        'etcd',
        'kube-apiserver',
        'kube-controller-manager',
        'midonet-emulator',
        'moto',
      ]),
    );
    expect(pids.every(alive)).toBe(true);
    for (const shown of [
      info.temporal.uiUrl!,
      info.temporal.address,
      info.kubernetes.kubeconfig,
      info.libvirt.uri,
      info.midonet.url,
      info.ec2.endpoint,
    ])
      expect(output()).toContain(shown);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  });

  it('leaves no server behind when the stack process itself is killed', async () => {
    const { child, info, exited } = await startUp();
    const pids = Object.values(info.pids);
    child.kill('SIGKILL');
    await exited;
    await waitFor(() => pids.every((pid) => !alive(pid)), 'the servers to die with their parent', 30_000);
    expect(pids.filter(alive)).toEqual([]);
  });
});
