// The invariants of issue 10's chaos run, as pure functions of one snapshot of the whole system (API server,
// MidoNet emulator, cloud, Temporal), so each can be shown to fail on a hand-made inconsistent state
// (invariants.test.ts). The expected MidoNet content is computed with the real translation functions.
import type * as k8s from '@kubernetes/client-node';
import type { StateDump } from '../../deploy/local/midonet';
import type { MarkedInstance } from '../../activities/cloud/provider';
import { describeRef, workflowId, type ObjectRef } from '../../model/naming';
import { translationOwner } from '../../model/translation/model';
import {
  toProjection,
  translate,
  translateGlobals,
  type NodeProjection,
  type ServiceProjection,
  type Translation,
} from '../../model/translation';
import { expectedIds, idsOfDump } from '../support/objects-harness';
import { HAND_WRITTEN_LABEL } from './ops';

export interface TranslationObject {
  metadata: k8s.V1ObjectMeta & { name: string; namespace: string };
  resources?: Translation['resources'];
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[];
    childResources?: { kind: string; id: string; state: string }[];
  };
}

export interface PeerPodObject {
  metadata: k8s.V1ObjectMeta & { name: string; namespace: string };
  spec?: { instanceID?: string };
}

/** Everything the checks read, taken after quiescence. */
export interface Snapshot {
  tenant: string;
  hosts: { id: string }[];
  peerPodRuntimeClasses: string[];
  nodes: k8s.V1Node[];
  pods: k8s.V1Pod[];
  services: k8s.V1Service[];
  endpoints: k8s.V1Endpoints[];
  translations: TranslationObject[];
  peerPods: PeerPodObject[];
  emulator: StateDump;
  /** VMs with this run's marker; undefined when peer pods are not part of the run. */
  vms?: MarkedInstance[];
  /** Ids of the running workflows. */
  runningWorkflows: string[];
}

export type Invariant = 'midonet' | 'peer-pods' | 'finalizers' | 'workflows' | 'status';
export interface Violation {
  invariant: Invariant;
  /** The Kubernetes object it is about (`Pod default/p-3`), or the backend resource when no object owns it. */
  object: string;
  detail: string;
}

const live = <T extends { metadata?: k8s.V1ObjectMeta }>(items: T[]) =>
  items.filter((o) => !o.metadata?.deletionTimestamp);
const nameOf = (kind: string, meta?: k8s.V1ObjectMeta) =>
  meta?.namespace ? `${kind} ${meta.namespace}/${meta.name}` : `${kind} ${meta?.name}`;
/** The keys (in the form of `emulatorKeys`) of what `translations` put into MidoNet. */
export const translationKeys = (translations: Translation[]) =>
  Object.entries(expectedIds(translations, [])).flatMap(([kind, ids]) =>
    kind === 'Host' ? [] : ids.map((id) => `${kind} ${id}`),
  );
/** A Translation object as read back, in the translation functions' shape: only its name and resources count here. */
const asTranslation = (t: TranslationObject): Translation => ({
  name: t.metadata.name,
  namespace: t.metadata.namespace,
  labels: {},
  ownerReferences: [],
  finalizers: [],
  resources: t.resources ?? [],
});
/** The keys of what a Translation object lists. */
export const listedKeys = (t: TranslationObject) => translationKeys([asTranslation(t)]);
/** The object a Translation is about: its owner (a Pod's Translation is about the Pod), or itself when it has none. */
export function subjectOf(t: TranslationObject): string {
  const owner = t.metadata.ownerReferences?.[0];
  if (!owner) return nameOf('Translation', t.metadata);
  return owner.kind === 'Node' ? `Node ${owner.name}` : `${owner.kind} ${t.metadata.namespace}/${owner.name}`;
}
const readyOf = (t: TranslationObject) => t.status?.conditions?.find((c) => c.type === 'Ready');
const isPeerPod = (s: Snapshot, pod: k8s.V1Pod) =>
  !!pod.spec?.runtimeClassName && s.peerPodRuntimeClasses.includes(pod.spec.runtimeClassName);

