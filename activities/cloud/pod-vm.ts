// A peer pod's VM made and recorded in one activity: the Kubernetes checks before and the record after the cloud
// create run beside it, not as local activities in the workflow tasks around it (ref/performance.md 5b: fewer
// workflow tasks, each shorter, and the PeerPod written as soon as the VM runs).
import { heartbeating, type CloudActivities } from './activities';
import type { CreateInstanceInput, VmReplacement } from './provider';
import type { KubernetesActivities } from '../kubernetes';

export interface PodVmDeps {
  cloud: Pick<CloudActivities, 'cloudCreateVm'>;
  kubernetes: Pick<KubernetesActivities, 'findForeignPeerPods' | 'recordPeerPod'>;
  /** Heartbeat period around the Kubernetes calls (the cloud create heartbeats on its own). */
  heartbeatMs?: number;
}

export type PodVmResult =
  | { outcome: 'madeElsewhere'; peerPod: string }
  | {
      outcome: 'created';
      vm: { provider: string; instanceId: string; cloud: string };
      peerPod: { name: string; uid: string; deleting?: true };
    };

export function createPodVmActivities({ cloud, kubernetes, heartbeatMs = 5_000 }: PodVmDeps) {
  return {
    /**
     * The create guard's steps in order, each idempotent, so a retry after any of them repeats none: a PeerPod someone
     * else (cloud-api-adaptor) wrote means the VM is theirs and none is made; the create finds the VM an earlier
     * attempt made by name and pod UID; the PeerPod is written by server-side apply.
     */
    cloudCreateAndRecordPodVm: async ({
      replaces,
      ...input
    }: CreateInstanceInput & { replaces?: VmReplacement }): Promise<PodVmResult> => {
      const [foreign] = await heartbeating(heartbeatMs, () =>
        kubernetes.findForeignPeerPods({ namespace: input.podNamespace, podUid: input.podUid }),
      );
      if (foreign) return { outcome: 'madeElsewhere', peerPod: foreign.name };
      const vm = await cloud.cloudCreateVm(input);
      const recorded = await heartbeating(heartbeatMs, () =>
        kubernetes.recordPeerPod({
          namespace: input.podNamespace,
          podName: input.podName,
          podUid: input.podUid,
          vm,
          vmName: input.name,
          ...(replaces ? { replaces } : {}),
        }),
      );
      const { name, uid, deleting } = recorded;
      return { outcome: 'created', vm, peerPod: { name, uid, ...(deleting ? { deleting } : {}) } };
    },
  };
}

export type PodVmActivities = ReturnType<typeof createPodVmActivities>;
