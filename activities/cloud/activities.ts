// Cloud activities: thin, plain-JSON wrappers over one provider, one typed input object each (STYLE habit 3).
// Calls that can take seconds (create, delete, a list over many VMs) heartbeat while they run, so a worker that
// dies mid-call is noticed after the heartbeat timeout rather than the whole start-to-close timeout.
import { Context } from '@temporalio/activity';
import { cloudFailure } from './errors';
import type {
  CloudProvider,
  CreateInstanceInput,
  InstanceObservation,
  MarkedInstance,
  UpstreamInstance,
} from './provider';

export interface CloudActivityDeps {
  provider: CloudProvider;
  /** Heartbeat period while a long call runs. */
  heartbeatMs?: number;
}

export interface InstanceInput {
  instanceId: string;
}

/**
 * A VM as a PeerPod records it. `provider` is the PeerPod's `spec.cloudProvider`: a worker configured for another
 * cloud refuses it (non-retryable, so the lifecycle shows it) instead of asking the wrong cloud for an unknown id.
 */
export interface RecordedVmInput {
  provider: string;
  instanceId: string;
  /** The cloud it was recorded in (Steward's own records); absent for cloud-api-adaptor's. */
  cloud?: string;
  /** The pod it runs (a pre-v0.20 numeric libvirt ID is checked against its name). */
  podName?: string;
}

export interface DeletePodVmsInput {
  vm?: RecordedVmInput;
  /** Also deletes every VM tagged with this pod UID: one whose create reply was lost is known by its tag only. */
  podUid?: string;
}

function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    // Called outside an activity (tests, the CLI): nobody to heartbeat to.
    return undefined;
  }
}

export async function heartbeating<T>(periodMs: number, call: () => Promise<T>): Promise<T> {
  const ctx = activityContext();
  // A local activity has no heartbeat: its workflow task is its lease.
  if (!ctx || ctx.info.isLocal) return call();
  ctx.heartbeat();
  const timer = setInterval(() => ctx.heartbeat(), periodMs);
  try {
    return await call();
  } finally {
    clearInterval(timer);
  }
}

export function createCloudActivities({ provider, heartbeatMs = 5_000 }: CloudActivityDeps) {
  const long = <T>(call: () => Promise<T>) => heartbeating(heartbeatMs, call);
  const checkProvider = (name: string, operation: string) => {
    if (name !== provider.name) {
      throw cloudFailure(
        'CloudProviderNotConfigured',
        `the VM is in cloud "${name}" but this worker is configured for "${provider.name}" (STEWARD_CLOUD_PROVIDER or CLOUD_PROVIDER)`,
        {
          provider: name,
          operation,
        },
      );
    }
  };
  /**
   * The ID to ask the cloud about for a recorded VM, once it is sure a "not found" will mean gone: a VM recorded in
   * another cloud than the one this worker sees (a wrong AWS_REGION or LIBVIRT_URI) is refused (`CloudMismatch`), so
   * no PeerPod is released while its VM runs elsewhere. A record without a cloud (cloud-api-adaptor's) is accepted
   * when the worker sees a cloud at all (identity() fails when it cannot reach it).
   */
  async function locate(vm: RecordedVmInput, operation: string): Promise<string> {
    checkProvider(vm.provider, operation);
    const here = await provider.identity();
    if (vm.cloud && vm.cloud !== here) {
      throw cloudFailure(
        'CloudMismatch',
        `VM ${vm.instanceId} was made in ${vm.cloud}, but this worker sees ${here}: not asked about there, and nothing released; fix the worker's cloud settings (region, account, LIBVIRT_URI), or give the VM up with cleanup --mode orphan`,
        { provider: vm.provider, operation, instanceId: vm.instanceId },
      );
    }
    return (await provider.resolveRecordedId({ instanceId: vm.instanceId, podName: vm.podName ?? '' })).instanceId;
  }

  return {
    cloudCreateVm: (input: CreateInstanceInput): Promise<{ instanceId: string; provider: string; cloud: string }> =>
      long(async () => {
        // The cloud's identity (read once, then kept) beside the create: a worker's first VMs do not wait for it after.
        const [made, cloud] = await Promise.all([provider.create(input), provider.identity()]);
        return { ...made, provider: provider.name, cloud };
      }),
    cloudDeleteVm: ({ instanceId }: InstanceInput): Promise<{ outcome: 'deleted' | 'absent' }> =>
      long(() => provider.delete({ instanceId })),
    cloudObserveRecordedVm: async (vm: RecordedVmInput): Promise<InstanceObservation> =>
      provider.get({ instanceId: await locate(vm, 'get') }),
    /** A live pod's own VM found shut off, started again (a boot takes the cloud's time, not this call's). */
    cloudStartRecordedVm: async (vm: RecordedVmInput): Promise<{ outcome: 'started' | 'absent' }> =>
      provider.start({ instanceId: await locate(vm, 'start') }),
    /** The pod's VMs, by record and by tag; each one gone (or already absent) counts. */
    cloudDeletePodVms: ({ vm, podUid }: DeletePodVmsInput): Promise<{ deleted: string[]; absent: string[] }> =>
      long(async () => {
        const recorded = vm ? await locate(vm, 'delete') : undefined;
        const tagged = podUid ? (await provider.findByPodUid(podUid)).map((instance) => instance.instanceId) : [];
        const ids = [...new Set([...(recorded ? [recorded] : []), ...tagged])];
        const outcomes = await Promise.all(
          ids.map(async (instanceId) => ({ instanceId, ...(await provider.delete({ instanceId })) })),
        );
        return {
          deleted: outcomes.filter((o) => o.outcome === 'deleted').map((o) => o.instanceId),
          absent: outcomes.filter((o) => o.outcome === 'absent').map((o) => o.instanceId),
        };
      }),
    cloudListVms: async (_input: Record<string, never> = {}): Promise<{ instances: MarkedInstance[] }> => ({
      instances: await long(() => provider.list()),
    }),
    /** cloud-api-adaptor's VMs (its name shape, no Steward marker), for the sweep to check against the PeerPods. */
    cloudListUpstreamVms: async (_input: Record<string, never> = {}): Promise<{ instances: UpstreamInstance[] }> => ({
      instances: await long(() => provider.listUpstream()),
    }),
  };
}

export type CloudActivities = ReturnType<typeof createCloudActivities>;
