// The operation list is a pure function of the seed (what makes a failing seed replayable and shrinkable), and the
// reduction of a failing log keeps what the failure needs.
import { describeOp, generateOps, targetOf, type Op } from './ops';
import { ddmin, relevantOps, sameFailure } from './shrink';

describe('chaos operations', () => {
  it('the same seed gives the same operations; another seed others', () => {
    expect(generateOps({ seed: 7, ops: 200, peerPods: true })).toEqual(
      generateOps({ seed: 7, ops: 200, peerPods: true }),
    );
    expect(generateOps({ seed: 8, ops: 200, peerPods: true }).map(describeOp)).not.toEqual(
      generateOps({ seed: 7, ops: 200, peerPods: true }).map(describeOp),
    );
  });

  it('every kind and action occurs, every operation but delete carries the object it wants, named by its target', () => {
    const ops = generateOps({ seed: 1, ops: 500, peerPods: true });
    expect(new Set(ops.map((op) => op.action))).toEqual(new Set(['create', 'update', 'delete', 'recreate']));
    expect(new Set(ops.map((op) => op.target.split(' ')[0]))).toEqual(
      new Set(['Node', 'Pod', 'Service', 'Endpoints', 'Translation']),
    );
    expect(ops.some((op) => op.spec?.kind === 'Pod' && op.spec.peer)).toBe(true);
    for (const op of ops)
      expect([op.index, op.action === 'delete' ? undefined : op.spec && targetOf(op.spec)]).toEqual([
        op.index,
        op.action === 'delete' ? undefined : op.target,
      ]);
  });

  it('without peer pods, no Pod of the peer-pod runtime class', () => {
    expect(
      generateOps({ seed: 1, ops: 300, peerPods: false }).filter((op) => op.spec?.kind === 'Pod' && op.spec.peer),
    ).toEqual([]);
  });
});

describe('reducing a failing operation log', () => {
  const ops = generateOps({ seed: 3, ops: 120, peerPods: true });

  it("keeps the operations on the objects named, a Pod's Node and Endpoints' Service", () => {
    const pod = ops.find((op) => op.spec?.kind === 'Pod' && op.spec.node)!;
    const node = pod.spec?.kind === 'Pod' ? `Node ${pod.spec.node}` : '';
    const kept = relevantOps(ops, [{ invariant: 'midonet', object: pod.target, detail: '' }]);
    expect(new Set(kept.map((op) => op.target))).toEqual(
      new Set([pod.target, ...(ops.some((op) => op.target === node) ? [node] : [])]),
    );
    const endpoints = relevantOps(ops, [{ invariant: 'status', object: 'Endpoints default/svc-1', detail: '' }]);
    expect(new Set(endpoints.map((op) => op.target))).toEqual(
      new Set(ops.filter((op) => op.target.endsWith('default/svc-1')).map((op) => op.target)),
    );
  });

  it("a PeerPod's operations are its peer pod's, on the Pod", () => {
    const peer = ops.find((op) => op.spec?.kind === 'Pod' && op.spec.peer && op.spec.node)!;
    const name = peer.target.split('/').pop()!;
    const kept = relevantOps(ops, [{ invariant: 'finalizers', object: `PeerPod default/${name}`, detail: '' }]);
    expect(kept).toContain(peer);
    expect(kept.some((op) => op.target.startsWith('Node '))).toBe(true);
  });

  it('ddmin finds the two operations a failure needs', async () => {
    const [a, b] = [ops[17]!, ops[90]!];
    const fails = (candidate: Op[]) => Promise.resolve(candidate.includes(a) && candidate.includes(b));
    expect((await ddmin(ops, fails, 200)).map((op) => op.index)).toEqual([a.index, b.index]);
  });

  it('the same failure is the same invariant on the same object', () => {
    const same = sameFailure([{ invariant: 'workflows', object: 'Pod default/p-1', detail: 'x' }]);
    expect(same([{ invariant: 'workflows', object: 'Pod default/p-1', detail: 'y' }])).toBe(true);
    expect(same([{ invariant: 'midonet', object: 'Pod default/p-1', detail: 'x' }])).toBe(false);
  });
});
