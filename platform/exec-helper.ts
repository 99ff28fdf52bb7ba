// The process `exec.ts` forks once: it runs each program the worker asks for and answers over the IPC channel. It
// holds little memory, so its forks are cheap; the worker's own would copy the page tables of its whole heap.
import { execFile } from 'node:child_process';
import type { ExecReply, ExecRequest } from './exec';

process.on('message', (request: ExecRequest) => {
  const { id, file, args, cwd, timeoutMs, maxBuffer } = request;
  execFile(file, args, { ...(cwd ? { cwd } : {}), timeout: timeoutMs, maxBuffer }, (error, stdout, stderr) => {
    const failure = error
      ? {
          message: error.message,
          ...(error.code !== undefined && error.code !== null ? { code: error.code } : {}),
          ...(error.signal ? { signal: error.signal } : {}),
          killed: error.killed === true,
        }
      : undefined;
    const reply: ExecReply = { id, stdout, stderr, ...(failure ? { failure } : {}) };
    process.send?.(reply);
  });
});

// The worker gone (or its channel closed), there is no one to answer: programs still running finish on their own.
process.on('disconnect', () => process.exit(0));
