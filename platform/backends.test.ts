import { backendsSchema, installation, sweepBackendsNotInstalled } from './backends';

describe('STEWARD_BACKENDS', () => {
  it.each([
    ['peerpods', ['peerpods']],
    ['midonet', ['midonet']],
    ['peerpods,midonet', ['midonet', 'peerpods']],
    [' midonet , peerpods,peerpods ', ['midonet', 'peerpods']],
  ])('%j reads as %j (ordered, without repeats)', (text, backends) => {
    expect(backendsSchema.parse(text)).toEqual(backends);
  });

  it.each(['', 'none', 'cloud', 'peerpods,aws'])('%j is refused, naming what it takes', (text) => {
    const result = backendsSchema.safeParse(text);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(
      `must be peerpods, midonet, or both comma-separated (peerpods,midonet); got "${text}"`,
    );
  });
});

describe('installation', () => {
  it('peer pods only: watches Pods and PeerPods, gives only PeerPods a workflow, no global setup, sweeps the cloud', () => {
    expect(installation(['peerpods'])).toEqual({
      backends: ['peerpods'],
      watched: ['Pod', 'PeerPod'],
      lifecycles: ['PeerPod'],
      globalSetup: false,
      sweep: ['cloud'],
    });
  });

  it('MidoNet only: no PeerPods watched, Pods their own workflow (and no peer pod one), global setup, sweeps MidoNet', () => {
    expect(installation(['midonet'])).toEqual({
      backends: ['midonet'],
      watched: ['Node', 'Pod', 'Service', 'Endpoints', 'Translation'],
      lifecycles: ['Node', 'Pod', 'Service', 'Endpoints', 'Translation'],
      globalSetup: true,
      sweep: ['midonet'],
    });
  });

  it('unset: both, every kind watched and given a workflow, as before the setting', () => {
    expect(installation()).toEqual({
      backends: ['midonet', 'peerpods'],
      watched: ['Node', 'Pod', 'Service', 'Endpoints', 'Translation', 'PeerPod'],
      lifecycles: ['Node', 'Pod', 'Service', 'Endpoints', 'Translation', 'PeerPod'],
      globalSetup: true,
      sweep: ['cloud', 'midonet'],
    });
  });

  it('a sweep of a backend not installed is named with why; one of installed backends passes', () => {
    expect(sweepBackendsNotInstalled(['cloud', 'midonet'], installation(['peerpods']))).toEqual([
      'midonet is not swept here: STEWARD_BACKENDS does not name midonet',
    ]);
    expect(sweepBackendsNotInstalled(['cloud'], installation(['midonet']))).toEqual([
      'cloud is not swept here: STEWARD_BACKENDS does not name peerpods',
    ]);
    expect(sweepBackendsNotInstalled(['cloud', 'midonet'], installation())).toEqual([]);
  });
});
