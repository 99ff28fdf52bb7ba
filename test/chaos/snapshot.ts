// Reads one snapshot of the whole system for the invariant checks.
import { PEERPOD_API, TRANSLATION_API } from '../../model/naming';
import type { PeerPodObject, Snapshot, TranslationObject } from './invariants';
import { HOSTS, PEER_POD_RUNTIME_CLASS } from './ops';
import type { ChaosStack } from './stack';

/** The chaos run's stack, or any stack reached the same way (the failover tests' own). */
export type SnapshotSource = Pick<ChaosStack, 'tenant' | 'core' | 'custom' | 'admin' | 'client' | 'cloud'>;

export async function takeSnapshot(s: SnapshotSource): Promise<Snapshot> {
  const [nodes, pods, services, endpoints, translations, peerPods, emulator, vms, runningWorkflows] = await Promise.all(
    [
      s.core.listNode(),
      s.core.listPodForAllNamespaces(),
      s.core.listServiceForAllNamespaces(),
      s.core.listEndpointsForAllNamespaces(),
      s.custom.listClusterCustomObject({ ...TRANSLATION_API }) as Promise<{ items: TranslationObject[] }>,
      s.custom.listClusterCustomObject({ ...PEERPOD_API }) as Promise<{ items: PeerPodObject[] }>,
      s.admin.dump(),
      s.cloud?.list(),
      (async () => {
        const ids: string[] = [];
        for await (const wf of s.client.workflow.list({ query: 'ExecutionStatus="Running"' })) ids.push(wf.workflowId);
        return ids;
      })(),
    ],
  );
  return {
    tenant: s.tenant,
    hosts: HOSTS,
    peerPodRuntimeClasses: [PEER_POD_RUNTIME_CLASS],
    nodes: nodes.items,
    pods: pods.items,
    services: services.items,
    endpoints: endpoints.items,
    translations: translations.items,
    peerPods: peerPods.items,
    emulator,
    ...(vms ? { vms } : {}),
    runningWorkflows,
  };
}
