import pino from 'pino';
import type { VmPower } from './provider';
import { ownDeletions, powerChanges, remembered, watchVmPower } from './vm-watch';

const vm = (instanceId: string, state: VmPower['state'], pod = instanceId): VmPower => ({
  instanceId,
  podUid: `uid-${pod}`,
  podNamespace: 'ns',
  podName: pod,
  state,
});
const byId = (vms: VmPower[]) => new Map(vms.map((v) => [v.instanceId, v]));
const told = (changes: ReturnType<typeof powerChanges>) =>
  changes.map((c) => `${c.pod.name} ${c.instanceId} ${c.state}`);

describe("the worker's watch of the peer-pod VMs", () => {
  it('tells each VM gone down, up again, or gone, once, with the pod it serves; a VM made or booting is no news', () => {
    const before = byId([vm('a', 'pending'), vm('b', 'running'), vm('c', 'running'), vm('e', 'stopped')]);
    const now = [vm('a', 'running'), vm('b', 'stopped'), vm('d', 'pending'), vm('e', 'running')];
    expect(told(powerChanges(before, now))).toEqual(['b b stopped', 'e e running', 'c c gone']);
    expect(powerChanges(byId(now), now)).toEqual([]);
  });

  it('on its first look tells only the VMs found down: a worker started after its host restarted sees them at once', () => {
    expect(told(powerChanges(undefined, [vm('a', 'running'), vm('b', 'stopped'), vm('c', 'crashed')]))).toEqual([
      'b b stopped',
      'c c crashed',
    ]);
  });

  it('judges a VM made while it watches at its next look: one seen paused while libvirt starts it is no news', () => {
    const first = byId([vm('a', 'running')]);
    const starting = [vm('a', 'running'), vm('b', 'paused'), vm('c', 'paused')];
    expect(powerChanges(first, starting)).toEqual([]);
    const next = [vm('a', 'running'), vm('b', 'running'), vm('c', 'paused')];
    expect(told(powerChanges(remembered(first, starting), next))).toEqual(['c c paused']);
    expect(powerChanges(remembered(remembered(first, starting), next), next)).toEqual([]);
  });

  it('tells nothing for a VM whose pod it cannot name (no namespace or name recorded)', () => {
    const nameless = { ...vm('a', 'stopped'), podNamespace: undefined };
    expect(powerChanges(undefined, [nameless])).toEqual([]);
    expect(powerChanges(byId([nameless]), [])).toEqual([]);
  });

  it('compares with the last look it had when a look fails, and tells its workflow by id with a notice', async () => {
    const looks: (VmPower[] | Error)[] = [[vm('a', 'running')], new Error('libvirt cut'), [vm('a', 'stopped')]];
    const notices: string[] = [];
    const watch = watchVmPower({
      powerStates: () => {
        const next = looks.shift() ?? [vm('a', 'stopped')];
        return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
      },
      tell: (pod, notice) => {
        notices.push(`${pod.kind} ${pod.namespace}/${pod.name}: ${notice.by} [${notice.ids.join()}]`);
        return Promise.resolve();
      },
      intervalMs: 10,
      deletions: ownDeletions(),
      log: pino({ level: 'silent' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    watch.stop();
    expect(notices).toEqual(['PeerPod ns/a: the cloud: VM a stopped [a]']);
  });

  it("tells nothing of what this worker's own deletion does to a VM; a VM whose deletion failed is judged anew", async () => {
    const deletions = ownDeletions();
    const notices: string[] = [];
    // Each look waits for the test to give its VMs; the watch asking again means the last look is done.
    let give: (vms: VmPower[]) => void = () => undefined;
    let asked: () => void = () => undefined;
    let askedAgain = new Promise<void>((resolve) => (asked = resolve));
    const watch = watchVmPower({
      powerStates: () => {
        asked();
        return new Promise((resolve) => (give = resolve));
      },
      tell: (pod, notice) => Promise.resolve(void notices.push(`${pod.name}: ${notice.by}`)),
      intervalMs: 1,
      deletions,
      log: pino({ level: 'silent' }),
    });
    const look = async (vms: VmPower[]) => {
      await askedAgain;
      askedAgain = new Promise<void>((resolve) => (asked = resolve));
      give(vms);
    };
    await look([vm('a', 'running'), vm('b', 'running'), vm('c', 'running')]);
    let finish: () => void = () => undefined;
    const deleting = deletions.run('a', () => new Promise<void>((resolve) => (finish = resolve)));
    await look([vm('a', 'stopped'), vm('b', 'running'), vm('c', 'running')]);
    await askedAgain;
    finish();
    await deleting;
    await expect(deletions.run('b', () => Promise.reject(new Error('undefine refused')))).rejects.toThrow('refused');
    await look([vm('a', 'stopped'), vm('b', 'stopped'), vm('c', 'running')]);
    await look([vm('b', 'stopped'), vm('c', 'stopped')]);
    await askedAgain;
    expect(notices).toEqual(['b: the cloud: VM b stopped', 'c: the cloud: VM c stopped']);
    await look([vm('c', 'stopped')]);
    await askedAgain;
    watch.stop();
    expect(notices).toEqual(['b: the cloud: VM b stopped', 'c: the cloud: VM c stopped', 'b: the cloud: VM b gone']);
  });
});
