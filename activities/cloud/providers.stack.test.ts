import { DescribeInstancesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { virsh } from '../../deploy/local/libvirt';
import { createCloudActivities } from './activities';
import { clientToken } from './aws';
import { awsBackend as awsBackendOf, libvirtBackend as libvirtBackendOf, plainDomainFile, type Backend } from '../../test/support/cloud-backends';


/** This run's own marker, so VMs of other test runs on the same daemon or server never show in its lists. */
const marker = `steward-test-${Date.now().toString(36)}`;
const run = randomUUID().slice(0, 8);
let serial = 0;
const pod = () => {
  const podUid = randomUUID();
  return { podUid, podNamespace: 'default', podName: `web-${serial}`, name: `steward-test-${run}-${serial++}` };
};

const libvirtBackend = () => libvirtBackendOf(stackInfo(), marker);
const awsBackend = () => awsBackendOf(stackInfo(), marker);

const failureOf = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApplicationFailure);
  return error as ApplicationFailure;
};

describe.each([
  { provider: 'libvirt', backend: libvirtBackend },
  { provider: 'aws', backend: awsBackend },
])('cloud provider $provider on the real backend', ({ backend: makeBackend }) => {
  let backend: Backend;
  // Every VM this file made, deleted at the end whatever happened.
  const made: string[] = [];
  beforeAll(() => {
    backend = makeBackend();
  });
  afterAll(async () => {
    for (const instanceId of made) await backend.provider.delete({ instanceId }).catch(() => undefined);
  });

  it('creates one VM tagged with the pod UID and the marker, found by pod UID, deleted once and then absent', async () => {
    const p = pod();
    const { instanceId } = await backend.provider.create(p);
    made.push(instanceId);

    expect(await backend.recordedPodUid(instanceId)).toBe(p.podUid);
    expect(await backend.provider.get({ instanceId })).toEqual(expect.objectContaining({ exists: true, podUid: p.podUid, marker: true, name: p.name }));
    expect(await backend.provider.findByPodUid(p.podUid)).toEqual([expect.objectContaining({ instanceId, podUid: p.podUid, podName: p.podName, podNamespace: 'default' })]);

    expect(await backend.provider.delete({ instanceId })).toEqual({ outcome: 'deleted' });
    expect(await backend.provider.get({ instanceId })).toEqual({ exists: false });
    expect(await backend.provider.findByPodUid(p.podUid)).toEqual([]);
    expect(await backend.provider.delete({ instanceId })).toEqual({ outcome: 'absent' });
  });

  it('a repeated create for the same pod (lost reply) returns the same VM and makes no second one', async () => {
    const p = pod();
    const first = await backend.provider.create(p);
    made.push(first.instanceId);
    const second = await backend.provider.create(p);
    expect(second).toEqual(first);
    expect(await backend.countForPod(p.podUid)).toBe(1);
    expect(await backend.provider.delete(first)).toEqual({ outcome: 'deleted' });
  });

  it('deletion of a VM removed out of band is absent, not an error', async () => {
    const { instanceId } = await backend.provider.create(pod());
    made.push(instanceId);
    await backend.deleteOutOfBand(instanceId);
    expect(await backend.provider.delete({ instanceId })).toEqual({ outcome: 'absent' });
  });

  it('lists every VM with the marker and never one without it', async () => {
    const [a, b] = [pod(), pod()];
    const ids = [(await backend.provider.create(a)).instanceId, (await backend.provider.create(b)).instanceId];
    made.push(...ids);
    const unmarked = await backend.createUnmarked(`steward-test-${run}-unmarked`);
    try {
      const listed = await backend.provider.list();
      expect(listed.map((i) => i.instanceId).sort()).toEqual([...ids].sort());
      expect(listed.find((i) => i.instanceId === ids[0])).toEqual(expect.objectContaining({ podUid: a.podUid, name: a.name }));
      expect(listed.map((i) => i.instanceId)).not.toContain(unmarked);
      expect(await backend.provider.get({ instanceId: unmarked })).toEqual(expect.objectContaining({ exists: true, marker: false }));
    } finally {
      await backend.provider.delete({ instanceId: unmarked });
    }
  });

  it('an unreachable backend is a retryable CloudUnavailable', async () => {
    const failure = await failureOf(backend.unreachable().get({ instanceId: made[0]! }));
    expect(failure.type).toBe('CloudUnavailable');
    expect(failure.nonRetryable).toBe(false);
  });

  it('an instance ID the backend cannot have is a non-retryable CloudInvalidRequest, before any call', async () => {
    const failure = await failureOf(backend.provider.delete({ instanceId: '--help' }));
    expect(failure.type).toBe('CloudInvalidRequest');
    expect(failure.nonRetryable).toBe(true);
  });

  it('activities return plain JSON and name the provider', async () => {
    const activities = createCloudActivities({ provider: backend.provider });
    const p = pod();
    const created = await activities.cloudCreateVm(p);
    made.push(created.instanceId);
    expect(JSON.parse(JSON.stringify(created))).toEqual(created);
    expect(created.provider).toBe(backend.provider.name);
    expect(await backend.provider.findByPodUid(p.podUid)).toHaveLength(1);
    expect(await activities.cloudDeleteVm({ instanceId: created.instanceId })).toEqual({ outcome: 'deleted' });
  });
});

