import { annotatedMessage, missingNodeAnnotations, needsHosts, planNodeAnnotations } from './node-annotator';

const hosts = [
  { id: '11111111-1111-4111-8111-111111111111', name: 'node-0' },
  { id: '22222222-2222-4222-8222-222222222222', name: 'node-1' },
];
const node = (annotations?: Record<string, string>, addresses = [{ type: 'InternalIP', address: '192.0.2.11' }]) => ({
  metadata: { name: 'node-1', ...(annotations ? { annotations } : {}) },
  status: {
    addresses: [{ type: 'Hostname', address: 'node-1' }, { type: 'ExternalIP', address: '198.51.100.1' }, ...addresses],
  },
});

describe("midonet-kubernetes' node annotator, planned", () => {
  it.each([
    ['none', undefined, ['midonet.org/host-id', 'midonet.org/tunnel-zone-id', 'midonet.org/tunnel-endpoint-ip']],
    [
      'all, the zone empty (the default zone, as the annotator writes it)',
      { 'midonet.org/host-id': 'h', 'midonet.org/tunnel-zone-id': '', 'midonet.org/tunnel-endpoint-ip': 'i' },
      [],
    ],
    [
      'an empty host ID and tunnel IP (as good as absent)',
      { 'midonet.org/host-id': '', 'midonet.org/tunnel-zone-id': '', 'midonet.org/tunnel-endpoint-ip': '' },
      ['midonet.org/host-id', 'midonet.org/tunnel-endpoint-ip'],
    ],
    [
      'only the host ID (as midonet-kubernetes clusters have it for a moment)',
      { 'midonet.org/host-id': 'h' },
      ['midonet.org/tunnel-zone-id', 'midonet.org/tunnel-endpoint-ip'],
    ],
  ])('a Node with %s lacks what is listed', (_, annotations, missing) => {
    expect(missingNodeAnnotations(annotations)).toEqual(missing);
  });

  it('fills all three in one patch: the host of its name, its first InternalIP, the default zone', () => {
    expect(
      planNodeAnnotations(
        node({}, [
          { type: 'InternalIP', address: '192.0.2.11' },
          { type: 'InternalIP', address: '192.0.2.12' },
        ]),
        hosts,
      ),
    ).toEqual({
      outcome: 'annotate',
      annotations: {
        'midonet.org/host-id': hosts[1]!.id,
        'midonet.org/tunnel-zone-id': '',
        'midonet.org/tunnel-endpoint-ip': '192.0.2.11',
      },
    });
  });

  it('never writes over a value someone set', () => {
    const plan = planNodeAnnotations(
      node({ 'midonet.org/tunnel-endpoint-ip': '10.0.0.9', 'midonet.org/tunnel-zone-id': 'z' }),
      hosts,
    );
    expect(plan).toEqual({ outcome: 'annotate', annotations: { 'midonet.org/host-id': hosts[1]!.id } });
  });

  it('needs MidoNet only for a missing host ID', () => {
    expect(needsHosts(node({ 'midonet.org/host-id': 'h' }))).toBe(false);
    expect(needsHosts(node({}))).toBe(true);
    expect(planNodeAnnotations(node({ 'midonet.org/host-id': 'h' }), [])).toMatchObject({ outcome: 'annotate' });
  });

  it('waits, writing nothing, while MidoNet has no host of its name or the Node no InternalIP', () => {
    expect(planNodeAnnotations(node({}), [hosts[0]!])).toEqual({
      outcome: 'wait',
      reason: 'MidoNet has no host named node-1 yet: its MidoNet agent registers it when it starts on the Node',
    });
    expect(planNodeAnnotations(node({}, []), hosts)).toEqual({
      outcome: 'wait',
      reason: 'Node node-1 has no InternalIP address yet for its tunnel endpoint',
    });
  });

  it('has nothing to do for a Node annotated whole', () => {
    const all = { 'midonet.org/host-id': 'h', 'midonet.org/tunnel-zone-id': '', 'midonet.org/tunnel-endpoint-ip': 'i' };
    expect(planNodeAnnotations(node(all), [])).toEqual({ outcome: 'complete' });
  });

  it("words its Event as midonet-kubernetes' `Annotated %v` of a Go map", () => {
    expect(annotatedMessage({ 'midonet.org/tunnel-zone-id': '', 'midonet.org/host-id': 'h1' })).toBe(
      'Annotated map[midonet.org/host-id:h1 midonet.org/tunnel-zone-id:]',
    );
  });
});
