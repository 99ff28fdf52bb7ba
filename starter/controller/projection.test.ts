import type { Observation } from '../../model/messages';
import { INLINE_RESOURCE_BYTES } from '../../model/translation/types';
import {
  awaitsPeerPodDeletion,
  heldTranslation,
  observe,
  observePeerPodOfPod,
  ownerOfTranslation,
  ownerToRepair,
  ownLivePeerPod,
  releasedPeerPod,
} from './projection';

const meta = (extra: Record<string, unknown> = {}) => ({
  name: 'web',
  namespace: 'default',
  uid: 'u-1',
  resourceVersion: '7',
  labels: { app: 'web' },
  ...extra,
});

describe('projection per kind', () => {
  it('Pod: keeps node, IPs and the MAC annotation; drops labels, containers and other annotations', () => {
    const pod = {
      metadata: meta({
        annotations: { 'midonet.org/mac-address': '02:00:00:00:00:01', 'kubectl.kubernetes.io/restartedAt': 'now' },
      }),
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
      status: { phase: 'Running', podIP: '10.0.0.5', conditions: [{ type: 'Ready' }] },
    };
    expect(observe('Pod', pod)).toEqual({
      ref: { kind: 'Pod', namespace: 'default', name: 'web' },
      uid: 'u-1',
      generation: 0,
      deleting: false,
      gone: false,
      finalizers: [],
      projection: {
        kind: 'Pod',
        metadata: {
          name: 'web',
          namespace: 'default',
          uid: 'u-1',
          annotations: { 'midonet.org/mac-address': '02:00:00:00:00:01' },
        },
        spec: { nodeName: 'node-1' },
        status: { podIP: '10.0.0.5' },
      },
    });
  });

  it('Pod: a status its translation reads the same is no change (Pending → Running, an IP without the MAC)', () => {
    const pod = (status: Record<string, unknown>, annotations: Record<string, string> = {}) => {
      const object = { metadata: meta({ annotations }), spec: { nodeName: 'node-1' }, status };
      return observe('Pod', object).projection;
    };
    const mac = { 'midonet.org/mac-address': '02:00:00:00:00:01' };
    expect(pod({ phase: 'Running', podIP: '10.0.0.5' })).toEqual(pod({ phase: 'Pending' }));
    expect(pod({ phase: 'Running', podIP: '10.0.0.5' }, mac)).not.toEqual(pod({ phase: 'Pending' }, mac));
    expect(pod({ phase: 'Running', podIP: '10.0.0.5' }, mac)).toMatchObject({ status: { podIP: '10.0.0.5' } });
    for (const phase of ['Succeeded', 'Failed'])
      expect(pod({ phase, podIP: '10.0.0.5' })).toMatchObject({ status: { phase } });
  });

  it('Node: cluster-scoped ref, host annotations, podCIDR and addresses', () => {
    const node = {
      metadata: { name: 'node-1', uid: 'n-1', annotations: { 'midonet.org/host-id': 'h', 'node.alpha/x': 'y' } },
      spec: { podCIDR: '10.1.0.0/24', taints: [] },
      status: { addresses: [{ type: 'InternalIP', address: '192.168.0.1' }], capacity: { cpu: '2' } },
    };
    const obs = observe('Node', node);
    expect(obs.ref).toEqual({ kind: 'Node', name: 'node-1' });
    expect(obs.projection).toEqual({
      kind: 'Node',
      metadata: { name: 'node-1', uid: 'n-1', annotations: { 'midonet.org/host-id': 'h' } },
      spec: { podCIDR: '10.1.0.0/24' },
      status: { addresses: [{ type: 'InternalIP', address: '192.168.0.1' }] },
    });
  });

  it('Service: type, ClusterIP and ports with the API server defaults', () => {
    const service = {
      metadata: meta({ generation: 3 }),
      spec: { clusterIP: '10.96.0.10', ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'web' } },
    };
    const obs = observe('Service', service);
    expect(obs.generation).toBe(3);
    expect(obs.projection).toEqual({
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', uid: 'u-1' },
      spec: { type: 'ClusterIP', clusterIP: '10.96.0.10', ports: [{ name: '', protocol: 'TCP', port: 80 }] },
    });
  });

  it('Endpoints: ready addresses and ports only', () => {
    const endpoints = {
      metadata: meta(),
      subsets: [
        {
          addresses: [{ ip: '10.0.0.5', nodeName: 'node-1' }],
          notReadyAddresses: [{ ip: '10.0.0.6' }],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        },
      ],
    };
    expect(observe('Endpoints', endpoints).projection).toEqual({
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'default', uid: 'u-1' },
      subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] }],
    });
  });

  it('Translation: resources, generation, finalizers and the deletion time; status is left out', () => {
    const translation = {
      metadata: meta({ generation: 2, finalizers: ['midonet.org/deleter'], deletionTimestamp: '2025-01-02T03:04:05Z' }),
      resources: [
        { kind: 'Bridge', body: '{"id":"b"}' },
        { kind: 'Port', parent: 'p', body: '{}' },
      ],
      status: { conditions: [{ type: 'Ready' }] },
    };
    const obs = observe('Translation', translation);
    expect({ deleting: obs.deleting, finalizers: obs.finalizers, generation: obs.generation }).toEqual({
      deleting: true,
      finalizers: ['midonet.org/deleter'],
      generation: 2,
    });
    expect(obs.projection).toEqual({
      resources: [
        { kind: 'Bridge', parent: '', body: '{"id":"b"}' },
        { kind: 'Port', parent: 'p', body: '{}' },
      ],
      generation: 2,
      finalizers: ['midonet.org/deleter'],
      deletionTimestamp: '2025-01-02T03:04:05.000Z',
    });
  });

  it('a Translation over INLINE_RESOURCE_BYTES travels by reference: its digest and count, never its resources', () => {
    const bodies = (n: number, last: string) =>
      Array.from({ length: n }, (_, i) => ({
        kind: 'Rule',
        parent: 'c',
        body: i === n - 1 ? last : `{"id":"r-${i}","type":"accept"}`,
      }));
    const n = Math.ceil(INLINE_RESOURCE_BYTES / 40);
    const project = (resources: ReturnType<typeof bodies>) => {
      const translation = { metadata: meta({ generation: 3 }), resources };
      return observe('Translation', translation).projection as {
        resources?: unknown[];
        digest?: string;
        count?: number;
      };
    };
    const large = project(bodies(n, '{"id":"last"}'));
    expect(large.resources).toBeUndefined();
    expect(large.count).toBe(n);
    expect(large.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(large).length).toBeLessThan(300);
    const changed = project(bodies(n, '{"id":"other"}'));
    expect(changed.digest).not.toBe(large.digest);
    const small = project(bodies(3, '{"id":"last"}'));
    expect(small.resources).toHaveLength(3);
    expect(small.digest).toBeUndefined();
  });

  it('the same deletion time reads the same whether it came as a Date (typed list) or a string (watch)', () => {
    const at = '2025-01-02T03:04:05Z';
    const asString = observe('Translation', { metadata: meta({ deletionTimestamp: at }) });
    const asDate = observe('Translation', { metadata: meta({ deletionTimestamp: new Date(at) }) });
    expect(asDate.projection).toEqual(asString.projection);
  });

  it('an object the schema rejects is still forwarded, its projection naming the field', () => {
    const service = { metadata: meta(), spec: { ports: [{ port: 'eighty' }] } };
    expect(observe('Service', service).projection).toEqual({
      invalid: {
        ok: false,
        error: {
          reason: 'MalformedObject',
          object: { kind: 'Service', namespace: 'default', name: 'web' },
          field: 'spec.ports[0].port',
          message: expect.any(String) as string,
        },
      },
    });
  });

  it('a deleted object is observed as gone with its last state', () => {
    const pod = { metadata: meta(), spec: {}, status: {} };
    const obs = observe('Pod', pod, true);
    expect({ gone: obs.gone, uid: obs.uid }).toEqual({ gone: true, uid: 'u-1' });
  });
});

