import * as k8s from '@kubernetes/client-node';
import type { ListWatchSpec } from './kinds';
import { createSource, informerFactory, type SourceEvent } from './informer';
import { silentLogger } from '../../starter/controller/testing/fakes';

type Callback = (arg: unknown) => void;

/** Stands in for the client's ListWatch: `start()` lists and reports every item as added, like the real one. */
class FakeInformer {
  readonly callbacks: Record<string, Callback[]> = {};
  stopped = false;
  constructor(readonly spec: ListWatchSpec) {}
  on(verb: string, cb: Callback) {
    (this.callbacks[verb] ??= []).push(cb);
  }
  emit(verb: string, arg: unknown) {
    for (const cb of this.callbacks[verb] ?? []) cb(arg);
  }
  async start() {
    try {
      const list = await this.spec.list();
      for (const item of list.items) this.emit('add', item);
    } catch (error) {
      this.emit('error', error);
    }
  }
  stop() {
    this.stopped = true;
    return Promise.resolve();
  }
}

const pod = (name: string, uid = `${name}-1`): k8s.KubernetesObject => ({
  metadata: { name, namespace: 'default', uid },
});

function harness(lists: (k8s.KubernetesObject[] | Error)[]) {
  const informers: { at: number; informer: FakeInformer }[] = [];
  const events: string[] = [];
  /** What the metrics hear: `listed` and `restarted` as they happen. */
  const reports: string[] = [];
  const t0 = Date.now();
  let calls = 0;
  const source = createSource({
    kinds: ['Pod'],
    listWatch: () => ({
      path: '/api/v1/pods',
      list: () => {
        const next = lists[Math.min(calls++, lists.length - 1)]!;
        return next instanceof Error ? Promise.reject(next) : Promise.resolve({ items: next });
      },
    }),
    makeInformer: (spec) => {
      const informer = new FakeInformer(spec);
      informers.push({ at: Date.now() - t0, informer });
      return informer as unknown as k8s.Informer<k8s.KubernetesObject>;
    },
    resyncMs: 60_000,
    backoff: { initialMs: 1_000, maxMs: 4_000 },
    logger: silentLogger,
    onEvent: (e: SourceEvent) => events.push(`${e.type} ${e.object.metadata!.name}/${e.object.metadata!.uid}`),
    onListed: (kind) => reports.push(`listed ${kind}`),
    onError: (kind) => reports.push(`restarted ${kind}`),
  });
  return { source, informers, events, reports, latest: () => informers[informers.length - 1]!.informer };
}

