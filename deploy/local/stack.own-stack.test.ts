import * as k8s from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
  await waitForAsync(() => Promise.resolve(condition()), what, timeoutMs);
}

async function waitForAsync(condition: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/**
 * Every `steward up` started with its state directory, stopped after each test (a failed one would leave its stack
 * running) and its directory removed (some 70 MB of etcd each).
 */
const ups = new Map<ChildProcess, string>();
afterEach(async () => {
  for (const [child, stateDir] of ups) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(stateDir, { recursive: true, force: true });
  }
  ups.clear();
});

/** Runs `steward up` (the `npm start` path) in a child process and waits until it wrote stack.json. */
async function startUp(...flags: string[]) {
  const stateDir = mkdtempSync(join(tmpdir(), 'steward-up-'));
  let output = '';
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'bin', 'steward.cjs'), 'up', '--state-dir', stateDir, '--free-ports', ...flags],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  ups.set(child, stateDir);
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

describe('steward up supervises what it started', () => {
  /** Kills `name` (pid `pid`) and waits until `steward up` reported its death and started it again; its new pid. */
  async function killAndSeeRestart(
    up: Awaited<ReturnType<typeof startUp>>,
    name: string,
    pid: number,
  ): Promise<number> {
    const restartedPid = () => Number(new RegExp(`${name} restarted \\(pid (\\d+)\\)`).exec(up.output())?.[1]);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    await waitFor(
      () => up.output().includes(`${name} (pid ${pid}) killed by SIGKILL`),
      `${name}'s death reported`,
      5_000,
    );
    await waitFor(() => restartedPid() > 0, `${name} restarted`, 10_000);
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect(alive(restartedPid())).toBe(true);
    return restartedPid();
  }

  const answers = async (url: string) => (await fetch(url).catch(() => undefined))?.ok === true;

  it('reports a killed etcd, kube-apiserver, worker and starter process at once and starts each again; Ctrl-C stops everything', async () => {
    const up = await startUp('--workers', '1');
    const { info } = up;
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(info.kubernetes.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const namespace = `steward-supervised-${Date.now().toString(36)}`;
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const [, workerPid, workerPort] = /steward-worker-1 \(pid (\d+)\): http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(
      up.output(),
    )!;
    const [, starterPid] = /steward-starter-1 \(pid (\d+)\)/.exec(up.output())!;

    const restarted = [
      await killAndSeeRestart(up, 'etcd', info.pids.etcd!),
      await killAndSeeRestart(up, 'kube-apiserver', info.pids['kube-apiserver']!),
      await killAndSeeRestart(up, 'steward-worker-1', Number(workerPid)),
      await killAndSeeRestart(up, 'steward-starter-1', Number(starterPid)),
    ];
    // The API answers again, with what etcd kept on disk; the worker polls Temporal again on its port.
    const namespaceBack = async () =>
      (await core.readNamespace({ name: namespace }).catch(() => undefined)) !== undefined;
    await waitForAsync(namespaceBack, 'the API server with its objects', 60_000);
    await waitForAsync(() => answers(`http://127.0.0.1:${workerPort}/readyz`), 'the worker ready', 60_000);
    expect(up.child.exitCode).toBeNull();
    expect(readFileSync(join(info.stateDir, 'logs', 'kube-apiserver.log'), 'utf8')).toMatch(
      /# kube-apiserver killed by SIGKILL/,
    );

    up.child.kill('SIGINT');
    expect(await up.exited).toBe(0);
    expect([...Object.values(info.pids), ...restarted].filter(alive)).toEqual([]);
  });

  it('keeps the worker in its own process working while Temporal and the emulator are killed and started again', async () => {
    const up = await startUp();
    const { info } = up;
    const [, workerPort] = /Worker metrics:\s+http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(up.output())!;
    const restarted = [
      await killAndSeeRestart(up, 'temporal', info.pids.temporal!),
      await killAndSeeRestart(up, 'midonet-emulator', info.pids['midonet-emulator']!),
    ];
    await waitForAsync(() => answers(`${info.midonet.adminUrl}/health`), 'the emulator', 60_000);
    await waitForAsync(() => answers(`http://127.0.0.1:${workerPort}/readyz`), 'the worker ready', 60_000);
    // The worker outlives a Temporal restart: its polls are retried, it does not fail (which would stop the stack).
    await sleep(5_000);
    expect(up.child.exitCode).toBeNull();
    expect(await answers(`http://127.0.0.1:${workerPort}/readyz`)).toBe(true);

    up.child.kill('SIGINT');
    expect(await up.exited).toBe(0);
    expect([...Object.values(info.pids), ...restarted].filter(alive)).toEqual([]);
  });
});
