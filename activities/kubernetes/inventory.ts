// What the sweeper asks Kubernetes: which of the backend's resources no record holds. The records are read here and
// only the unrecorded ids go back to the workflow, so its history grows with the orphans, not with the cluster.
import { z } from 'zod';
import { toFailure } from './errors';
import type { LifecycleKind } from '../../model/naming';
import { upstreamVmPodPart, vmNamePodPart } from '../../model/vm-naming';
import { collectionPath, type Objects } from './objects';

/**
 * A VM as the sweeper checks it: its id and the pod UID it is tagged with (Steward's), or its name (cloud-api-
 * adaptor's, which carry no pod UID).
 */
export type VmToCheck = { instanceId: string; podUid: string } | { instanceId: string; name: string };

/** What records VMs: the PeerPods (by instance id, and by the Pod that owns them) and the live Pods. */
export interface VmRecords {
  peerPods: { instanceId?: string; ownerUids: string[]; ownerNames: string[] }[];
  pods: Iterable<{ uid: string; name: string }>;
}

/**
 * The VMs nothing records. A VM is recorded when a PeerPod has its instance id or is owned by its pod, or when its
 * pod is alive (the VM is being created and its PeerPod is not written yet). Any PeerPod counts, whatever its
 * `cloudProvider`: a sweeper that keeps too much is safe, one that deletes too much is not.
 *
 * cloud-api-adaptor's VMs name their pod only by name (`podvm-<pod>-<sandbox>`): one is recorded, beyond its instance
 * id, while a Pod or a PeerPod's pod of that name exists. cloud-api-adaptor logs and goes on when it cannot write the
 * PeerPod (pkg/adaptor/cloud/cloud.go, OwnPeerPod), so a running pod's VM may have none; and a PeerPod recorded
 * before v0.20.0 holds a numeric domain ID, not the UUID. A VM leaked by a retried sandbox is found once its pod is gone.
 */
export function unrecordedVms(vms: VmToCheck[], records: VmRecords): string[] {
  const instanceIds = new Set(records.peerPods.flatMap((p) => (p.instanceId ? [p.instanceId] : [])));
  const pods = [...records.pods];
  const podUids = new Set([...pods.map((p) => p.uid), ...records.peerPods.flatMap((p) => p.ownerUids)]);
  const podParts = new Set(
    [...pods.map((p) => p.name), ...records.peerPods.flatMap((p) => p.ownerNames)].map(vmNamePodPart),
  );
  const recorded = (vm: VmToCheck) =>
    instanceIds.has(vm.instanceId) ||
    ('podUid' in vm ? podUids.has(vm.podUid) : podParts.has(upstreamVmPodPart(vm.name)));
  return vms.filter((vm) => !recorded(vm)).map((vm) => vm.instanceId);
}

const translationResources = z.looseObject({ resources: z.array(z.looseObject({ body: z.string() })).nullish() });
const bodyId = z.looseObject({ id: z.string() });

/**
 * Every MidoNet id the Translations list (a resource body's `id`). An entry whose body does not parse adds nothing:
 * the pusher cannot push it either, so no MidoNet object exists because of it.
 */
export function recordedMidonetIds(translations: unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const translation of translations) {
    for (const { body } of translationResources.safeParse(translation).data?.resources ?? []) {
      try {
        const parsed = bodyId.safeParse(JSON.parse(body));
        if (parsed.success) ids.add(parsed.data.id);
      } catch {
        // not JSON: see above
      }
    }
  }
  return ids;
}

const PAGE = 500;

/** Every item of a paged list call; `page` maps a continue token to the items and the next token. */
async function listAll<T>(
  what: string,
  page: (token?: string) => Promise<{ items: T[]; next?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  try {
    do {
      const reply = await page(token);
      items.push(...reply.items);
      token = reply.next || undefined;
    } while (token);
  } catch (error) {
    throw toFailure(error, `list ${what}`);
  }
  return items;
}

const peerPod = z.looseObject({
  metadata: z.looseObject({
    ownerReferences: z.array(z.looseObject({ uid: z.string(), name: z.string().nullish() })).nullish(),
  }),
  spec: z.looseObject({ instanceID: z.string().nullish() }).nullish(),
});
type KindList = { items: unknown[]; metadata?: { continue?: string } };

export function createInventoryActivities({ rest }: Objects) {
  /** Every object of `kind` in all namespaces, page by page. */
  const listKind = (kind: LifecycleKind, what: string) =>
    listAll(what, async (token) => {
      const list = await rest<KindList>({
        method: 'GET',
        path: collectionPath(kind),
        query: { limit: String(PAGE), continue: token },
      });
      return { items: list.items, next: list.metadata?.continue };
    });

  async function findUnrecordedVms({
    vms,
  }: {
    vms: VmToCheck[];
  }): Promise<{ unrecorded: string[]; peerPods: number; pods: number }> {
    const [peerPods, pods] = await Promise.all([
      listKind('PeerPod', 'PeerPods in all namespaces (is the PeerPod CRD installed?)').then((items) =>
        items.map((item) => {
          const parsed = peerPod.parse(item);
          const owners = parsed.metadata.ownerReferences ?? [];
          return {
            instanceId: parsed.spec?.instanceID ?? undefined,
            ownerUids: owners.map((o) => o.uid),
            ownerNames: owners.flatMap((o) => (o.name ? [o.name] : [])),
          };
        }),
      ),
      listKind('Pod', 'Pods in all namespaces').then((items) =>
        (items as { metadata?: { uid?: string; name?: string } }[]).map((pod) => ({
          uid: pod.metadata?.uid ?? '',
          name: pod.metadata?.name ?? '',
        })),
      ),
    ]);
    return { unrecorded: unrecordedVms(vms, { peerPods, pods }), peerPods: peerPods.length, pods: pods.length };
  }

  async function findUnrecordedMidonetIds({
    ids,
  }: {
    ids: string[];
  }): Promise<{ unrecorded: string[]; translations: number }> {
    const translations = await listKind('Translation', 'Translations in all namespaces');
    const recorded = recordedMidonetIds(translations);
    return { unrecorded: ids.filter((id) => !recorded.has(id)), translations: translations.length };
  }

  return { findUnrecordedVms, findUnrecordedMidonetIds };
}
