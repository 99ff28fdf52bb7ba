// Programs the worker runs (virsh, xorriso) are started by a small helper process, not by the worker: libuv starts a
// program with fork(), which blocks the caller's event loop while the kernel copies its page tables. A worker of
// 600 MB blocked some 13-31 ms a start (1 ms in a 50 MB process); 20 peer pods at once start 400 programs. Node has no
// posix_spawn, and no npm package that runs programs from a helper is kept well enough to carry, hence this one.
import { fork, type ChildProcess } from 'node:child_process';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ExecOptions {
  cwd?: string;
  /** The program is killed (SIGTERM) after this long; the error then says `killed`. */
  timeoutMs: number;
  maxBuffer?: number;
}

/** What `execFile` fails with, carried over the channel: its exit code (or errno code such as ENOENT) and output. */
export class ExecError extends Error {
  constructor(
    message: string,
    readonly code: number | string | undefined,
    readonly signal: string | undefined,
    readonly killed: boolean,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'ExecError';
  }
}

export interface ExecRequest {
  id: number;
  file: string;
  args: string[];
  cwd?: string;
  timeoutMs: number;
  maxBuffer: number;
}

export interface ExecReply {
  id: number;
  stdout: string;
  stderr: string;
  failure?: { message: string; code?: number | string; signal?: string; killed: boolean };
}

interface Pending {
  resolve: (output: { stdout: string; stderr: string }) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

// Past the program's own timeout, the helper itself is taken as lost.
const HELPER_GRACE_MS = 10_000;

/** The helper failed a call itself (gone, or silent): no program output to carry. */
const helperFailure = (message: string, code: string, killed = false) =>
  new ExecError(message, code, undefined, killed, '', '');

// From the sources (npm start, the tests, the bench) the helper is TypeScript, run by tsx as they are; the image runs
// it compiled, with none of the worker's V8 flags either way.
const tsxFor = (module: string) =>
  extname(module) === '.ts' ? ['--import', pathToFileURL(require.resolve('tsx')).href] : [];

export function createExec(helperModule = join(__dirname, `exec-helper${extname(__filename)}`)) {
  let helper: ChildProcess | undefined;
  let nextId = 0;
  const pending = new Map<number, Pending>();

  // The helper keeps the process alive only while it runs something.
  const settle = (id: number) => {
    const call = pending.get(id);
    pending.delete(id);
    if (call) clearTimeout(call.timer);
    if (pending.size === 0) {
      helper?.unref();
      helper?.channel?.unref();
    }
    return call;
  };

  const start = (): ChildProcess => {
    const child = fork(helperModule, [], {
      execArgv: tsxFor(helperModule),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (reply: ExecReply) => {
      const call = settle(reply.id);
      if (!call) return;
      const { failure, stdout, stderr } = reply;
      if (!failure) return call.resolve({ stdout, stderr });
      call.reject(new ExecError(failure.message, failure.code, failure.signal, failure.killed, stdout, stderr));
    });
    child.on('exit', (code, signal) => {
      if (helper === child) helper = undefined;
      for (const id of [...pending.keys()])
        settle(id)?.reject(
          helperFailure(`the program helper exited (${signal ?? code}) before it answered`, 'EHELPER'),
        );
    });
    child.on('error', () => undefined); // 'exit' follows and fails what was pending
    return child;
  };

  return (file: string, args: string[], options: ExecOptions): Promise<{ stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const child = (helper ??= start());
      const timer = setTimeout(() => {
        settle(id)?.reject(
          helperFailure(
            `${file}: the program helper did not answer within ${options.timeoutMs + HELPER_GRACE_MS} ms`,
            'ETIMEDOUT',
            true,
          ),
        );
        child.kill();
      }, options.timeoutMs + HELPER_GRACE_MS);
      pending.set(id, { resolve, reject, timer });
      child.ref();
      child.channel?.ref();
      const request: ExecRequest = {
        id,
        file,
        args,
        timeoutMs: options.timeoutMs,
        maxBuffer: options.maxBuffer ?? 1024 * 1024,
        ...(options.cwd ? { cwd: options.cwd } : {}),
      };
      child.send(request, (error) => {
        if (error)
          settle(id)?.reject(helperFailure(`${file}: the program helper is gone: ${error.message}`, 'EHELPER'));
      });
    });
}

/** This process's one helper, forked on first use. */
export const exec = createExec();
