// The worker killed in the middle of a push (SIGKILL, no grace): a new worker resumes the push, and MidoNet ends with
// exactly the Translation's resources, none twice, none left over.
import type { ChildProcess } from 'node:child_process';
import {
  createTranslation,
  emulatorCounts,
  emulatorIds,
  expectedIds,
  harnessForFile,
  readTranslation,
  routerResource,
  sampleGroups,
  spawnWorker,
  stateOf,
  waitFor,
  waitForState,
} from '../support/pusher-harness';

let child: ChildProcess | undefined;
const h = harnessForFile({ prefix: 'e2e-crash', worker: false }, (h) => {
  child?.kill('SIGKILL');
  return h.admin.clearFaults();
});

it('a push cut short by SIGKILL resumes on a new worker with no duplicate and no leak', async () => {
  const groups = sampleGroups(h.namespace);
  const nodes = groups.find((g) => g.group === 'Node')!.translations;
  // What node1's main Translation needs first: the globals, and node1's host in the tunnel zone.
  const before = [
    ...groups.find((g) => g.group === 'Global')!.translations,
    nodes.find((t) => t.name.startsWith('node-tunnel-endpoint.4.node1-'))!,
  ];
  // node1's main Translation: bridge, ports, a route, a link, a chain, a binding and a rule, pushed in one activity.
  const node = nodes.find((t) => t.name === 'node.4.node1')!;

  child = await spawnWorker(h);
  for (const t of before) await createTranslation(h, t);
  for (const t of before) await waitForState(h, t.name, 'synced');

  // Every write takes a second now: the push of node1's resources lasts about ten.
  const slow = await h.admin.injectFault({ method: 'POST', path: '/**', action: 'latency', latencyMs: 1_000 });
  await createTranslation(h, node);
  const bridge = (JSON.parse(node.resources[0]!.body) as { id: string }).id;
  await waitFor('the push to be under way', async () => (await emulatorIds(h)).Bridge?.includes(bridge), 30_000);
  expect((await stateOf(h, node.name)).state).toBe('pushing');
  child.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  child = undefined;
  const cut = await emulatorCounts(h);
  await h.admin.removeFault(slow.id);

  // The activity's heartbeat times out (30 s) and its retry runs on the new worker, from the last heartbeat.
  await h.startWorker();
  await waitForState(h, node.name, 'synced', 90_000);
  await waitFor('the Translation to report Synced', async () =>
    (await readTranslation(h, node.name))?.status?.conditions?.some((c) => c.type === 'Synced' && c.status === 'True'),
  );

  const ids = await emulatorIds(h);
  const wanted = expectedIds([...before, node], [routerResource()]);
  for (const kind of Object.keys(wanted)) expect([kind, ids[kind]]).toEqual([kind, wanted[kind]]);
  const counts = await emulatorCounts(h);
  // The only link and binding of node1 exist once; the cut push had not made them all yet.
  expect({ PortLink: counts.PortLink, HostInterfacePort: counts.HostInterfacePort }).toEqual({
    PortLink: 1,
    HostInterfacePort: 1,
  });
  expect(Object.values(cut).reduce((a, b) => a + b, 0)).toBeLessThan(Object.values(counts).reduce((a, b) => a + b, 0));
});