describe('peer pods', () => {
  const runtimeClasses = new Set(['kata-remote']);
  const pod = (runtimeClassName?: string) => ({
    metadata: { name: 'web', namespace: 'default', uid: 'pod-u1', deletionTimestamp: new Date('2026-01-01T00:00:00Z') },
    spec: { containers: [], ...(runtimeClassName ? { runtimeClassName } : {}) },
  });

  it('a Pod of a peer-pod runtime class also goes to its peer pod workflow, with only the runtime class', () => {
    expect(observePeerPodOfPod(pod('kata-remote'), runtimeClasses)).toEqual({
      ref: { kind: 'PeerPod', namespace: 'default', name: 'web' },
      uid: 'pod-u1',
      generation: 0,
      deleting: true,
      gone: false,
      finalizers: [],
      projection: { source: 'Pod', runtimeClassName: 'kata-remote' },
    });
  });

  it('other Pods do not', () => {
    expect(observePeerPodOfPod(pod(), runtimeClasses)).toBeUndefined();
    expect(observePeerPodOfPod(pod('runc'), runtimeClasses)).toBeUndefined();
  });

  it("a PeerPod (cloud-api-adaptor's or Steward's) gives its VM and its Pod's UID (the controller reference)", () => {
    const peerPod = {
      metadata: {
        name: 'web-resource-q7z9r',
        namespace: 'default',
        uid: 'pp-u1',
        finalizers: ['peer.pod/finalizer'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-u1', controller: true }],
      },
      spec: { cloudProvider: 'aws', instanceID: 'i-0123' },
    };
    expect(observe('PeerPod', peerPod)).toMatchObject({
      ref: { kind: 'PeerPod', namespace: 'default', name: 'web-resource-q7z9r' },
      finalizers: ['peer.pod/finalizer'],
      projection: { source: 'PeerPod', cloudProvider: 'aws', instanceID: 'i-0123', ownerUid: 'pod-u1' },
    });
    expect(observe('PeerPod', { metadata: { name: 'x', namespace: 'default', uid: 'pp-2' } }).projection).toEqual({
      source: 'PeerPod',
    });
  });
});

describe('PeerPods Steward wrote', () => {
  const runtimeClasses = new Set(['kata-remote']);
  const steward = { 'app.kubernetes.io/managed-by': 'steward' };
  const peerPod = (labels: Record<string, string>, extra: Record<string, unknown> = {}) => ({
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'pp-u1',
      labels,
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-u1', controller: true }],
      ...extra,
    },
  });
  const event = (type: 'upsert' | 'delete', object: ReturnType<typeof peerPod>) =>
    ({ type, kind: 'PeerPod', object }) as const;
  const pods = (runtimeClassName?: string, uid = 'pod-u1') => ({
    get: (kind: string, namespace: string | undefined, name: string) =>
      kind === 'Pod' && namespace === 'default' && name === 'web'
        ? { metadata: { name, namespace, uid }, spec: { containers: [], runtimeClassName } }
        : undefined,
  });
  const own = (e: ReturnType<typeof event>, source = pods('kata-remote')) => ownLivePeerPod(e, source, runtimeClasses);

  it("are their peer pod workflow's own news while they and their peer pod's Pod live", () => {
    expect(own(event('upsert', peerPod(steward)))).toBe(true);
  });

  it('are observed when deleted, when anyone else wrote them, or when no live peer pod of theirs stands behind them', () => {
    expect(own(event('upsert', peerPod(steward, { deletionTimestamp: new Date() })))).toBe(false);
    expect(own(event('delete', peerPod(steward)))).toBe(false);
    expect(own(event('upsert', peerPod({})))).toBe(false);
    expect(own(event('upsert', peerPod({ 'app.kubernetes.io/managed-by': 'cloud-api-adaptor' })))).toBe(false);
    // Its Pod is gone, is another incarnation, or is no peer pod (a Steward of another installation wrote it).
    expect(own(event('upsert', peerPod(steward)), { get: () => undefined })).toBe(false);
    expect(own(event('upsert', peerPod(steward)), pods('kata-remote', 'pod-u2'))).toBe(false);
    expect(own(event('upsert', peerPod(steward)), pods())).toBe(false);
    expect(own(event('upsert', peerPod(steward, { name: 'web-resource-x' })))).toBe(false);
  });

  it('are no news gone after their Pod (their workflow let them go), but are while it lives or when not ours', () => {
    const released = (e: ReturnType<typeof event>, source = pods('kata-remote')) => releasedPeerPod(e, source);
    expect(released(event('delete', peerPod(steward)), { get: () => undefined })).toBe(true);
    expect(released(event('delete', peerPod(steward)), pods('kata-remote', 'pod-u2'))).toBe(true);
    expect(released(event('delete', peerPod(steward)))).toBe(false);
    expect(released(event('delete', peerPod({})), { get: () => undefined })).toBe(false);
    expect(released(event('delete', peerPod(steward, { ownerReferences: [] })), { get: () => undefined })).toBe(false);
    expect(released(event('upsert', peerPod(steward)), { get: () => undefined })).toBe(false);
  });
});