/** The Translations of the live objects (the real translation functions) and the live hand-written ones, by owner. */
export function expectedTranslations(s: Snapshot): { owner: string; translations: Translation[] }[] {
  const project = <T>(kind: string, object: object): T | undefined => {
    const result = toProjection({ ...object, kind });
    return result.ok ? (result.projection as T) : undefined;
  };
  const nodes = new Map(live(s.nodes).map((n) => [n.metadata!.name!, project<NodeProjection>('Node', n)]));
  const services = new Map(
    live(s.services).map((v) => [
      `${v.metadata!.namespace}/${v.metadata!.name}`,
      project<ServiceProjection>('Service', v),
    ]),
  );
  const out: { owner: string; translations: Translation[] }[] = [];
  const globals = translateGlobals({ tenant: s.tenant });
  if (globals.ok) out.push({ owner: 'global', translations: globals.translations });
  const add = (
    kind: 'Node' | 'Pod' | 'Service' | 'Endpoints',
    object: { metadata?: k8s.V1ObjectMeta },
    context: object,
  ) => {
    const projection = toProjection({ ...object, kind });
    if (!projection.ok) return;
    const result = translate(projection.projection, { tenant: s.tenant, ...context });
    if (result.ok) out.push({ owner: nameOf(kind, object.metadata), translations: result.translations });
  };
  for (const n of live(s.nodes)) add('Node', n, {});
  for (const p of live(s.pods)) add('Pod', p, { node: nodes.get(p.spec?.nodeName ?? '') ?? null });
  for (const v of live(s.services)) add('Service', v, {});
  for (const e of live(s.endpoints))
    add('Endpoints', e, { service: services.get(`${e.metadata!.namespace}/${e.metadata!.name}`) ?? null });
  for (const t of live(s.translations).filter((t) => t.metadata.labels?.[HAND_WRITTEN_LABEL] !== undefined)) {
    out.push({ owner: nameOf('Translation', t.metadata), translations: [asTranslation(t)] });
  }
  return out;
}

/** The emulator's entries as `<Kind> <id or key>`, one per entry (duplicates kept); the seeded hosts left out. */
export const emulatorKeys = (dump: StateDump) =>
  Object.entries(idsOfDump(dump)).flatMap(([kind, ids]) => (kind === 'Host' ? [] : ids.map((id) => `${kind} ${id}`)));

/**
 * MidoNet holds exactly the translation of the live objects: nothing missing, nothing orphaned, no duplicates.
 * `attribution` names the object an orphaned key came from (the translations of every object the run wrote).
 */
export function checkMidonet(s: Snapshot, attribution: ReadonlyMap<string, string> = new Map()): Violation[] {
  const owners = new Map<string, string[]>();
  for (const { owner, translations } of expectedTranslations(s))
    for (const key of translationKeys(translations)) owners.set(key, [...(owners.get(key) ?? []), owner]);
  // The deployer's cluster router is in the global Translation too; nothing else is outside the Translations.
  const counts = new Map<string, number>();
  for (const key of emulatorKeys(s.emulator)) counts.set(key, (counts.get(key) ?? 0) + 1);
  const out: Violation[] = [];
  const blocked = blockedTranslations(s, new Set([...counts.keys()].map((key) => key.slice(key.indexOf(' ') + 1))));
  for (const [key, who] of owners) {
    if (counts.has(key)) continue;
    const by = blocked.get(key);
    // A Translation whose parent no live object makes (Endpoints naming a port its Service lacks: MK writes it too)
    // cannot be pushed; what it lists is rightly missing, provided the Translation says why.
    if (by && by.reason === 'MidonetDependencyMissing') continue;
    const why = by
      ? ` (its Translation ${by.name} needs ${by.parent}, which no live object makes, yet says ${by.reason ?? 'nothing'})`
      : '';
    out.push({ invariant: 'midonet', object: who[0]!, detail: `missing from MidoNet: ${key}${why}` });
  }
  // Who still lists an orphaned key tells a stale Translation (its owner's workflow did not delete it) from a leak
  // (the Translation is gone, its pusher did not delete what it pushed).
  const listedBy = new Map<string, string[]>();
  for (const t of s.translations) {
    for (const key of listedKeys(t))
      listedBy.set(key, [
        ...(listedBy.get(key) ?? []),
        `${t.metadata.namespace}/${t.metadata.name}${t.metadata.deletionTimestamp ? ' (deleting)' : ''}`,
      ]);
  }
  const orphan = (key: string) =>
    `orphaned in MidoNet: ${key}${listedBy.has(key) ? `, still listed by Translation ${listedBy.get(key)!.join(', ')}` : ', listed by no Translation'}`;
  for (const [key, n] of counts) {
    if (!owners.has(key)) out.push({ invariant: 'midonet', object: attribution.get(key) ?? key, detail: orphan(key) });
    else if (n > 1)
      out.push({ invariant: 'midonet', object: owners.get(key)![0]!, detail: `${n} copies in MidoNet: ${key}` });
  }
  return out;
}

