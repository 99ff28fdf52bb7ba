import type { Client } from '@temporalio/client';
import pino from 'pino';
import { Registry } from 'prom-client';
import { countObjectsByState } from './object-counts';
import { lifecycleStates } from '../workflows/machines';

const log = pino({ level: 'silent' });

async function objectsOf(registry: Registry) {
  const metric = registry.getSingleMetric('steward_objects');
  return metric ? (await metric.get()).values.map(({ labels, value }) => ({ ...labels, value })) : [];
}

/** A partial fake: only `workflow.count`, answering from a table of query → count, or failing once told to. */
function fakeClient(counts: Record<string, number>, calls: string[] = []) {
  const state = { down: false };
  const client = {
    workflow: {
      count: (query: string) => {
        calls.push(query);
        if (state.down) return Promise.reject(new Error('operation is not supported'));
        return Promise.resolve({ count: counts[query] ?? 0, groups: [] });
      },
    },
  } as unknown as Client;
  return { client, state };
}

const running = 'ExecutionStatus="Running" AND ';
const pods = {
  [`${running}K8sKind="Pod"`]: 5,
  [`${running}K8sKind="Pod" AND LifecycleState="synced"`]: 3,
  [`${running}K8sKind="Pod" AND LifecycleState="stuck"`]: 1,
};

describe('objects per lifecycle state, counted by the leading starter', () => {
  it('counts the states of the lifecycle machines, taken from the machines themselves', () => {
    expect(lifecycleStates('Translation')).toEqual(
      expect.arrayContaining(['observing', 'pushing', 'synced', 'stuck', 'paused', 'done']),
    );
    expect(lifecycleStates('Pod')).toEqual(expect.arrayContaining(['translating', 'ready', 'finalizing', 'stuck']));
    expect(lifecycleStates('PeerPod')).toEqual(
      expect.arrayContaining(['own.creatingVm', 'own.tracking', 'tracked.tracking', 'deletingVm', 'stuck']),
    );
  });

  it('sets a value per kind and state, sums unlisted states as other, and skips the states of kinds without objects', async () => {
    const registry = new Registry();
    const calls: string[] = [];
    const { client } = fakeClient(pods, calls);
    const counter = countObjectsByState({
      client,
      registry,
      log,
      isLeader: () => true,
      states: () => ['synced', 'stuck'],
    });
    await counter.refresh();
    await counter.stop();
    expect(await objectsOf(registry)).toEqual([
      { kind: 'Pod', state: 'synced', value: 3 },
      { kind: 'Pod', state: 'stuck', value: 1 },
      { kind: 'Pod', state: 'other', value: 1 },
    ]);
    // One query per kind (6) and one per state for the only kind with objects (2).
    expect(calls).toHaveLength(8);
  });

  it('asks nothing and exports nothing while it follows, and drops its values when it stops leading', async () => {
    const registry = new Registry();
    const calls: string[] = [];
    const { client } = fakeClient(pods, calls);
    let leading = false;
    const counter = countObjectsByState({ client, registry, log, isLeader: () => leading, states: lifecycleStates });
    await counter.refresh();
    expect(calls).toEqual([]);
    expect(await objectsOf(registry)).toEqual([]);
    leading = true;
    await counter.refresh();
    expect((await objectsOf(registry)).length).toBeGreaterThan(0);
    leading = false;
    await counter.refresh();
    await counter.stop();
    expect(await objectsOf(registry)).toEqual([]);
  });

  it('keeps the last values and warns once while the server cannot count', async () => {
    const registry = new Registry();
    const { client, state } = fakeClient(pods);
    const warn = jest.fn();
    const counter = countObjectsByState({
      client,
      registry,
      log: { warn, info: jest.fn() } as unknown as pino.Logger,
      isLeader: () => true,
      states: () => ['synced', 'stuck'],
    });
    await counter.refresh();
    state.down = true;
    await counter.refresh();
    await counter.refresh();
    await counter.stop();
    expect(warn).toHaveBeenCalledTimes(1);
    expect((await objectsOf(registry))[0]).toEqual({ kind: 'Pod', state: 'synced', value: 3 });
  });
});
