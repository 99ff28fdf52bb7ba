// The chaos run's operations: generated in full from the seed before anything runs (a pure model of what should
// exist picks sensible targets), so a run, a re-run and a shrunk run replay exactly the same list whatever the stack
// answered. Each operation names one object (`target`) and carries the whole desired object, so it can be executed
// alone, out of its original context, as delta debugging needs.
import { bridge, chain } from '../../model/translation/resources';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import {
  ANNOTATIONS,
  type EndpointsProjection,
  type NodeProjection,
  type PodProjection,
  type ServiceProjection,
  type Translation,
} from '../../model/translation/types';
import { random } from './prng';

export const NAMESPACE = 'default';
/** Label of the hand-written Translations, so the checks tell them from the ones Steward writes. */
export const HAND_WRITTEN_LABEL = 'chaos.steward.dev/hand-written';
export const PEER_POD_RUNTIME_CLASS = 'kata-remote';

/** MidoNet hosts, one per Node name (their agents register them); a re-created Node keeps its host. */
export const HOSTS = [0, 1, 2, 3].map((i) => ({
  id: `c4a05000-0000-4000-8000-${(0xa0 + i).toString(16).padStart(12, '0')}`,
  name: `node-${i}`,
}));
const POOLS = { pods: 10, peerPods: 4, services: 4, translations: 6 } as const;

export interface NodeSpec {
  kind: 'Node';
  name: string;
  host: number;
  mac?: string;
  externalIP?: string;
}
export interface PodSpec {
  kind: 'Pod';
  name: string;
  node?: string;
  peer: boolean;
  ip?: string;
  mac?: string;
  phase: 'Running' | 'Succeeded';
}
export interface ServiceSpec {
  kind: 'Service';
  name: string;
  ports: { name: string; protocol: 'TCP' | 'UDP'; port: number }[];
}
export interface EndpointsSpec {
  kind: 'Endpoints';
  name: string;
  subsets: { addresses: { ip: string }[]; ports: { name: string; protocol: 'TCP' | 'UDP'; port: number }[] }[];
}
export interface TranslationSpec {
  kind: 'Translation';
  name: string;
  /** Hand-written Translations do not always carry `midonet.org/deleter` (issue 10, defect 3). */
  finalizer: boolean;
  resources: { kind: 'Bridge' | 'Chain'; id: string; name: string }[];
}
export type ObjectSpec = NodeSpec | PodSpec | ServiceSpec | EndpointsSpec | TranslationSpec;

export type Action = 'create' | 'update' | 'delete' | 'recreate';
export interface Op {
  /** Position in the generated list (kept when the list is shrunk). */
  index: number;
  action: Action;
  /** `Pod default/p-3`, `Node node-1`: what the operation touches. */
  target: string;
  /** The object as the operation wants it (absent for delete). */
  spec?: ObjectSpec;
}

export const targetOf = (spec: Pick<ObjectSpec, 'kind' | 'name'>) =>
  spec.kind === 'Node' ? `Node ${spec.name}` : `${spec.kind} ${NAMESPACE}/${spec.name}`;

export function describeOp(op: Op): string {
  const s = op.spec;
  const detail = (() => {
    if (!s) return '';
    switch (s.kind) {
      case 'Node':
        return `host ${s.host}${s.mac ? ` mac ${s.mac}` : ''}${s.externalIP ? ` ext ${s.externalIP}` : ''}`;
      case 'Pod':
        return `${s.peer ? 'peer pod ' : ''}node ${s.node ?? '-'} ip ${s.ip ?? '-'}${s.mac ? ` mac ${s.mac}` : ''}${s.phase === 'Running' ? '' : ` ${s.phase}`}`;
      case 'Service':
        return `ports ${s.ports.map((p) => `${p.name}:${p.port}/${p.protocol}`).join(',')}`;
      case 'Endpoints':
        return s.subsets
          .map(
            (sub) =>
              `${sub.addresses.map((a) => a.ip).join(',')} → ${sub.ports.map((p) => `${p.name}:${p.port}`).join(',')}`,
          )
          .join('; ');
      case 'Translation':
        return `${s.finalizer ? '' : 'no finalizer, '}${s.resources.map((r) => `${r.kind} ${r.id.slice(-6)} "${r.name}"`).join(', ')}`;
    }
  })();
  return `#${op.index} ${op.action} ${op.target}${detail ? ` (${detail})` : ''}`;
}

export interface GenerateOptions {
  seed: number;
  ops: number;
  peerPods: boolean;
}