/**
 * The keys of the expected Translations that cannot be pushed because one of their resources hangs off an ID that
 * no expected resource has and MidoNet does not hold, with what that Translation's Ready condition says.
 */
function blockedTranslations(
  s: Snapshot,
  presentIds: ReadonlySet<string>,
): Map<string, { name: string; parent: string; reason?: string }> {
  const expected = expectedTranslations(s).flatMap(({ translations }) => translations);
  const made = new Set(
    expected.flatMap((t) => t.resources.flatMap((r) => (JSON.parse(r.body) as { id?: string }).id ?? [])),
  );
  const byName = new Map(live(s.translations).map((t) => [`${t.metadata.namespace}/${t.metadata.name}`, t]));
  const out = new Map<string, { name: string; parent: string; reason?: string }>();
  for (const t of expected) {
    const parent = t.resources.find((r) => r.parent && !made.has(r.parent) && !presentIds.has(r.parent))?.parent;
    if (!parent) continue;
    const name = `${t.namespace}/${t.name}`;
    const reason = readyOf(byName.get(name) ?? { metadata: { name: t.name, namespace: t.namespace } })?.reason;
    for (const key of translationKeys([t])) out.set(key, { name, parent, ...(reason ? { reason } : {}) });
  }
  return out;
}

/** Every live peer pod has exactly one VM; every VM with Steward's marker belongs to a live peer pod. */
export function checkPeerPods(s: Snapshot): Violation[] {
  if (!s.vms) return [];
  const vms = s.vms;
  const out: Violation[] = [];
  const peers = live(s.pods).filter((p) => isPeerPod(s, p));
  for (const pod of peers) {
    const mine = vms.filter((vm) => vm.podUid === pod.metadata?.uid);
    if (mine.length !== 1)
      out.push({
        invariant: 'peer-pods',
        object: nameOf('Pod', pod.metadata),
        detail: `${mine.length} VMs (${mine.map((v) => v.name ?? v.instanceId).join(', ') || 'none'}), expected 1`,
      });
  }
  const uids = new Set(peers.map((p) => p.metadata?.uid));
  for (const vm of vms.filter((v) => !uids.has(v.podUid))) {
    const object = vm.podName ? `Pod ${vm.podNamespace ?? '?'}/${vm.podName}` : `VM ${vm.instanceId}`;
    out.push({
      invariant: 'peer-pods',
      object,
      detail: `VM ${vm.name ?? vm.instanceId} of pod UID ${vm.podUid} has no live Pod`,
    });
  }
  return out;
}

/** Whose it is (a PeerPod: which incarnation of its Pod), and which incarnation it is: what tells a leftover. */
const ownersOf = (meta: k8s.V1ObjectMeta) =>
  `; uid ${meta.uid ?? '?'}${(meta.ownerReferences ?? []).map((r) => `, owner ${r.kind} ${r.name} ${r.uid}`).join('')}`;

