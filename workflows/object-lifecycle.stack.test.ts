import type { Client } from '@temporalio/client';
import { startInProcessWorker, type InProcessWorker } from '../test/support';
import { applyObjectSteps, type ApplyObjectInput } from '../model/apply-object';
import { observedSignal, stateQuery, type Observation } from '../model/messages';
import type { ObjectRef } from '../model/naming';
import { KNOWN_PATCHES } from '../model/patches';
import { K8sUID } from '../model/search-attributes';
import type { NodeProjection } from '../model/translation/types';

/**
 * A Node's lifecycle on the stack's real Temporal server, with partial fakes for the Kubernetes activities it calls:
 * the IPv6 addresses its translation leaves out are told in a Normal Event on the Node, once per set of addresses,
 * not on every apply.
 */
const taskQueue = `object-lifecycle-${Date.now()}`;

describe('a Node with IPv6 addresses', () => {
  const ref: ObjectRef = { kind: 'Node', name: `dual-${Date.now()}` };
  let client: Client;
  let worker: InProcessWorker;
  const events: { ref: ObjectRef; type: string; reason: string; message: string }[] = [];
  let applies = 0;

  beforeAll(async () => {
    const applyTranslations = ({ translations }: { translations: { namespace: string; name: string }[] }) => {
      applies += 1;
      return Promise.resolve({
        applied: translations.map((t) => `${t.namespace}/${t.name}`),
        written: [],
        stale: [],
        deleted: [],
        terminating: [],
      });
    };
    const unused = () => Promise.reject(new Error('a Node depends on nothing'));
    worker = await startInProcessWorker({
      taskQueue,
      workflowsPath: require.resolve('./index'),
      activities: {
        // The apply's real steps (one local activity), with the Translations' write and push faked.
        syncObject: (input: ApplyObjectInput) =>
          applyObjectSteps(
            {
              applyTranslations,
              translationsReady: unused,
              addReferrer: unused,
              removeReferrer: unused,
            },
            input,
          ),
        listReferrers: () => Promise.resolve({ found: true, referrers: [] }),
        recordObjectEvent: (event: (typeof events)[number]) => {
          events.push(event);
          return Promise.resolve({ found: true });
        },
      },
    });
    client = worker.client;
  });

  afterAll(() => worker?.stop());

  const node = (addresses: string[]): NodeProjection => ({
    kind: 'Node',
    metadata: {
      name: ref.name,
      uid: 'node-uid-1',
      annotations: {
        'midonet.org/host-id': '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
        'midonet.org/tunnel-endpoint-ip': '192.0.2.10',
        // As midonet-kubernetes' annotator writes it (the default zone): a Node lacking it is annotated first.
        'midonet.org/tunnel-zone-id': '',
      },
    },
    spec: { podCIDR: '10.1.1.0/24' },
    status: { addresses: addresses.map((address) => ({ type: 'InternalIP', address })) },
  });
  const observation = (addresses: string[]): Observation<NodeProjection> => ({
    ref,
    uid: 'node-uid-1',
    generation: 0,
    deleting: false,
    gone: false,
    finalizers: [],
    projection: node(addresses),
  });
  /** Waits for the `n`th apply and the Node back in `ready` after it. */
  const applied = async (n: number) => {
    const handle = client.workflow.getHandle(`node/${ref.name}`);
    for (let i = 0; i < 100 && applies < n; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 100 && (await handle.query(stateQuery)).state !== 'ready'; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(applies).toBe(n);
    expect((await handle.query(stateQuery)).state).toBe('ready');
  };

  it('gets an IPv6AddressSkipped Event naming them when the set of skipped addresses changes, not on every apply', async () => {
    const handle = await client.workflow.signalWithStart('nodeLifecycle', {
      taskQueue,
      workflowId: `node/${ref.name}`,
      args: [{ ref }],
      signal: observedSignal,
      signalArgs: [observation(['192.0.2.10', 'fd00::10'])],
    });
    await applied(1);
    expect(events).toEqual([
      {
        ref,
        type: 'Normal',
        reason: 'IPv6AddressSkipped',
        message: expect.stringMatching(/: InternalIP fd00::10$/) as unknown,
      },
    ]);

    // Another IPv4 address: applied again, the same IPv6 address left out, nothing new to tell.
    await handle.signal(observedSignal, observation(['192.0.2.10', 'fd00::10', '192.0.2.20']));
    await applied(2);
    expect(events).toHaveLength(1);

    await handle.signal(observedSignal, observation(['192.0.2.10', 'fd00::10', '192.0.2.20', 'fd00::20']));
    await applied(3);
    expect(events).toHaveLength(2);
    expect(events[1]!.message).toMatch(/: InternalIP fd00::10, InternalIP fd00::20$/);
    await handle.terminate('checked');
  });
});

/**
 * How the starter starts a workflow: its first observation and the patches in effect in its input. Each patch asked
 * with `patched()` would cost a marker and an upsert, and the signal one event more.
 */
/** A sync that had no Translation to write: what the fakes below answer. */
const NOTHING_APPLIED = { outcome: 'applied', applied: [], written: [], stale: [], terminating: [], notes: [] };

describe('a workflow started with its observation and patches in its input', () => {
  let client: Client;
  let worker: InProcessWorker;
  let applies = 0;

  beforeAll(async () => {
    worker = await startInProcessWorker({
      taskQueue,
      workflowsPath: require.resolve('./index'),
      activities: {
        syncObject: () => {
          applies += 1;
          return Promise.resolve(NOTHING_APPLIED);
        },
        listReferrers: () => Promise.resolve({ found: true, referrers: [] }),
      },
    });
    client = worker.client;
  });

  afterAll(() => worker?.stop());

  const nodeObservation = (name: string, uid = `${name}-uid`): Observation<NodeProjection> => ({
    ref: { kind: 'Node', name },
    uid,
    generation: 0,
    deleting: false,
    gone: false,
    finalizers: [],
    projection: {
      kind: 'Node',
      metadata: {
        name,
        uid,
        annotations: {
          'midonet.org/host-id': '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
          'midonet.org/tunnel-endpoint-ip': '192.0.2.10',
          'midonet.org/tunnel-zone-id': '',
        },
      },
      spec: { podCIDR: '10.1.2.0/24' },
      status: { addresses: [] },
    },
  });
  // As the starter starts it: with the incarnation's UID, which the workflow would otherwise upsert.
  const start = (name: string, input: Record<string, unknown>) =>
    client.workflow.start('nodeLifecycle', {
      taskQueue,
      workflowId: `node/${name}`,
      args: [{ ref: { kind: 'Node', name }, ...input }],
      typedSearchAttributes: [{ key: K8sUID, value: `${name}-uid` }],
    });
  const events = async (workflowId: string) =>
    (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const eventually = async (check: () => Promise<boolean>) => {
    for (let i = 0; i < 100 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    return check();
  };

  it('acts on the observation and records no patch marker, no TemporalChangeVersion upsert and no signal', async () => {
    const name = `input-${Date.now()}`;
    const handle = await start(name, { observation: nodeObservation(name), patches: KNOWN_PATCHES });
    expect(await eventually(async () => (await handle.query(stateQuery)).state === 'ready')).toBe(true);
    const history = await handle.fetchHistory();
    const markers = (history.events ?? []).flatMap((e) =>
      e.markerRecordedEventAttributes ? [e.markerRecordedEventAttributes.markerName] : [],
    );
    const upserted = (history.events ?? []).flatMap((e) =>
      Object.keys(e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {}),
    );
    // The apply and the Node's referrers read, nothing else.
    expect(markers).toEqual(['core_local_activity', 'core_local_activity']);
    expect(upserted).toEqual(['LifecycleState']);
    expect((history.events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes)).toEqual([]);
    await handle.terminate('checked');
  });

  it('drops an observation of another object given in its input, and waits for a true one', async () => {
    const name = `stray-${Date.now()}`;
    const before = applies;
    const handle = await start(name, { observation: nodeObservation(`${name}-other`), patches: KNOWN_PATCHES });
    expect(
      await eventually(async () =>
        (await events(handle.workflowId)).some((e) => e.workflowTaskCompletedEventAttributes),
      ),
    ).toBe(true);
    expect((await handle.query(stateQuery)).state).toBe('observing');
    expect(applies).toBe(before);
    await handle.signal(observedSignal, nodeObservation(name));
    expect(await eventually(async () => (await handle.query(stateQuery)).state === 'ready')).toBe(true);
    await handle.terminate('checked');
  });

  it('takes a change signalled before its first workflow task after the observation it was started with, not before', async () => {
    const name = `ordered-${Date.now()}`;
    const queue = `${taskQueue}-late`;
    const seen: string[] = [];
    // No worker polls this queue yet: the start and the signal are both in the history of the first workflow task.
    const handle = await client.workflow.start('nodeLifecycle', {
      taskQueue: queue,
      workflowId: `node/${name}`,
      args: [{ ref: { kind: 'Node', name }, observation: nodeObservation(name), patches: KNOWN_PATCHES }],
      typedSearchAttributes: [{ key: K8sUID, value: `${name}-uid` }],
    });
    const changed = nodeObservation(name);
    changed.generation = 1;
    changed.projection.spec = { podCIDR: '10.1.9.0/24' };
    await handle.signal(observedSignal, changed);
    const late = await startInProcessWorker({
      taskQueue: queue,
      workflowsPath: require.resolve('./index'),
      activities: {
        syncObject: ({ projection }: { projection: NodeProjection }) => {
          seen.push(projection.spec?.podCIDR ?? '');
          return Promise.resolve(NOTHING_APPLIED);
        },
        listReferrers: () => Promise.resolve({ found: true, referrers: [] }),
      },
    });
    try {
      expect(await eventually(async () => (await handle.query(stateQuery)).state === 'ready' && seen.length > 0)).toBe(
        true,
      );
      expect(seen.at(-1)).toBe('10.1.9.0/24');
      await handle.terminate('checked');
    } finally {
      await late.stop();
    }
  });

  it('fails its workflow task, and acts on nothing, when started with a patch this worker does not know (a newer starter)', async () => {
    const name = `newer-${Date.now()}`;
    const before = applies;
    const handle = await start(name, {
      observation: nodeObservation(name),
      patches: [...KNOWN_PATCHES, 'from-the-future'],
    });
    expect(
      await eventually(async () => (await events(handle.workflowId)).some((e) => e.workflowTaskFailedEventAttributes)),
    ).toBe(true);
    const failure = (await events(handle.workflowId)).find((e) => e.workflowTaskFailedEventAttributes)
      ?.workflowTaskFailedEventAttributes?.failure?.message;
    expect(failure).toMatch(/newer Steward .*from-the-future/);
    expect(applies).toBe(before);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.terminate('checked');
  });
});
