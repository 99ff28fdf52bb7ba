import type { Client } from '@temporalio/client';
import { startInProcessWorker, type InProcessWorker } from '../test/support';
import { applyObjectSteps, type ApplyObjectInput } from './apply-object';
import { observedSignal, stateQuery, type Observation } from './messages';
import type { ObjectRef } from './naming';
import type { NodeProjection } from './translation/types';

/**
 * A Node's lifecycle on the stack's real Temporal server, with partial fakes for the Kubernetes activities it calls:
 * the IPv6 addresses its translation leaves out are told in a Normal Event on the Node, once per set of addresses,
 * not on every apply.
 */
describe('a Node with IPv6 addresses', () => {
  const taskQueue = `object-lifecycle-${Date.now()}`;
  const ref: ObjectRef = { kind: 'Node', name: `dual-${Date.now()}` };
  let client: Client;
  let worker: InProcessWorker;
  const events: { ref: ObjectRef; type: string; reason: string; message: string }[] = [];
  let applies = 0;

  beforeAll(async () => {
    const applyTranslations = ({ translations }: { translations: { namespace: string; name: string }[] }) => {
      applies += 1;
      return Promise.resolve({ applied: translations.map((t) => `${t.namespace}/${t.name}`), deleted: [], terminating: [] });
    };
    const unused = () => Promise.reject(new Error('a Node depends on nothing'));
    worker = await startInProcessWorker({
      taskQueue,
      workflowsPath: require.resolve('./index'),
      activities: {
        // The apply's real steps (one local activity), with the Translations' write faked.
        applyObject: (input: ApplyObjectInput) => applyObjectSteps({ applyTranslations, readObject: unused, translationsReady: unused, addReferrer: unused, removeReferrer: unused }, input),
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
    metadata: { name: ref.name, uid: 'node-uid-1', annotations: { 'midonet.org/host-id': '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90' } },
    spec: { podCIDR: '10.1.1.0/24' },
    status: { addresses: addresses.map((address) => ({ type: 'InternalIP', address })) },
  });
  const observation = (addresses: string[]): Observation<NodeProjection> => ({ ref, uid: 'node-uid-1', generation: 0, deleting: false, gone: false, finalizers: [], projection: node(addresses) });
  /** Waits for the `n`th apply and the Node back in `ready` after it. */
  const applied = async (n: number) => {
    const handle = client.workflow.getHandle(`node/${ref.name}`);
    for (let i = 0; i < 100 && applies < n; i++) await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 100 && (await handle.query(stateQuery)).state !== 'ready'; i++) await new Promise((resolve) => setTimeout(resolve, 100));
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
    expect(events).toEqual([{ ref, type: 'Normal', reason: 'IPv6AddressSkipped', message: expect.stringMatching(/: InternalIP fd00::10$/) as unknown }]);

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
