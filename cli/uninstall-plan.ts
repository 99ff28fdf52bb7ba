import { LEGACY_REFERRERS, TEMPORAL_UI_ANNOTATION } from '../model/vocabulary';
import { POLLER_WINDOW_MS, type Poller } from './pollers';

/**
 * `steward uninstall`'s decisions, pure: what Steward added to each object (plan), whether Steward still runs
 * (refusals), and what the command prints (report). cli/uninstall.ts reads the cluster and Temporal, and acts.
 */

/** The kinds whose objects Steward writes on. */
export const UNINSTALL_KINDS = ['Node', 'Service', 'Endpoints', 'Pod', 'Translation', 'PeerPod'] as const;
export type UninstallKind = (typeof UNINSTALL_KINDS)[number];

/** An object as listed: only what the plan reads, and the resourceVersion its patch is made against. */
export interface ListedObject {
  kind: UninstallKind;
  namespace?: string;
  name: string;
  resourceVersion?: string;
  annotations: Record<string, string>;
  finalizers: string[];
}

/** What uninstall removes from one object. */
export interface Change {
  kind: UninstallKind;
  namespace?: string;
  name: string;
  resourceVersion?: string;
  annotations: string[];
  finalizers: string[];
  /** The finalizers the object keeps (what a merge patch writes). */
  keptFinalizers: string[];
}

/** Everything Steward writes under its own name, and the name it wrote under before (`steward.midonet.org/`). */
const STEWARD_PREFIXES = ['steward.dev/', `${LEGACY_REFERRERS.split('/')[0]!}/`];
const isStewards = (key: string) => STEWARD_PREFIXES.some((prefix) => key.startsWith(prefix));

/**
 * Records Steward writes in their upstream controller's own shape: a Translation as midonet-kubernetes writes it, a
 * PeerPod as cloud-api-adaptor does. They stay for that controller (finalizer, labels, owner references, status with
 * what was pushed, the PeerPod's `steward.dev/cloud`, which a later Steward reads again to never call a VM of another
 * cloud gone); only the link into Steward's Temporal UI goes, as nothing will answer there.
 */
const RECORD_KINDS: readonly UninstallKind[] = ['Translation', 'PeerPod'];

/**
 * What to remove from one object: on the objects Steward does not own (Nodes, Services, Endpoints, Pods), every
 * annotation and finalizer under Steward's prefixes (the referrers annotation and finalizer, a peer pod's VM
 * annotations); on its records, only the Temporal UI link. Undefined when there is nothing.
 */
export function planObject(object: ListedObject): Change | undefined {
  const record = RECORD_KINDS.includes(object.kind);
  const annotations = Object.keys(object.annotations)
    .filter((key) => (record ? key === TEMPORAL_UI_ANNOTATION : isStewards(key)))
    .sort();
  const finalizers = record ? [] : object.finalizers.filter(isStewards);
  if (annotations.length === 0 && finalizers.length === 0) return undefined;
  const { kind, namespace, name, resourceVersion } = object;
  return {
    kind,
    ...(namespace ? { namespace } : {}),
    name,
    ...(resourceVersion ? { resourceVersion } : {}),
    annotations,
    finalizers,
    keptFinalizers: object.finalizers.filter((f) => !finalizers.includes(f)),
  };
}

export const planUninstall = (objects: ListedObject[]): Change[] =>
  objects.flatMap((object) => planObject(object) ?? []);

/** The merge patch of a change: removed annotations set to null, the kept finalizers, against the version read. */
export const changePatch = (change: Change) => ({
  metadata: {
    ...(change.resourceVersion ? { resourceVersion: change.resourceVersion } : {}),
    ...(change.annotations.length ? { annotations: Object.fromEntries(change.annotations.map((a) => [a, null])) } : {}),
    ...(change.finalizers.length ? { finalizers: change.keptFinalizers } : {}),
  },
});

/** The starter's leader-election Lease, if there is one. */
export interface LeaseView {
  namespace: string;
  name: string;
  holder?: string;
  renewMs?: number;
  durationSeconds?: number;
}

