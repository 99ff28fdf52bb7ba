// Cloud activities: thin, plain-JSON wrappers over one provider, one typed input object each (STYLE habit 3).
// Calls that can take seconds (create, delete, a list over many VMs) heartbeat while they run, so a worker that
// dies mid-call is noticed after the heartbeat timeout rather than the whole start-to-close timeout.
import { Context } from '@temporalio/activity';
import type { CloudProvider, CreateInstanceInput, InstanceObservation, MarkedInstance } from './provider';

export interface CloudActivityDeps {
  provider: CloudProvider;
  /** Heartbeat period while a long call runs. */
  heartbeatMs?: number;
}

export interface InstanceInput {
  instanceId: string;
}

export interface PodUidInput {
  podUid: string;
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
  return {
    cloudCreateVm: (input: CreateInstanceInput): Promise<{ instanceId: string; provider: string }> =>
      long(async () => ({ ...(await provider.create(input)), provider: provider.name })),
    cloudDeleteVm: ({ instanceId }: InstanceInput): Promise<{ outcome: 'deleted' | 'absent' }> => long(() => provider.delete({ instanceId })),
    cloudGetVm: ({ instanceId }: InstanceInput): Promise<InstanceObservation> => provider.get({ instanceId }),
    cloudListVms: async (_input: Record<string, never> = {}): Promise<{ instances: MarkedInstance[] }> => ({ instances: await long(() => provider.list()) }),
    cloudFindVmsByPodUid: async ({ podUid }: PodUidInput): Promise<{ instances: MarkedInstance[] }> => ({ instances: await long(() => provider.findByPodUid(podUid)) }),
  };
}

export type CloudActivities = ReturnType<typeof createCloudActivities>;