describe("a peer pod's deletion waits for its PeerPod's", () => {
  const pod = {
    metadata: { name: 'web', namespace: 'default', uid: 'pod-u1' },
    spec: { runtimeClassName: 'kata-remote' },
  };
  const podGone = observePeerPodOfPod(pod, new Set(['kata-remote']), true)!;
  const peerPod = (extra: Record<string, unknown> = {}) => ({
    metadata: {
      name: 'web',
      namespace: 'default',
      uid: 'pp-u1',
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-u1', controller: true }],
      ...extra,
    },
  });
  const cache = (object?: ReturnType<typeof peerPod>) => ({
    get: (kind: string, namespace: string | undefined, name: string) =>
      kind === 'PeerPod' && namespace === 'default' && name === 'web' ? object : undefined,
  });
  const awaits = (object: ReturnType<typeof peerPod> | undefined, ...pending: Observation[]) =>
    awaitsPeerPodDeletion(cache(object), new Map(pending.map((obs) => [obs.uid, obs])));

  it('while its Pod is deleting or gone and the PeerPod it owns is live', () => {
    expect(awaits(peerPod(), podGone)).toBe(true);
    const deleting = { ...pod, metadata: { ...pod.metadata, deletionTimestamp: new Date() } };
    expect(awaits(peerPod(), observePeerPodOfPod(deleting, new Set(['kata-remote']))!)).toBe(true);
  });

  it('not once the PeerPod is deleting or gone, nor for a PeerPod another Pod owns or none does', () => {
    const deleting = peerPod({ deletionTimestamp: new Date() });
    expect(awaits(deleting, podGone, observe('PeerPod', deleting))).toBe(false);
    expect(awaits(undefined, podGone)).toBe(false);
    expect(
      awaits(peerPod({ ownerReferences: [{ kind: 'Pod', name: 'web', uid: 'pod-u2', controller: true }] }), podGone),
    ).toBe(false);
    expect(awaits(peerPod({ ownerReferences: [] }), podGone)).toBe(false);
  });

  it('not while the Pod lives, nor for a PeerPod deleted by hand', () => {
    expect(awaits(peerPod(), observePeerPodOfPod(pod, new Set(['kata-remote']))!)).toBe(false);
    expect(awaits(peerPod(), observe('PeerPod', peerPod(), true))).toBe(false);
  });
});

