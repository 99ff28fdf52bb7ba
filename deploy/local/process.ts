import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, openSync, closeSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { ProvisionError } from './progress';

const execFileAsync = promisify(execFile);

const quote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`);
export const commandLine = (cmd: string, args: readonly string[]) => [cmd, ...args].map(quote).join(' ');

export interface LoggedCommand {
  step: string;
  logFile: string;
  cwd?: string;
  env?: Record<string, string>;
}

/** Runs a command to completion with its output in `logFile`; failure names the step and how to reproduce it. */
export async function runLogged(cmd: string, args: readonly string[], options: LoggedCommand): Promise<void> {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const envPrefix = Object.entries(options.env ?? {})
    .map(([k, v]) => `${k}=${quote(v)} `)
    .join('');
  const reproduce = `${options.cwd ? `cd ${quote(options.cwd)} && ` : ''}${envPrefix}${commandLine(cmd, args)}`;
  appendFileSync(options.logFile, `\n$ ${reproduce}\n`);
  const fd = openSync(options.logFile, 'a');
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(cmd, args, {
        cwd: options.cwd,
        env: { ...process.env, ...options.env },
        stdio: ['ignore', fd, fd],
      });
      child.on('error', reject);
      child.on('exit', (status) => resolve(status));
    });
    if (code !== 0) throw new ProvisionError(options.step, `${cmd} exited with ${code}`, options.logFile, reproduce);
  } catch (error) {
    if (error instanceof ProvisionError) throw error;
    throw new ProvisionError(options.step, String(error), options.logFile, reproduce);
  } finally {
    closeSync(fd);
  }
}

/** Runs a short command and returns its stdout; rejects with stderr on failure. */
export async function capture(cmd: string, args: readonly string[], env?: Record<string, string>): Promise<string> {
  const { stdout } = await execFileAsync(cmd, args, { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

export async function commandExists(cmd: string): Promise<boolean> {
  try {
    await capture('sh', ['-c', `command -v ${quote(cmd)}`]);
    return true;
  } catch {
    return false;
  }
}

// setpriv (util-linux) makes the kernel kill the child when the stack's process dies, even by SIGKILL, so a
// crashed `npm start` or test run leaves no stray server behind.
const SETPRIV = '/usr/bin/setpriv';

/** A long-running server started by the stack; stopped by PID (SIGTERM, then SIGKILL). */
export class ManagedProcess {
  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly logFile: string,
    readonly exited: Promise<number | null>,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static start(
    name: string,
    cmd: string,
    args: readonly string[],
    options: { logFile: string; env?: Record<string, string>; cwd?: string },
  ): ManagedProcess {
    mkdirSync(dirname(options.logFile), { recursive: true });
    appendFileSync(options.logFile, `\n$ ${commandLine(cmd, args)}\n`);
    const fd = openSync(options.logFile, 'a');
    const [file, argv] = existsSync(SETPRIV)
      ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', cmd, ...args]]
      : [cmd, [...args]];
    const child = spawn(file, argv, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', fd, fd],
      // Its own process group: a Ctrl-C in the terminal reaches only the stack, which then stops servers in order.
      detached: true,
    });
    closeSync(fd);
    const exited = new Promise<number | null>((resolve) => {
      child.on('exit', (code) => resolve(code));
      child.on('error', () => resolve(null));
    });
    return new ManagedProcess(name, child, options.logFile, exited);
  }

  async stop(graceMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const escalate = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(escalate);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it returns true. Fails early, with the end of the server's log, if the server exits, and
 * otherwise after `timeoutMs`, having stopped the server.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; process?: ManagedProcess },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = '';
  for (;;) {
    if (options.process && !options.process.running) {
      throw new ProvisionError(what, `${options.process.name} exited before it was ready`, options.process.logFile);
    }
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      // Nobody is handed a server that was not ready in time, so nobody else would stop it (a bench left waiting on it).
      await options.process?.stop();
      throw new ProvisionError(
        what,
        `not ready after ${options.timeoutMs / 1000}s${lastError ? ` (last error: ${lastError})` : ''}`,
        options.process?.logFile,
      );
    }
    await sleep(options.intervalMs ?? 200);
  }
}
