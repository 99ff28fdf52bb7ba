// Cloud activities: thin, plain-JSON wrappers over one provider, one typed input object each (STYLE habit 3).
// Calls that can take seconds (create, delete, a list over many VMs) heartbeat while they run, so a worker that
// dies mid-call is noticed after the heartbeat timeout rather than the whole start-to-close timeout.
import { Context } from '@temporalio/activity';
import { cloudFailure } from './errors';
import type { CloudProvider, CreateInstanceInput, InstanceObservation, MarkedInstance } from './provider';

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

async function heartbeating<T>(periodMs: number, call: () => Promise<T>): Promise<T> {
  const ctx = activityContext();
  if (!ctx) return call();
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
      throw cloudFailure('CloudProviderNotConfigured', `the VM is in cloud "${name}" but this worker is configured for "${provider.name}" (STEWARD_CLOUD_PROVIDER)`, {
        provider: name,
        operation,
      });
    }
  };
  return {
    cloudCreateVm: (input: CreateInstanceInput): Promise<{ instanceId: string; provider: string }> =>
      long(async () => ({ ...(await provider.create(input)), provider: provider.name })),
    cloudDeleteVm: ({ instanceId }: InstanceInput): Promise<{ outcome: 'deleted' | 'absent' }> => long(() => provider.delete({ instanceId })),
    cloudObserveRecordedVm: ({ provider: name, instanceId }: RecordedVmInput): Promise<InstanceObservation> => {
      checkProvider(name, 'get');
      return provider.get({ instanceId });
    },
    /** The pod's VMs, by record and by tag; each one gone (or already absent) counts. */
    cloudDeletePodVms: ({ vm, podUid }: DeletePodVmsInput): Promise<{ deleted: string[]; absent: string[] }> =>
      long(async () => {
        if (vm) checkProvider(vm.provider, 'delete');
        const tagged = podUid ? (await provider.findByPodUid(podUid)).map((instance) => instance.instanceId) : [];
        const ids = [...new Set([...(vm ? [vm.instanceId] : []), ...tagged])];
        const outcomes = await Promise.all(ids.map(async (instanceId) => ({ instanceId, ...(await provider.delete({ instanceId })) })));
        return {
          deleted: outcomes.filter((o) => o.outcome === 'deleted').map((o) => o.instanceId),
          absent: outcomes.filter((o) => o.outcome === 'absent').map((o) => o.instanceId),
        };
      }),
    cloudListVms: async (_input: Record<string, never> = {}): Promise<{ instances: MarkedInstance[] }> => ({ instances: await long(() => provider.list()) }),
  };
}

export type CloudActivities = ReturnType<typeof createCloudActivities>;