describe("Translations their owner's workflow pushes", () => {
  const pod = { metadata: { name: 'web', namespace: 'ns', uid: 'pod-uid' } };
  const owned = (metadata: Record<string, unknown> = {}) => ({
    metadata: {
      name: 'pod.4.web',
      namespace: 'ns',
      uid: 't-uid',
      labels: { 'midonet.org/owner-uid': 'pod-uid' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-uid' }],
      ...metadata,
    },
  });
  const source = (objects: Record<string, unknown>) => ({
    get: (kind: string, namespace: string | undefined, name: string) =>
      objects[`${kind} ${namespace ?? ''}/${name}`] as never,
  });
  const ownerOf = ownerOfTranslation(['Pod', 'Translation']);

  it('belong to their owner when the owner-uid label names the ownerReference, and only for kinds this starter watches', () => {
    expect(ownerOf({ type: 'upsert', kind: 'Translation', object: owned() })).toEqual({
      kind: 'Pod',
      namespace: 'ns',
      name: 'web',
      uid: 'pod-uid',
    });
    // Hand-written (no label), or another owner than the label's: its own pusher's.
    expect(ownerOf({ type: 'upsert', kind: 'Translation', object: owned({ labels: {} }) })).toBeUndefined();
    const other = owned({ labels: { 'midonet.org/owner-uid': 'another' } });
    expect(ownerOf({ type: 'upsert', kind: 'Translation', object: other })).toBeUndefined();
    // A Node's, where this starter watches no Nodes.
    const nodes = owned({
      labels: { 'midonet.org/owner-uid': 'node-uid' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'node-uid' }],
    });
    expect(ownerOf({ type: 'upsert', kind: 'Translation', object: nodes })).toBeUndefined();
  });

  it("are news for their owner's workflow only when deleted while that very owner lives", () => {
    const event = (type: 'upsert' | 'delete', object = owned()) => ({ type, kind: 'Translation' as const, object });
    const deleting = owned({ deletionTimestamp: '2026-01-01T00:00:00Z' });
    const live = source({ 'Pod ns/web': pod });
    // Written or changed by Steward: nothing to tell.
    expect(ownerToRepair(event('upsert'), ownerOf(event('upsert')), live)).toBeUndefined();
    // Deleted by hand: the owner's observation, from the starter's cache.
    for (const e of [event('upsert', deleting), event('delete')])
      expect(ownerToRepair(e, ownerOf(e), live)).toMatchObject({
        ref: { kind: 'Pod', namespace: 'ns', name: 'web' },
        uid: 'pod-uid',
        gone: false,
      });
    // The owner gone, going, or another incarnation: its own workflow finalizes its Translations.
    for (const owner of [
      undefined,
      { metadata: { ...pod.metadata, deletionTimestamp: 'x' } },
      { metadata: { ...pod.metadata, uid: 'new' } },
    ])
      expect(ownerToRepair(event('delete'), ownerOf(event('delete')), source({ 'Pod ns/web': owner }))).toBeUndefined();
  });

  it('are held when being deleted under our finalizer, with their own observation and their owner', () => {
    const held = (object: ReturnType<typeof owned>, type: 'upsert' | 'delete' = 'upsert') => {
      const event = { type, kind: 'Translation' as const, object };
      return heldTranslation(event, ownerOf(event));
    };
    const deleting = { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['midonet.org/deleter'] };
    expect(held(owned(deleting))).toMatchObject({
      observation: { ref: { kind: 'Translation', namespace: 'ns', name: 'pod.4.web' }, uid: 't-uid', deleting: true },
      owner: { kind: 'Pod', namespace: 'ns', name: 'web', uid: 'pod-uid' },
    });
    // Its resources read by reference when they are deleted: a stale cache must not name what to delete.
    const projection = held(owned(deleting))?.observation.projection as { digest?: string; count?: number };
    expect([typeof projection.digest, projection.count, 'resources' in projection]).toEqual(['string', 0, false]);
    // Not being deleted, held by another finalizer only, gone already, or hand-written (no owner): not ours to free.
    expect(held(owned({ finalizers: ['midonet.org/deleter'] }))).toBeUndefined();
    expect(held(owned({ ...deleting, finalizers: ['example.com/other'] }))).toBeUndefined();
    expect(held(owned(deleting), 'delete')).toBeUndefined();
    expect(held(owned({ ...deleting, labels: {} }))).toBeUndefined();
  });
});