/** The seeded operation list. */
export function generateOps({ seed, ops: count, peerPods }: GenerateOptions): Op[] {
  const r = random(seed);
  // What the operations so far leave in the cluster, by target.
  const live = new Map<string, ObjectSpec>();
  let nextId = 0;
  const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
  const freshId = () => `c4a05${hex(seed & 0xfff, 3)}-0000-4000-8000-${hex(++nextId, 12)}`;
  const liveNames = (kind: ObjectSpec['kind']) => [...live.values()].filter((s) => s.kind === kind).map((s) => s.name);
  const mac = () => `0a:58:0a:${hex(r.int(0, 255), 2)}:${hex(r.int(0, 255), 2)}:${hex(r.int(0, 255), 2)}`;

  const nodeSpec = (name: string): NodeSpec => ({
    kind: 'Node',
    name,
    host: Number(name.slice('node-'.length)),
    ...(r.chance(0.3) ? { mac: mac() } : {}),
    ...(r.chance(0.3) ? { externalIP: `198.51.100.${r.int(1, 254)}` } : {}),
  });
  const podSpec = (name: string, peer: boolean): PodSpec => {
    // Mostly on a Node that exists; sometimes on one that does not (yet).
    const nodes = liveNames('Node');
    const node =
      peer && r.chance(0.3)
        ? undefined
        : nodes.length && r.chance(0.85)
          ? r.pick(nodes)
          : `node-${r.int(0, HOSTS.length - 1)}`;
    const index = Number(/\d+$/.exec(name)![0]) + (peer ? 100 : 10);
    const ip = node && r.chance(0.85) ? `10.1.${node.slice('node-'.length)}.${index}` : undefined;
    return {
      kind: 'Pod',
      name,
      ...(node ? { node } : {}),
      peer,
      ...(ip ? { ip } : {}),
      ...(r.chance(0.5) ? { mac: mac() } : {}),
      phase: 'Running',
    };
  };
  const servicePorts = (): ServiceSpec['ports'] =>
    [
      { name: 'http', protocol: 'TCP' as const, port: 80 },
      { name: 'dns', protocol: 'UDP' as const, port: 53 },
      { name: 'admin', protocol: 'TCP' as const, port: r.int(8000, 8099) },
    ].filter((_, i) => i === 0 || r.chance(0.5));
  const endpointsSpec = (name: string): EndpointsSpec => {
    const service = live.get(targetOf({ kind: 'Service', name })) as ServiceSpec | undefined;
    const podIPs = [...live.values()].flatMap((s) => (s.kind === 'Pod' && s.ip ? [s.ip] : []));
    const addresses = [
      ...new Set(
        Array.from({ length: r.int(0, 3) }, () =>
          podIPs.length && r.chance(0.8) ? r.pick(podIPs) : `10.1.${r.int(0, 3)}.${r.int(200, 250)}`,
        ),
      ),
    ];
    const ports = (service?.ports ?? [{ name: 'http', protocol: 'TCP' as const, port: 80 }])
      .filter((_, i) => i === 0 || r.chance(0.7))
      .map((p) => ({ ...p, port: p.port + 8000 }));
    return {
      kind: 'Endpoints',
      name,
      subsets: addresses.length ? [{ addresses: addresses.map((ip) => ({ ip })), ports }] : [],
    };
  };
  const translationSpec = (name: string, before?: TranslationSpec): TranslationSpec => {
    const fresh = () => ({ kind: r.pick(['Bridge', 'Chain'] as const), id: freshId(), name: `${name}-${nextId}` });
    if (!before)
      return {
        kind: 'Translation',
        name,
        finalizer: r.chance(0.7),
        resources: Array.from({ length: r.int(1, 3) }, fresh),
      };
    // An edit: drop one, rename one (a PUT, or delete + create for a Chain), add one.
    let resources = before.resources.filter(() => r.chance(0.75));
    resources = resources.map((res) => (r.chance(0.3) ? { ...res, name: `${res.name}-v${r.int(2, 99)}` } : res));
    if (resources.length === 0 || r.chance(0.5)) resources.push(fresh());
    return { ...before, resources };
  };

  const kinds = { Node: 10, Pod: 32, PeerPod: peerPods ? 10 : 0, Service: 12, Endpoints: 14, Translation: 22 };
  const pools: Record<keyof typeof kinds, string[]> = {
    Node: HOSTS.map((h) => h.name),
    Pod: Array.from({ length: POOLS.pods }, (_, i) => `p-${i}`),
    PeerPod: Array.from({ length: POOLS.peerPods }, (_, i) => `pp-${i}`),
    Service: Array.from({ length: POOLS.services }, (_, i) => `svc-${i}`),
    Endpoints: Array.from({ length: POOLS.services }, (_, i) => `svc-${i}`),
    Translation: Array.from({ length: POOLS.translations }, (_, i) => `hw-${i}`),
  };
  const specFor = (
    kind: keyof typeof kinds,
    name: string,
    before: ObjectSpec | undefined,
    action: Action,
  ): ObjectSpec => {
    switch (kind) {
      case 'Node': {
        const spec = nodeSpec(name);
        return action === 'update' && before?.kind === 'Node' ? { ...spec, host: before.host } : spec;
      }
      case 'Pod':
      case 'PeerPod': {
        const peer = kind === 'PeerPod';
        if (action !== 'update' || before?.kind !== 'Pod') return podSpec(name, peer);
        // nodeName cannot change: an update touches the MAC annotation, the IP (once) or the phase.
        const choice = r.weighted({ mac: 5, ip: before.ip || !before.node ? 0 : 3, succeeded: 1 });
        if (choice === 'mac') return { ...before, ...(r.chance(0.8) ? { mac: mac() } : { mac: undefined }) };
        if (choice === 'ip')
          return {
            ...before,
            ip: `10.1.${before.node!.slice('node-'.length)}.${Number(/\d+$/.exec(name)![0]) + (peer ? 100 : 10)}`,
          };
        return { ...before, phase: 'Succeeded' };
      }
      case 'Service':
        return { kind: 'Service', name, ports: servicePorts() };
      case 'Endpoints':
        return endpointsSpec(name);
      case 'Translation':
        return translationSpec(name, action === 'update' && before?.kind === 'Translation' ? before : undefined);
    }
  };

  const out: Op[] = [];
  for (let index = 0; index < count; index++) {
    const kind = r.weighted(kinds);
    const name = r.pick(pools[kind]);
    const target = targetOf({ kind: kind === 'PeerPod' ? 'Pod' : kind, name });
    const before = live.get(target);
    const action: Action = before ? r.weighted({ update: 5, delete: 3, recreate: 2 }) : 'create';
    if (action === 'delete') {
      live.delete(target);
      out.push({ index, action, target });
      continue;
    }
    const spec = specFor(kind, name, before, action);
    live.set(target, spec);
    out.push({ index, action, target, spec });
  }
  return out;
}

