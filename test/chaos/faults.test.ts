// Which faults a run draws from follows its profile (a dev-profile seed keeps the schedule it had before the cluster
// faults existed), and the cluster faults act on the cluster's hosts and PostgreSQL as they say.
import { partialFake } from '../../starter/controller/testing/fakes';
import { CLUSTER_FAULTS, FAULT_KINDS, FaultInjector, parseFaults, type FaultKind } from './faults';
import type { ChaosStack } from './stack';

describe('parseFaults', () => {
  const dev = { peerPods: true, temporal: 'dev' } as const;
  const cluster = { peerPods: true, temporal: 'cluster' } as const;

  it.each([
    [
      'all on dev: every fault but the cluster ones, in the order they had',
      'all',
      dev,
      [
        'worker-kill',
        'starter-kill',
        'temporal-restart',
        'midonet-restart',
        'midonet-5xx',
        'midonet-timeout',
        'midonet-latency',
        'midonet-misdirect',
        'libvirt-cut',
        'forged-observation',
        'kube-apiserver-restart',
        'watch-expiry',
        'peerpod-deleted',
      ],
    ],
    ['all on the cluster profile: every fault', 'all', cluster, [...FAULT_KINDS]],
    ['none on either profile: none', 'none', cluster, []],
    [
      'a list on the cluster profile, blanks ignored',
      ' history-host-kill, postgres-restart,,worker-kill',
      cluster,
      ['history-host-kill', 'postgres-restart', 'worker-kill'],
    ],
    [
      'without peer pods, no fault that needs them',
      'all',
      { peerPods: false, temporal: 'cluster' } as const,
      FAULT_KINDS.filter((k) => k !== 'libvirt-cut' && k !== 'peerpod-deleted'),
    ],
  ])('%s', (_what, text, scope, expected) => {
    expect(parseFaults(text, scope)).toEqual(expected);
  });

  it('the dev profile draws no cluster fault', () => {
    expect(parseFaults('all', dev).filter((k) => CLUSTER_FAULTS.includes(k))).toEqual([]);
  });

  it('refuses a cluster fault named on the dev profile, saying which and what to do', () => {
    expect(() => parseFaults('worker-kill,matching-host-kill,postgres-restart', dev)).toThrow(
      'matching-host-kill, postgres-restart: cluster profile only (--temporal cluster); the dev server is one process without PostgreSQL',
    );
  });

  it('refuses an unknown fault', () => {
    expect(() => parseFaults('history-kill', cluster)).toThrow(/^unknown fault "history-kill"/);
  });
});

describe('the cluster faults', () => {
  /** A cluster of two history and two matching hosts, with what the faults did to it. */
  function fakeCluster() {
    const hosts = new Map([
      ['temporal-b', { service: 'history', running: true }],
      ['temporal-c', { service: 'history', running: true }],
      ['temporal-d', { service: 'matching', running: true }],
      ['temporal-e', { service: 'matching', running: true }],
    ]);
    const events: string[] = [];
    const stack = partialFake<ChaosStack>('ChaosStack', {
      temporalHosts: (service) => [...hosts].filter(([, h]) => h.running && h.service === service).map(([n]) => n),
      temporalHostsDown: () => [...hosts].filter(([, h]) => !h.running).map(([n]) => n),
      temporalHostPid: () => 4242,
      killTemporalHost: (name) => {
        events.push(`kill ${name} (${hosts.get(name)!.service})`);
        hosts.get(name)!.running = false;
        return Promise.resolve(4242);
      },
      restartTemporalHost: (name) => {
        events.push(`start ${name}`);
        hosts.get(name)!.running = true;
        return Promise.resolve();
      },
      restartPostgres: ({ shutdown }) => Promise.resolve(void events.push(`postgres ${shutdown}`)),
      postgresPid: 4343,
      admin: partialFake<ChaosStack['admin']>('EmulatorAdmin', { clearFaults: () => Promise.resolve() }),
      workerRunning: true,
      starterRunning: true,
    });
    return { hosts, events, stack };
  }

  async function run(kinds: FaultKind[], faults: number) {
    const cluster = fakeCluster();
    const timing = { workerKillMs: 1e9, faultEveryMs: 1, downMs: { min: 0, max: 0 } };
    const injector = new FaultInjector(cluster.stack, kinds, 21, () => undefined, timing);
    injector.start();
    while (Object.values(injector.counts).reduce((a, b) => a + b, 0) < faults)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await injector.stop();
    return { ...cluster, counts: injector.counts };
  }

  it('a host kill SIGKILLs one host of its service and starts that host again; PostgreSQL restarts fast or immediate', async () => {
    const { events, counts, hosts } = await run([...CLUSTER_FAULTS], 24);
    for (const kind of CLUSTER_FAULTS) expect(counts[kind]).toBeGreaterThan(0);
    const kills = events.flatMap((e, i) => (e.startsWith('kill') ? [[e, events[i + 1]]] : []));
    for (const service of ['history', 'matching'])
      expect(kills.filter(([kill]) => kill!.endsWith(`(${service})`)).length).toBe(
        counts[`${service}-host-kill` as FaultKind],
      );
    for (const [kill, next] of kills) expect(next).toBe(`start ${kill!.split(' ')[1]}`);
    expect(new Set(events.filter((e) => e.startsWith('postgres')))).toEqual(
      new Set(['postgres fast', 'postgres immediate']),
    );
    expect([...hosts.values()].every((h) => h.running)).toBe(true);
  }, 20_000);

  it('stopping the faults starts a host that is still down', async () => {
    const cluster = fakeCluster();
    cluster.hosts.get('temporal-c')!.running = false;
    await new FaultInjector(cluster.stack, [...CLUSTER_FAULTS], 21, () => undefined).stop();
    expect(cluster.events).toEqual(['start temporal-c']);
  });
});
