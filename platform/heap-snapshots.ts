import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import type { Logger } from 'pino';

/**
 * A heap snapshot of every thread of the process, the worker threads' too. Node's `--heapsnapshot-signal` writes the
 * main thread's alone, and a worker's workflow code (its sticky cache, the workflow bundle) runs in a thread of the
 * Temporal SDK's, whose heap only the inspector reaches (`NodeWorker`, in process: no port is opened).
 */

/** What one signal wrote: the manifest `heap-<pid>-<time>.json` lists it, written last, once every file is whole. */
export interface HeapSnapshotSet {
  pid: number;
  at: string;
  /** The main thread's first, then each worker thread's, with its title. */
  threads: { thread: string; file: string }[];
}

interface AttachedWorker {
  sessionId: string;
  workerInfo: { title: string };
}

/** Each worker thread's snapshot through the inspector's NodeWorker domain, one thread after another. */
async function writeWorkerThreadSnapshots(prefix: string): Promise<HeapSnapshotSet['threads']> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<void>((resolve, reject) =>
      session.post(method, params, (error) => (error ? reject(error) : resolve())),
    );
  const attached: AttachedWorker[] = [];
  const onAttached = ({ params }: { params: AttachedWorker }) => attached.push(params);
  session.on('NodeWorker.attachedToWorker', onAttached);
  try {
    // Attached workers are reported before enable's reply.
    await post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    const written: HeapSnapshotSet['threads'] = [];
    for (const [i, worker] of attached.entries()) {
      const file = `${prefix}-thread-${i + 1}.heapsnapshot`;
      const out = createWriteStream(`${file}.part`);
      const request = 1;
      await new Promise<void>((resolve, reject) => {
        const onMessage = ({ params }: { params: { sessionId: string; message: string } }) => {
          if (params.sessionId !== worker.sessionId) return;
          const message = JSON.parse(params.message) as {
            id?: number;
            method?: string;
            params?: { chunk: string };
            error?: { message: string };
          };
          if (message.method === 'HeapProfiler.addHeapSnapshotChunk') out.write(message.params!.chunk);
          else if (message.id === request) {
            session.off('NodeWorker.receivedMessageFromWorker', onMessage);
            if (message.error) reject(new Error(`${worker.workerInfo.title}: ${message.error.message}`));
            else resolve();
          }
        };
        session.on('NodeWorker.receivedMessageFromWorker', onMessage);
        post('NodeWorker.sendMessageToWorker', {
          sessionId: worker.sessionId,
          message: JSON.stringify({ id: request, method: 'HeapProfiler.takeHeapSnapshot', params: {} }),
        }).catch(reject);
      });
      out.end();
      await once(out, 'close');
      await rename(`${file}.part`, file);
      written.push({ thread: worker.workerInfo.title, file });
    }
    await post('NodeWorker.disable');
    return written;
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
  const main = writeHeapSnapshot(`${prefix}-main.heapsnapshot`);
  const set: HeapSnapshotSet = {
    pid: process.pid,
    at,
    threads: [{ thread: 'main', file: main }, ...(await writeWorkerThreadSnapshots(prefix))],
  };
  await writeFile(`${prefix}.json`, JSON.stringify(set, null, 2));
  return set;
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