/** The Node's projection as the starter would send it (no UID: IDs derive from names). */
export function nodeProjection(spec: NodeSpec): NodeProjection {
  const host = HOSTS[spec.host]!;
  const internal = `192.0.2.${10 + spec.host}`;
  return {
    kind: 'Node',
    metadata: {
      name: spec.name,
      uid: '',
      annotations: {
        [ANNOTATIONS.hostId]: host.id,
        [ANNOTATIONS.tunnelZoneId]: '',
        [ANNOTATIONS.tunnelEndpointIP]: internal,
        ...(spec.mac ? { [ANNOTATIONS.macAddress]: spec.mac } : {}),
      },
    },
    spec: { podCIDR: `10.1.${spec.host}.0/24` },
    status: {
      addresses: [
        { type: 'InternalIP', address: internal },
        ...(spec.externalIP ? [{ type: 'ExternalIP', address: spec.externalIP }] : []),
        { type: 'Hostname', address: spec.name },
      ],
    },
  };
}

export function podProjection(spec: PodSpec): PodProjection {
  return {
    kind: 'Pod',
    metadata: {
      name: spec.name,
      namespace: NAMESPACE,
      uid: '',
      annotations: spec.mac ? { [ANNOTATIONS.macAddress]: spec.mac } : {},
    },
    spec: spec.node ? { nodeName: spec.node } : {},
    status: { phase: spec.phase, ...(spec.ip ? { podIP: spec.ip } : {}) },
  };
}

export const serviceProjection = (spec: ServiceSpec): ServiceProjection => ({
  kind: 'Service',
  metadata: { name: spec.name, namespace: NAMESPACE, uid: '' },
  spec: { type: 'ClusterIP', ports: spec.ports },
});

export const endpointsProjection = (spec: EndpointsSpec): EndpointsProjection => ({
  kind: 'Endpoints',
  metadata: { name: spec.name, namespace: NAMESPACE, uid: '' },
  subsets: spec.subsets,
});

/** A hand-written Translation as the operation writes it. */
export function handWritten(spec: TranslationSpec, tenant: string): Translation {
  return {
    name: spec.name,
    namespace: NAMESPACE,
    labels: { [HAND_WRITTEN_LABEL]: 'true' },
    ownerReferences: [],
    finalizers: spec.finalizer ? [TRANSLATION_FINALIZER] : [],
    resources: spec.resources.map((res) =>
      res.kind === 'Bridge'
        ? bridge({ id: res.id, tenantId: tenant, name: res.name })
        : chain({ id: res.id, tenantId: tenant, name: res.name }),
    ),
  };
}