describe('source', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('reports the listed objects, and watch events as they come', async () => {
    const { source, events, latest } = harness([[pod('a'), pod('b')]]);
    source.start();
    await jest.advanceTimersByTimeAsync(0);
    latest().emit('update', pod('a'));
    latest().emit('delete', pod('b'));
    expect(events).toEqual(['upsert a/a-1', 'upsert b/b-1', 'upsert a/a-1', 'delete b/b-1']);
    expect(source.counts()).toEqual({ Pod: 1 });
    await source.stop();
  });

  it('restarts an informer that stopped on an error from a fresh list, and reports what vanished meanwhile', async () => {
    const { source, events, informers, latest } = harness([
      [pod('a'), pod('b'), pod('c')],
      [pod('a'), pod('c', 'c-2')],
    ]);
    source.start();
    await jest.advanceTimersByTimeAsync(0);
    latest().emit('error', new Error('connection reset'));
    await jest.advanceTimersByTimeAsync(999);
    expect(informers).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(informers.map((i) => i.at)).toEqual([0, 1_000]);
    expect(informers[0]!.informer.stopped).toBe(true);
    // b was deleted while nothing watched; c was deleted and created again under the same name.
    expect(events.slice(3)).toEqual(['delete b/b-1', 'delete c/c-1', 'upsert a/a-1', 'upsert c/c-2']);
    await source.stop();
  });

  it('reports each complete list, and each informer that stopped on an error, for the metrics', async () => {
    const down = new Error('connection refused');
    const { source, reports, latest } = harness([[pod('a')], down, [pod('a')]]);
    source.start();
    await jest.advanceTimersByTimeAsync(0);
    latest().emit('error', new Error('connection reset'));
    await jest.advanceTimersByTimeAsync(1_000 + 2_000);
    expect(reports).toEqual(['listed Pod', 'restarted Pod', 'restarted Pod', 'listed Pod']);
    expect(source.synced()).toBe(true);
    await source.stop();
  });

  it('backs off exponentially (capped) while listing keeps failing, and starts over after a success', async () => {
    const down = new Error('connection refused');
    const { source, informers, latest } = harness([down, down, down, down, [pod('a')], [pod('a')]]);
    source.start();
    await jest.advanceTimersByTimeAsync(20_000);
    latest().emit('error', down);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(informers.map((i) => i.at)).toEqual([0, 1_000, 3_000, 7_000, 11_000, 21_000]);
    await source.stop();
  });

  it('re-lists every resyncMs, reporting each deletion once even when the informer reports it too', async () => {
    const { source, informers, events, latest } = harness([[pod('a'), pod('b')], [pod('a')]]);
    source.start();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(informers.map((i) => i.at)).toEqual([0, 60_000]);
    latest().emit('delete', pod('b'));
    // The replaced informer's late callbacks (its stop reports an abort as an error) are ignored.
    informers[0]!.informer.emit('error', new Error('aborted'));
    informers[0]!.informer.emit('add', pod('z'));
    await jest.advanceTimersByTimeAsync(1_000);
    expect(informers).toHaveLength(2);
    expect(events).toEqual(['upsert a/a-1', 'upsert b/b-1', 'delete b/b-1', 'upsert a/a-1']);
    await source.stop();
  });

  it('replays every known object (a new leader sends them all)', async () => {
    const { source, events } = harness([[pod('a'), pod('b')]]);
    source.start();
    await jest.advanceTimersByTimeAsync(0);
    source.replay();
    expect(events).toEqual(['upsert a/a-1', 'upsert b/b-1', 'upsert a/a-1', 'upsert b/b-1']);
    await source.stop();
  });
});

describe('informerFactory', () => {
  /** A Pod as the API server sends it, with a field no one reads. */
  const whole = (name: string, resourceVersion: string) => ({
    metadata: { name, namespace: 'default', uid: `${name}-1`, resourceVersion, labels: { app: 'web' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });
  const keep = ({ metadata = {} }: k8s.KubernetesObject) => ({
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
    },
    kept: true,
  });

  it("with keep, the client's informer caches and reports only what keep keeps of each listed and watched object", async () => {
    let send: (phase: string, object: unknown) => void = () => undefined;
    let watchedFrom: unknown;
    const watch: Pick<k8s.Watch, 'watch'> = {
      watch: (_path, params, callback) => {
        watchedFrom = params.resourceVersion;
        send = (phase, object) => callback(phase, object, { type: phase, object });
        return Promise.resolve(new AbortController());
      },
    };
    const informer = informerFactory(
      new k8s.KubeConfig(),
      watch,
    )({
      path: '/api/v1/pods',
      list: () => Promise.resolve({ items: [whole('a', '1')], metadata: { resourceVersion: '1' } }),
      keep,
    });
    const events: string[] = [];
    for (const verb of ['add', 'update', 'delete'] as const)
      informer.on(verb, (object) => events.push(`${verb} ${JSON.stringify(object)}`));
    await informer.start();
    send('ADDED', whole('b', '2'));
    send('MODIFIED', whole('a', '3'));
    send('BOOKMARK', { metadata: { resourceVersion: '4' } });
    send('DELETED', whole('b', '5'));
    expect(watchedFrom).toBe('1');
    expect(informer.list()).toEqual([keep(whole('a', '3'))]);
    expect(events).toEqual([
      `add ${JSON.stringify(keep(whole('a', '1')))}`,
      `add ${JSON.stringify(keep(whole('b', '2')))}`,
      `update ${JSON.stringify(keep(whole('a', '3')))}`,
      `delete ${JSON.stringify(keep(whole('b', '5')))}`,
    ]);
    await informer.stop();
  });
});