/** What was seen of Steward's processes. `pollers` absent: Temporal was not asked (`--without-temporal`). */
export interface Liveness {
  pollers?: Poller[];
  lease: LeaseView;
}

const ago = (then: number, now: number) => `${Math.max(0, Math.round((now - then) / 1000))} s ago`;

/** Whether the Lease is held: a holder, renewed within its duration. */
export const leaseHeld = ({ holder, renewMs, durationSeconds }: LeaseView, now: number) =>
  Boolean(holder) && renewMs !== undefined && now - renewMs < (durationSeconds ?? 15) * 1000;

/** Why uninstall must not run now: each worker still polling and a starter holding the Lease. Empty: go ahead. */
export function refusals({ pollers, lease }: Liveness, now: number): string[] {
  const polling = (pollers ?? [])
    .filter((p) => now - p.lastAccessMs < POLLER_WINDOW_MS)
    .map((p) => `worker ${p.identity} polled task queue ${p.taskQueue} (${p.type}) ${ago(p.lastAccessMs, now)}`);
  const starter = leaseHeld(lease, now)
    ? [`starter ${lease.holder} holds Lease ${lease.namespace}/${lease.name} (renewed ${ago(lease.renewMs!, now)})`]
    : [];
  return [...polling, ...starter];
}

/** What the refusal tells the operator to do (never `kubectl delete -k deploy/manifests`: that deletes the CRDs). */
export const HOW_TO_STOP = [
  "Stop Steward's workers and starter first: `kubectl -n <namespace> scale deploy steward-worker steward-starter --replicas=0`",
  "(or `helm uninstall`, which keeps the CRDs), then run this again: a stopped worker leaves Temporal's pollers within",
  `${POLLER_WINDOW_MS / 1000} s, and a stopped starter releases its Lease.`,
].join('\n');

/** What uninstall did or would do, for the report (text or -o json|yaml). */
export interface UninstallReport {
  dryRun: boolean;
  /** What was checked to know that Steward does not run, in words. */
  checked: string[];
  /** Present in a dry run when the real run would refuse now. */
  wouldRefuse?: string[];
  changes: Change[];
  /** The starter's Lease, Steward's own object, deleted once nobody holds it; absent when there is none. */
  lease?: string;
  /** Records left for their upstream controller: how many. */
  kept: { translations: number; peerPods: number };
}

const nameOf = (c: { namespace?: string; name: string }) => (c.namespace ? `${c.namespace}/${c.name}` : c.name);

export function formatUninstall(
  report: UninstallReport,
  table: (header: string[], rows: string[][]) => string,
): string {
  const verb = report.dryRun ? 'would remove' : 'removed';
  const lines = [
    ...report.checked.map((line) => `checked: ${line}`),
    ...(report.wouldRefuse?.length
      ? ['steward uninstall would refuse now, Steward still runs:', ...report.wouldRefuse.map((r) => `  ${r}`)]
      : []),
    `${verb} what Steward added to ${report.changes.length} objects${report.dryRun ? ' (dry run: nothing changed)' : ''}`,
  ];
  if (report.changes.length)
    lines.push(
      table(
        ['KIND', 'NAME', 'ANNOTATIONS', 'FINALIZERS'],
        report.changes.map((c) => [c.kind, nameOf(c), c.annotations.join(',') || '-', c.finalizers.join(',') || '-']),
      ),
    );
  if (report.lease) lines.push(`${report.dryRun ? 'would delete' : 'deleted'} the starter's Lease ${report.lease}`);
  lines.push(
    `left for midonet-kubernetes: ${report.kept.translations} Translations (names, labels, owner references, finalizer midonet.org/deleter, status)`,
    `left for cloud-api-adaptor and peerpod-ctrl: ${report.kept.peerPods} PeerPods (finalizer peer.pod/finalizer)`,
  );
  return `${lines.join('\n')}\n`;
}
