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

/**
 * How a supervised server is started again after it exits, as the kubelet restarts a container: after `initialMs`,
 * the wait doubling at each exit up to `maxMs`, and back to `initialMs` once a run lasted `resetAfterMs`.
 */
export interface RestartPolicy {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

export const RESTART_POLICY: RestartPolicy = { initialMs: 1_000, maxMs: 30_000, resetAfterMs: 60_000 };

/** The wait before the next start of a server that ran `ranMs`, the last wait having been `previousMs` (if any). */
export function restartDelay(policy: RestartPolicy, previousMs: number | undefined, ranMs: number): number {
  if (previousMs === undefined || ranMs >= policy.resetAfterMs) return policy.initialMs;
  return Math.min(policy.maxMs, previousMs * 2);
}

/** What a supervisor is told: a server's exit (how, and when it starts again), and its new start. */
export interface SupervisionEvents {
  exited(process: ManagedProcess, how: string, restartInMs: number): void;
  restarted(process: ManagedProcess): void;
}

interface Supervision {
  policy: RestartPolicy;
  events: SupervisionEvents;
  lastDelayMs?: number;
  timer?: NodeJS.Timeout;
}

interface StartOptions {
  logFile: string;
  env?: Record<string, string>;
  cwd?: string;
  /** What `stop` sends first (SIGKILL follows after the grace time); SIGTERM unless the server ignores it. */
  stopSignal?: NodeJS.Signals;
}

type Recipe = StartOptions & { cmd: string; args: readonly string[] };

/**
 * A long-running server started by the stack; stopped by PID (SIGTERM, then SIGKILL). Once supervised, it is started
 * again, with the same command, arguments and environment, whenever it exits until it is stopped.
 */
export class ManagedProcess {
  private child: ChildProcess;
  private childExited!: Promise<void>;
  private startedAt = Date.now();
  private supervision?: Supervision;
  private stopped = false;
  private settle!: (code: number | null) => void;
  /** Settles when the server is down for good: at its exit, or once stopped if supervised. */
  readonly exited = new Promise<number | null>((resolve) => (this.settle = resolve));

  private constructor(
    readonly name: string,
    private readonly recipe: Recipe,
  ) {
    this.child = this.spawn();
  }

  get logFile(): string {
    return this.recipe.logFile;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static start(name: string, cmd: string, args: readonly string[], options: StartOptions): ManagedProcess {
    return new ManagedProcess(name, { cmd, args, ...options });
  }

  private spawn(): ChildProcess {
    const { cmd, args, logFile, env, cwd } = this.recipe;
    mkdirSync(dirname(logFile), { recursive: true });
    appendFileSync(logFile, `\n$ ${commandLine(cmd, args)}\n`);
    const fd = openSync(logFile, 'a');
    const [file, argv] = existsSync(SETPRIV)
      ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', cmd, ...args]]
      : [cmd, [...args]];
    const child = spawn(file, argv, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', fd, fd],
      // Its own process group: a Ctrl-C in the terminal reaches only the stack, which then stops servers in order.
      detached: true,
    });
    closeSync(fd);
    this.startedAt = Date.now();
    this.childExited = new Promise<void>((resolve) => {
      // A spawn failure may be followed by 'exit' too: each child ends once.
      let ended = false;
      const end = (code: number | null, signal: NodeJS.Signals | null) => {
        if (ended) return;
        ended = true;
        resolve();
        this.onExit(code, signal);
      };
      child.on('exit', end);
      child.on('error', () => end(null, null));
    });
    return child;
  }

  /** From now on, an exit is told to `events` and followed by a new start after the policy's wait. */
  supervise(events: SupervisionEvents, policy: RestartPolicy = RESTART_POLICY): void {
    if (!this.stopped) this.supervision = { policy, events };
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    const supervision = this.supervision;
    if (this.stopped || !supervision) {
      this.settle(code);
      return;
    }
    const ranMs = Date.now() - this.startedAt;
    const delayMs = restartDelay(supervision.policy, supervision.lastDelayMs, ranMs);
    supervision.lastDelayMs = delayMs;
    const how = `${signal ? `killed by ${signal}` : `exited with ${code}`} after ${(ranMs / 1000).toFixed(1)} s`;
    appendFileSync(this.logFile, `\n# ${this.name} ${how}; restarting in ${delayMs / 1000} s\n`);
    supervision.events.exited(this, how, delayMs);
    supervision.timer = setTimeout(() => {
      this.child = this.spawn();
      supervision.events.restarted(this);
    }, delayMs);
  }

  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.supervision?.timer);
    if (this.running) {
      this.child.kill(this.recipe.stopSignal ?? 'SIGTERM');
      const escalate = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.childExited;
      clearTimeout(escalate);
    }
    this.settle(this.child.exitCode);
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