/** Nothing is left finalizing: a deleted object whose finalizers were never released is stuck for ever. */
export function checkFinalizers(s: Snapshot): Violation[] {
  const all: [string, { metadata?: k8s.V1ObjectMeta }[]][] = [
    ['Node', s.nodes],
    ['Pod', s.pods],
    ['Service', s.services],
    ['Endpoints', s.endpoints],
    ['Translation', s.translations],
    ['PeerPod', s.peerPods],
  ];
  return all.flatMap(([kind, items]) =>
    items
      .filter((o) => o.metadata?.deletionTimestamp)
      .map((o) => ({
        invariant: 'finalizers' as const,
        object: nameOf(kind, o.metadata),
        detail: `deleted at ${new Date(o.metadata!.deletionTimestamp!).toISOString()}, still held by ${(o.metadata!.finalizers ?? []).join(', ') || 'no finalizer'}${ownersOf(o.metadata!)}`,
      })),
  );
}

/** Every workflow of a deleted object closed, and (level-triggered) every live object has its running workflow. */
export function checkWorkflows(s: Snapshot): Violation[] {
  const expected = new Map<string, ObjectRef>();
  const refOf = (kind: ObjectRef['kind'], meta?: k8s.V1ObjectMeta): ObjectRef => ({
    kind,
    ...(meta?.namespace ? { namespace: meta.namespace } : {}),
    name: meta?.name ?? '',
  });
  const expect = (ref: ObjectRef) => expected.set(workflowId(ref), ref);
  for (const n of live(s.nodes)) expect(refOf('Node', n.metadata));
  for (const p of live(s.pods)) {
    expect(refOf('Pod', p.metadata));
    if (isPeerPod(s, p)) expect(refOf('PeerPod', p.metadata));
  }
  for (const v of live(s.services)) expect(refOf('Service', v.metadata));
  for (const e of live(s.endpoints)) expect(refOf('Endpoints', e.metadata));
  // A Translation an object owns is pushed by that object's workflow: only the others have one of their own.
  for (const t of live(s.translations)) if (!translationOwner(t.metadata)) expect(refOf('Translation', t.metadata));
  for (const p of live(s.peerPods)) expect(refOf('PeerPod', p.metadata));
  // A finalizing object's workflow may (must) still run; checkFinalizers reports the object.
  const finalizing = new Set(
    [
      ...s.nodes.filter((o) => o.metadata?.deletionTimestamp).map((o) => refOf('Node', o.metadata)),
      ...s.pods
        .filter((o) => o.metadata?.deletionTimestamp)
        .flatMap((o) => [refOf('Pod', o.metadata), refOf('PeerPod', o.metadata)]),
      ...s.services.filter((o) => o.metadata?.deletionTimestamp).map((o) => refOf('Service', o.metadata)),
      ...s.endpoints.filter((o) => o.metadata?.deletionTimestamp).map((o) => refOf('Endpoints', o.metadata)),
      ...s.translations.filter((o) => o.metadata.deletionTimestamp).map((o) => refOf('Translation', o.metadata)),
      ...s.peerPods.filter((o) => o.metadata.deletionTimestamp).map((o) => refOf('PeerPod', o.metadata)),
    ].map((ref) => workflowId(ref)),
  );
  const running = new Set(s.runningWorkflows);
  const out: Violation[] = [];
  for (const id of running) {
    if (id.startsWith('global/') || id.startsWith('gc/') || expected.has(id) || finalizing.has(id)) continue;
    out.push({
      invariant: 'workflows',
      object: objectOfWorkflow(id),
      detail: `workflow ${id} still running, its object is gone`,
    });
  }
  for (const [id, ref] of expected)
    if (!running.has(id))
      out.push({
        invariant: 'workflows',
        object: describeRef(ref),
        detail: `live object without a running workflow ${id}`,
      });
  return out;
}

/** `pod/default/p-3` → `Pod default/p-3` (the object names of the other checks). */
export function objectOfWorkflow(id: string): string {
  const [kind = '', ...rest] = id.split('/');
  const kinds: Record<string, string> = {
    node: 'Node',
    pod: 'Pod',
    service: 'Service',
    endpoints: 'Endpoints',
    translation: 'Translation',
    peerpod: 'Pod',
  };
  return `${kinds[kind] ?? kind} ${rest.join('/')}`;
}

