import type { NodeProjection } from '../model/translation/types';
import { Model, perEvent } from './objects';
import { podAt } from './scenarios/burst';

const node: NodeProjection = {
  kind: 'Node',
  metadata: {
    name: 'n-1',
    uid: '',
    annotations: {
      'midonet.org/host-id': 'b0000000-0000-4000-8000-000000000001',
      'midonet.org/tunnel-zone-id': '',
      'midonet.org/tunnel-endpoint-ip': '192.0.2.20',
    },
  },
  spec: { podCIDR: '10.1.0.0/16' },
  status: { addresses: [{ type: 'InternalIP', address: '192.0.2.20' }] },
};
const ctx = { namespace: 'ns', nodes: [node] };
const resources = (model: Model, p: Parameters<Model['translationsOf']>[0]) =>
  model.translationsOf(p).reduce((n, t) => n + t.resources.length, 0);

describe('the bench model', () => {
  it('puts in the ledger what changed since the last checkpoint, a change at a time or many at once', () => {
    const model = new Model();
    model.write(undefined, node);
    const pods = [0, 1, 2].map((i) => podAt(ctx, `p-${i}`, i));
    for (const pod of pods) model.write(undefined, pod);
    model.checkpoint();
    const live = model.live();
    expect(model.ledger).toEqual({
      applies: 4,
      translationsCreated: live.length,
      translationsDeleted: 0,
      resourcesCreated: live.reduce((n, t) => n + t.resources.length, 0),
      resourcesDeleted: 0,
    });

    const before = { ...model.ledger };
    const annotated = podAt(ctx, 'p-1', 1, { 'midonet.org/mac-address': '0a:58:0a:01:00:03' });
    model.write(pods[1], annotated);
    model.checkpoint();
    const added = model.translationsOf(annotated).length - model.translationsOf(pods[1]).length;
    expect(added).toBeGreaterThan(0);
    expect(model.ledger.applies - before.applies).toBe(1);
    expect(model.ledger.translationsCreated - before.translationsCreated).toBe(added);

    const beforeDelete = { ...model.ledger };
    model.write(pods[0], undefined);
    model.checkpoint();
    expect(model.ledger.applies).toBe(beforeDelete.applies);
    expect(model.ledger.translationsDeleted - beforeDelete.translationsDeleted).toBe(
      model.translationsOf(pods[0]).length,
    );
    expect(model.ledger.resourcesDeleted - beforeDelete.resourcesDeleted).toBe(resources(model, pods[0]));

    const unchanged = { ...model.ledger };
    model.checkpoint();
    expect(model.ledger).toEqual(unchanged);
  });

  it("counts a Node's change in every Pod whose Translations it changes", () => {
    const model = new Model();
    model.write(undefined, node);
    const pods = [0, 1].map((i) => podAt(ctx, `p-${i}`, i));
    for (const pod of pods) model.write(undefined, pod);
    model.checkpoint();
    const before = { ...model.ledger };
    const moved: NodeProjection = {
      ...node,
      metadata: {
        ...node.metadata,
        annotations: { ...node.metadata.annotations, 'midonet.org/host-id': 'b0000000-0000-4000-8000-000000000002' },
      },
    };
    const text = (ts: { resources: unknown }[]) => new Set(ts.map((t) => JSON.stringify(t)));
    const [liveBefore, podsBefore] = [text(model.live()), text(pods.flatMap((p) => model.translationsOf(p)))];
    model.write(node, moved);
    const [liveAfter, podsAfter] = [text(model.live()), text(pods.flatMap((p) => model.translationsOf(p)))];
    model.checkpoint();
    expect([...podsAfter].filter((t) => !podsBefore.has(t)).length).toBeGreaterThan(0);
    expect(model.ledger.applies - before.applies).toBe(1);
    expect(model.ledger.translationsCreated - before.translationsCreated).toBe(
      [...liveAfter].filter((t) => !liveBefore.has(t)).length,
    );
    expect(model.ledger.translationsDeleted - before.translationsDeleted).toBe(
      [...liveBefore].filter((t) => !liveAfter.has(t)).length,
    );
  });
});

describe('perEvent', () => {
  it("gives the server's CPU in ms per history event of every workflow, and nothing without events", () => {
    expect(
      perEvent(
        39,
        new Map([
          ['pod', 12_000],
          ['node', 3_600],
        ]),
      ),
    ).toBeCloseTo(2.5, 5);
    expect(perEvent(39, new Map())).toBeUndefined();
    expect(perEvent(undefined, new Map([['pod', 1]]))).toBeUndefined();
  });
});
