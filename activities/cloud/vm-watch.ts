// The worker's watch of its peer-pod VMs' power states: a VM shut off by its host, crashed, or gone from the cloud is
// seen within one look (default 5 s), not at its peer pod's next drift check (30 min). Each change is told to the
// peer pod's workflow as a `backendChanged` notice; the workflow reads its VM itself and decides (its machine's
// `checkingVm`), so a notice is only ever a hint and a lost or duplicated one costs nothing but a look.
import type { Logger } from 'pino';
import type { BackendChanged } from '../../model/messages';
import type { ObjectRef } from '../../model/naming';
import { VM_DOWN_STATES } from '../../model/vocabulary';
import type { InstanceState, VmPower } from './provider';

/** A VM whose state changed since the last look (`gone`: no longer in the cloud), with the pod it serves. */
export interface PowerChange {
  pod: ObjectRef<'PeerPod'>;
  instanceId: string;
  state: InstanceState | 'gone';
}

const podOf = (vm: VmPower): ObjectRef<'PeerPod'> | undefined =>
  vm.podNamespace && vm.podName ? { kind: 'PeerPod', namespace: vm.podNamespace, name: vm.podName } : undefined;

/**
 * Pure: what changed from `before` (the last look, by instance ID) to `now` that a peer pod acts on: a VM gone, gone
 * down, or up again. On the watch's first look (a worker started after its host restarted) a VM counts when down. A VM
 * made since is judged at its next look (`remembered`): libvirt starts a domain paused and resumes it, and on busy
 * cores a look sees it so; a VM booting is no news either, so a peer pod's usual life costs no notice.
 */
export function powerChanges(before: ReadonlyMap<string, VmPower> | undefined, now: VmPower[]): PowerChange[] {
  const changes: PowerChange[] = [];
  const seen = new Set<string>();
  for (const vm of now) {
    seen.add(vm.instanceId);
    const was = before?.get(vm.instanceId);
    const down = VM_DOWN_STATES.has(vm.state);
    const changed = was === undefined ? before === undefined && down : down !== VM_DOWN_STATES.has(was.state);
    const pod = podOf(vm);
    if (changed && pod) changes.push({ pod, instanceId: vm.instanceId, state: vm.state });
  }
  for (const [instanceId, vm] of before ?? []) {
    const pod = podOf(vm);
    if (!seen.has(instanceId) && pod) changes.push({ pod, instanceId, state: 'gone' });
  }
  return changes;
}

/** What a look leaves for the next one to compare with: a VM made since the last look as if booting (see above). */
export const remembered = (before: ReadonlyMap<string, VmPower> | undefined, now: VmPower[]): Map<string, VmPower> =>
  new Map(
    now.map((vm) => [vm.instanceId, before && !before.has(vm.instanceId) ? { ...vm, state: 'pending' as const } : vm]),
  );

/**
 * The VMs this worker is deleting. Its watch tells no peer pod what such a deletion does to its VM (stopped between
 * destroy and undefine, then gone): the workflow asked for it, and a notice that comes while the task that deletes
 * completes its workflow makes Temporal refuse that task and run it again, deletion and all. A VM deleted stays
 * quiet until a look no longer lists it; one whose deletion failed is judged anew, as a VM just made (`remembered`).
 * Other workers' watches still tell: they cannot know.
 */
export interface OwnDeletions {
  /** Runs `deletion` of `instanceId`, its VM quiet meanwhile. */
  run<T>(instanceId: string, deletion: () => Promise<T>): Promise<T>;
  /** For a look listing `now`: the VMs not to tell of, and those to judge anew; a deleted VM not listed is done. */
  settle(now: VmPower[]): { quiet: ReadonlySet<string>; anew: string[] };
}

export function ownDeletions(): OwnDeletions {
  const running = new Map<string, number>();
  const deleted = new Set<string>();
  const failed = new Set<string>();
  const end = (instanceId: string) => {
    const left = (running.get(instanceId) ?? 1) - 1;
    if (left > 0) running.set(instanceId, left);
    else running.delete(instanceId);
  };
  return {
    async run(instanceId, deletion) {
      running.set(instanceId, (running.get(instanceId) ?? 0) + 1);
      try {
        const result = await deletion();
        deleted.add(instanceId);
        return result;
      } catch (error) {
        failed.add(instanceId);
        throw error;
      } finally {
        end(instanceId);
      }
    },
    settle(now) {
      const quiet = new Set([...running.keys(), ...deleted]);
      const listed = new Set(now.map((vm) => vm.instanceId));
      for (const instanceId of deleted) if (!listed.has(instanceId)) deleted.delete(instanceId);
      const anew = [...failed].filter((instanceId) => !quiet.has(instanceId));
      failed.clear();
      return { quiet, anew };
    },
  };
}

export interface VmWatch {
  stop(): void;
}

/**
 * Looks every `intervalMs` (none while the previous look runs). A look that fails (the cloud out of reach) changes
 * nothing: the next one compares with the last it had. `tell` failing is logged; the next change tells again.
 */
export function watchVmPower({
  powerStates,
  tell,
  intervalMs,
  deletions,
  log,
}: {
  powerStates: () => Promise<VmPower[]>;
  tell: (pod: ObjectRef<'PeerPod'>, notice: BackendChanged) => Promise<void>;
  intervalMs: number;
  deletions: OwnDeletions;
  log: Logger;
}): VmWatch {
  let last: Map<string, VmPower> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const look = async () => {
    try {
      const now = await powerStates();
      const { quiet, anew } = deletions.settle(now);
      for (const instanceId of anew) last?.delete(instanceId);
      const changes = powerChanges(last, now).filter(({ instanceId }) => !quiet.has(instanceId));
      last = remembered(last, now);
      for (const { pod, instanceId, state } of changes) {
        log.info(
          { pod: `${pod.namespace}/${pod.name}`, instanceId, state },
          'peer-pod VM changed: telling its workflow',
        );
        await tell(pod, { by: `the cloud: VM ${instanceId} ${state}`, ids: [instanceId] }).catch((error: unknown) =>
          log.warn({ err: error, instanceId }, 'could not tell a peer pod its VM changed'),
        );
      }
    } catch (error) {
      log.debug({ err: error }, 'could not read the VMs’ power states; looking again later');
    }
  };
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => void look().finally(next), intervalMs);
    timer.unref();
  };
  log.info({ intervalMs }, "watching the peer-pod VMs' power states");
  void look().finally(next);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