/**
 * Every Translation's status matches MidoNet: Ready=True only when everything it lists is there and the status is
 * about the current generation; every child resource recorded as synced is there; when Ready, the record lists
 * everything (never behind the backend); no resource is recorded as synced by two Translations (one owner).
 */
export function checkStatus(s: Snapshot): Violation[] {
  const present = new Set(emulatorKeys(s.emulator));
  const out: Violation[] = [];
  const recordedBy = new Map<string, string[]>();
  for (const t of live(s.translations)) {
    // Named after the object it is about, the Translation in the detail.
    const translation = nameOf('Translation', t.metadata);
    const object = subjectOf(t);
    const about = t.metadata.ownerReferences?.[0] ? `${translation}: ` : '';
    const wanted = listedKeys(t);
    const ready = readyOf(t);
    const synced = (t.status?.childResources ?? []).filter((c) => c.state === 'synced');
    const recorded = new Set(synced.map(childKey));
    for (const key of recorded) recordedBy.set(key, [...(recordedBy.get(key) ?? []), translation]);
    if (ready?.status === 'True') {
      const missing = wanted.filter((k) => !present.has(k));
      if (missing.length)
        out.push({
          invariant: 'status',
          object,
          detail: `${about}Ready=True but MidoNet lacks ${missing.length} of its ${wanted.length} resources: ${missing.slice(0, 3).join('; ')}`,
        });
      const generation = t.metadata.generation ?? 0;
      const observed = ready.observedGeneration ?? t.status?.observedGeneration ?? 0;
      if (observed < generation)
        out.push({
          invariant: 'status',
          object,
          detail: `${about}Ready=True is about generation ${observed}, the spec is at ${generation}`,
        });
      const unrecorded = wanted.filter((k) => !recorded.has(k));
      if (unrecorded.length)
        out.push({
          invariant: 'status',
          object,
          detail: `${about}Ready=True but status.childResources does not record ${unrecorded.length} of its resources: ${unrecorded.slice(0, 3).join('; ')}`,
        });
    } else if (wanted.length > 0 && wanted.every((k) => present.has(k)) && ready?.reason !== 'ResourceClaimed') {
      out.push({
        invariant: 'status',
        object,
        detail: `${about}Ready=${ready?.status ?? 'absent'} (${ready?.reason ?? 'no reason'}: ${ready?.message ?? ''}) though MidoNet holds all ${wanted.length} of its resources`,
      });
    }
    const gone = [...recorded].filter((k) => !present.has(k));
    if (gone.length)
      out.push({
        invariant: 'status',
        object,
        detail: `${about}status.childResources says synced for ${gone.length} resources MidoNet lacks: ${gone.slice(0, 3).join('; ')}`,
      });
  }
  for (const [key, who] of recordedBy)
    if (who.length > 1)
      out.push({
        invariant: 'status',
        object: who[0]!,
        detail: `${key} recorded as synced by ${who.length} Translations: ${who.join(', ')}`,
      });
  return out;
}

/** A child resource's key in the form of `emulatorKeys`: its ID, or for kinds without one the body it was pushed with. */
export function childKey(child: { kind: string; id: string }): string {
  const slash = child.id.indexOf('/');
  if (slash < 0) return `${child.kind} ${child.id}`;
  const resource = {
    kind: child.kind as Translation['resources'][number]['kind'],
    parent: child.id.slice(0, slash),
    body: child.id.slice(slash + 1),
  };
  try {
    return (
      translationKeys([
        { name: '', namespace: '', labels: {}, ownerReferences: [], finalizers: [], resources: [resource] },
      ])[0] ?? `${child.kind} ${child.id}`
    );
  } catch {
    return `${child.kind} ${child.id}`;
  }
}

export function checkAll(s: Snapshot, attribution?: ReadonlyMap<string, string>): Violation[] {
  return [
    ...checkMidonet(s, attribution),
    ...checkPeerPods(s),
    ...checkFinalizers(s),
    ...checkWorkflows(s),
    ...checkStatus(s),
  ];
}
