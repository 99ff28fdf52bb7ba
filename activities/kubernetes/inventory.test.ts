import { recordedMidonetIds, unrecordedVms } from './inventory';

const vm = (instanceId: string, podUid: string) => ({ instanceId, podUid });

describe('unrecordedVms', () => {
  it.each([
    { why: 'a VM no PeerPod and no Pod knows is unrecorded', peerPods: [], podUids: [] as string[], expected: ['i-1'] },
    {
      why: 'a PeerPod with its instance id records it',
      peerPods: [{ instanceId: 'i-1', ownerUids: [], ownerNames: [] }],
      podUids: [],
      expected: [],
    },
    {
      why: 'a PeerPod owned by its pod records it, even without an instance id yet',
      peerPods: [{ ownerUids: ['pod-1'], ownerNames: [] }],
      podUids: [],
      expected: [],
    },
    {
      why: 'a live Pod with its UID records it (the PeerPod is not written yet)',
      peerPods: [],
      podUids: ['pod-1'],
      expected: [],
    },
    {
      why: "another VM's PeerPod and another Pod do not",
      peerPods: [{ instanceId: 'i-2', ownerUids: ['pod-2'], ownerNames: ['web-2'] }],
      podUids: ['pod-3'],
      expected: ['i-1'],
    },
  ])('$why', ({ peerPods, podUids, expected }) => {
    const pods = podUids.map((uid) => ({ uid, name: 'web-1' }));
    expect(unrecordedVms([vm('i-1', 'pod-1')], { peerPods, pods })).toEqual(expected);
  });

  it('keeps the input order and checks every VM on its own', () => {
    const vms = [vm('i-3', 'p3'), vm('i-1', 'p1'), vm('i-2', 'p2')];
    expect(unrecordedVms(vms, { peerPods: [{ instanceId: 'i-1', ownerUids: [], ownerNames: [] }], pods: [] })).toEqual([
      'i-3',
      'i-2',
    ]);
  });
});

describe("unrecordedVms: cloud-api-adaptor's VMs, known by name only", () => {
  const caaVm = { instanceId: 'uuid-1', name: 'podvm-web-1-0a1b2c3d' };
  it.each([
    { why: 'no PeerPod, no Pod of that name: unrecorded', peerPods: [], pods: [], expected: ['uuid-1'] },
    {
      why: 'a PeerPod with its instance id records it',
      peerPods: [{ instanceId: 'uuid-1', ownerUids: ['u'], ownerNames: ['other'] }],
      pods: [],
      expected: [],
    },
    {
      why: 'a live Pod of its name records it (cloud-api-adaptor may have failed to write the PeerPod)',
      peerPods: [],
      pods: [{ uid: 'u', name: 'web-1' }],
      expected: [],
    },
    {
      why: "a PeerPod of its pod's name records it (a pre-v0.20 PeerPod holds a numeric domain ID)",
      peerPods: [{ instanceId: '7', ownerUids: ['u'], ownerNames: ['web-1'] }],
      pods: [],
      expected: [],
    },
    {
      why: 'a Pod whose name only starts the same does not (web-1 is not web-1-x)',
      peerPods: [],
      pods: [{ uid: 'u', name: 'web' }],
      expected: ['uuid-1'],
    },
  ])('$why', ({ peerPods, pods, expected }) => {
    expect(unrecordedVms([caaVm], { peerPods, pods })).toEqual(expected);
  });
});

describe('recordedMidonetIds', () => {
  const translation = (...bodies: string[]) => ({
    metadata: { name: 't' },
    resources: bodies.map((body) => ({ kind: 'Bridge', body })),
  });

  it('collects the id of every resource body of every Translation', () => {
    const ids = recordedMidonetIds([translation('{"id":"a","name":"node1"}', '{"id":"b"}'), translation('{"id":"c"}')]);
    expect([...ids].sort()).toEqual(['a', 'b', 'c']);
  });

  it('skips bodies without an id or that are not JSON, and Translations without resources', () => {
    const ids = recordedMidonetIds([
      translation('{"peerId":"x"}', 'not json', '{"id":"d"}'),
      { metadata: { name: 'empty' } },
      { resources: null },
    ]);
    expect([...ids]).toEqual(['d']);
  });
});