describe('libvirt specifics', () => {
  it('a name held by another pod VM is CloudNameTaken, and the other VM is left alone', async () => {
    const { provider } = libvirtBackend();
    const p = pod();
    const { instanceId } = await provider.create(p);
    try {
      const failure = await failureOf(provider.create({ ...p, podUid: randomUUID() }));
      expect(failure.type).toBe('CloudNameTaken');
      expect(await provider.get({ instanceId })).toEqual(expect.objectContaining({ exists: true, state: 'running' }));
    } finally {
      await provider.delete({ instanceId });
    }
  });

  it('a repeated create starts a VM an earlier attempt defined but did not start', async () => {
    const { provider } = libvirtBackend();
    const { uri } = stackInfo().libvirt;
    const p = pod();
    const { instanceId } = await provider.create(p);
    try {
      await virsh(uri, 'destroy', instanceId);
      expect(await provider.create(p)).toEqual({ instanceId });
      expect(await provider.get({ instanceId })).toEqual(expect.objectContaining({ state: 'running' }));
    } finally {
      await provider.delete({ instanceId });
    }
  });

  it('times VM create and delete through the provider against virsh directly', async () => {
    const { provider } = libvirtBackend();
    const { uri } = stackInfo().libvirt;
    const rounds = 3;
    const timed = async (call: () => Promise<unknown>) => {
      const start = performance.now();
      await call();
      return performance.now() - start;
    };
    const times = { providerCreate: [] as number[], providerDelete: [] as number[], virshCreate: [] as number[], virshDelete: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      let instanceId = '';
      times.providerCreate.push(await timed(async () => ({ instanceId } = await provider.create(pod()))));
      times.providerDelete.push(await timed(() => provider.delete({ instanceId })));

      const name = `steward-test-${run}-virsh-${i}`;
      const file = plainDomainFile(name);
      times.virshCreate.push(await timed(async () => (await virsh(uri, 'define', file), await virsh(uri, 'start', name))));
      times.virshDelete.push(await timed(async () => (await virsh(uri, 'destroy', name), await virsh(uri, 'undefine', name))));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const row = (what: string, p: number[], v: number[]) => `  ${what}: provider ${median(p).toFixed(0)} ms, virsh ${median(v).toFixed(0)} ms (median of ${rounds})`;
    console.log(
      ['VM timings, libvirt (qemu, 64 MiB, diskless):', row('create (define+start)', times.providerCreate, times.virshCreate), row('delete (destroy+undefine)', times.providerDelete, times.virshDelete)].join('\n'),
    );
    expect(times.providerCreate).toHaveLength(rounds);
  });
});

describe('aws specifics', () => {
  it('RunInstances carries a ClientToken derived from the pod UID (moto records it, EC2 honours it)', async () => {
    const { provider } = awsBackend();
    const { endpoint, region } = stackInfo().ec2;
    const p = pod();
    const { instanceId } = await provider.create(p);
    try {
      const reply = await new EC2Client({ region, endpoint }).send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      const token = reply.Reservations?.[0]?.Instances?.[0]?.ClientToken;
      expect(token).toBe(clientToken(p));
      expect(token!.startsWith(p.podUid)).toBe(true);
      expect(token!.length).toBeLessThanOrEqual(64);
    } finally {
      await provider.delete({ instanceId });
    }
  });
});
