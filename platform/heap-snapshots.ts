import { mkdir, rename, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';
import type { Logger } from 'pino';

/**
 * A heap snapshot of every thread of the process, the worker threads' too. Node's `--heapsnapshot-signal` writes the
 * main thread's alone, and a worker's workflow code (its sticky cache, the workflow bundle) runs in a thread of the
 * Temporal SDK's, whose heap only the inspector reaches (`NodeWorker`, in process: no port is opened).
 */

/** A V8 heap's size: what it holds (live and not yet collected) and what it has taken from the system. */
export interface HeapSize {
  usedBytes: number;
  totalBytes: number;
}

/** What one signal wrote: the manifest `heap-<pid>-<time>.json` lists it, written last, once every file is whole. */
export interface HeapSnapshotSet {
  pid: number;
  at: string;
  /**
   * The process's memory as the signal found it, before any snapshot (a snapshot collects garbage first):
   * `process.memoryUsage()` (RSS, the main heap, memory outside V8's heaps held by JavaScript objects).
   */
  memory: NodeJS.MemoryUsage;
  /** The main thread's first, then each worker thread's, with its title and its heap's size then. */
  threads: { thread: string; file: string; heap: HeapSize }[];
}

interface AttachedWorker {
  sessionId: string;
  workerInfo: { title: string };
}

interface WorkerReply {
  id?: number;
  method?: string;
  params?: { chunk: string };
  result?: unknown;
  error?: { message: string };
}

/** The in-process inspector attached to every worker thread (NodeWorker domain): a request to one, and its reply. */
async function attachToWorkerThreads<T>(
  use: (
    workers: AttachedWorker[],
    ask: (worker: AttachedWorker, method: string, onEvent?: (message: WorkerReply) => void) => Promise<unknown>,
  ) => Promise<T>,
): Promise<T> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<void>((resolve, reject) =>
      session.post(method, params, (error) => (error ? reject(error) : resolve())),
    );
  const attached: AttachedWorker[] = [];
  const onAttached = ({ params }: { params: AttachedWorker }) => attached.push(params);
  session.on('NodeWorker.attachedToWorker', onAttached);
  let requests = 0;
  const ask = (worker: AttachedWorker, method: string, onEvent?: (message: WorkerReply) => void) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++requests;
      const onMessage = ({ params }: { params: { sessionId: string; message: string } }) => {
        if (params.sessionId !== worker.sessionId) return;
        const message = JSON.parse(params.message) as WorkerReply;
        if (message.id !== id) return onEvent?.(message);
        session.off('NodeWorker.receivedMessageFromWorker', onMessage);
        if (message.error) reject(new Error(`${worker.workerInfo.title}: ${method}: ${message.error.message}`));
        else resolve(message.result);
      };
      session.on('NodeWorker.receivedMessageFromWorker', onMessage);
      post('NodeWorker.sendMessageToWorker', {
        sessionId: worker.sessionId,
        message: JSON.stringify({ id, method, params: {} }),
      }).catch(reject);
    });
  try {
    // Attached workers are reported before enable's reply.
    await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    const result = await use(attached, ask);
    // Detached one by one: a worker left attached answers the next session's requests to the old one.
    for (const worker of attached) await post('NodeWorker.detach', { sessionId: worker.sessionId });
    await post('NodeWorker.disable');
    return result;
  } finally {
    session.off('NodeWorker.attachedToWorker', onAttached);
    session.disconnect();
  }
}

/** Writes every thread's heap into `dir` and returns what it wrote (its manifest's content). */
export async function writeHeapSnapshots(dir: string): Promise<HeapSnapshotSet> {
  await mkdir(dir, { recursive: true });
  const at = new Date().toISOString();
  const prefix = join(dir, `heap-${process.pid}-${at.replaceAll(':', '')}`);
  return attachToWorkerThreads(async (workers, ask) => {
    // Every size first: each snapshot collects its heap's garbage.
    const memory = process.memoryUsage();
    const mainHeap = getHeapStatistics();
    const workerHeaps: { usedSize: number; totalSize: number }[] = [];
    for (const worker of workers)
      workerHeaps.push((await ask(worker, 'Runtime.getHeapUsage')) as { usedSize: number; totalSize: number });
    const threads: HeapSnapshotSet['threads'] = [
      {
        thread: 'main',
        file: writeHeapSnapshot(`${prefix}-main.heapsnapshot`),
        heap: { usedBytes: mainHeap.used_heap_size, totalBytes: mainHeap.total_heap_size },
      },
    ];
    for (const [i, worker] of workers.entries()) {
      const file = `${prefix}-thread-${i + 1}.heapsnapshot`;
      // Kept, then written at once: the chunks arrive inside the inspector's dispatch, where a stream's own writes
      // re-entered themselves (ERR_MULTIPLE_CALLBACK).
      const chunks: string[] = [];
      await ask(worker, 'HeapProfiler.takeHeapSnapshot', (message) => {
        if (message.method === 'HeapProfiler.addHeapSnapshotChunk') chunks.push(message.params!.chunk);
      });
      await writeFile(`${file}.part`, chunks);
      await rename(`${file}.part`, file);
      const { usedSize, totalSize } = workerHeaps[i]!;
      threads.push({ thread: worker.workerInfo.title, file, heap: { usedBytes: usedSize, totalBytes: totalSize } });
    }
    const set: HeapSnapshotSet = { pid: process.pid, at, memory, threads };
    await writeFile(`${prefix}.json`, JSON.stringify(set, null, 2));
    return set;
  });
}

/**
 * On `signal`, every thread's heap into `dir` (one set at a time: a signal during a write is ignored). Returns the
 * function that stops listening.
 */
export function heapSnapshotsOnSignal(dir: string, log: Logger, signal: NodeJS.Signals = 'SIGUSR2'): () => void {
  let writing = false;
  const onSignal = () => {
    if (writing) return;
    writing = true;
    log.info({ dir }, 'writing a heap snapshot of every thread');
    writeHeapSnapshots(dir)
      .then((set) => log.info({ files: set.threads.map((t) => t.file) }, 'heap snapshots written'))
      .catch((error: unknown) => log.error({ err: error, dir }, 'heap snapshots failed'))
      .finally(() => (writing = false));
  };
  process.on(signal, onSignal);
  return () => process.off(signal, onSignal);
}
