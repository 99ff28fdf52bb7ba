import { DescribeInstancesCommand, EC2Client, RunInstancesCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { ApplicationFailure } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { virsh } from '../../deploy/local/libvirt';
import { createCloudActivities } from './activities';
import { clientToken, createAwsProvider } from './aws';
import { createLibvirtProvider, METADATA_NAMESPACE, type LibvirtSettings } from './libvirt';
import { type CloudProvider, tagKeys } from './provider';

// moto accepts any credentials; the SDK's default chain reads these.
process.env.AWS_ACCESS_KEY_ID ??= 'steward-test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'steward-test';

/** This run's own marker, so VMs of other test runs on the same daemon or server never show in its lists. */
const marker = `steward-test-${Date.now().toString(36)}`;
const run = randomUUID().slice(0, 8);
let serial = 0;
const pod = () => {
  const podUid = randomUUID();
  return { podUid, podNamespace: 'default', podName: `web-${serial}`, name: `steward-test-${run}-${serial++}` };
};

const xmlDir = mkdtempSync(join(tmpdir(), 'steward-test-'));
afterAll(() => rmSync(xmlDir, { recursive: true, force: true }));
/** A domain without Steward's metadata, as virsh takes it: from a file. */
const plainDomainFile = (name: string) => {
  const file = join(xmlDir, `${name}.xml`);
  writeFileSync(
    file,
    `<domain type='qemu'><name>${name}</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices></domain>`,
  );
  return file;
};

const libvirtSettings = (uri: string): LibvirtSettings => ({
  uri,
  domainType: 'qemu',
  memoryMiB: 64,
  vcpus: 1,
  emulator: '/usr/bin/qemu-system-x86_64',
  marker,
  concurrency: 4,
  timeoutMs: 60_000,
});

/** What each case needs besides the provider: direct access to the backend, bypassing Steward's code. */
interface Backend {
  provider: CloudProvider;
  /** The pod UID as the backend itself records it on the VM. */
  recordedPodUid(instanceId: string): Promise<string | undefined>;
  /** VMs (not gone) that carry this pod UID, counted by the backend itself. */
  countForPod(podUid: string): Promise<number>;
  deleteOutOfBand(instanceId: string): Promise<void>;
  /** A VM made without Steward's marker; returns its id. */
  createUnmarked(name: string): Promise<string>;
  /** A provider whose backend cannot be reached. */
  unreachable(): CloudProvider;
}

function libvirtBackend(): Backend {
  const { uri } = stackInfo().libvirt;
  const metadataPodUid = async (uuid: string) => {
    const xml = await virsh(uri, 'metadata', uuid, METADATA_NAMESPACE).catch(() => '');
    return /<(?:\w+:)?podUid>([^<]*)</.exec(xml)?.[1];
  };
  return {
    provider: createLibvirtProvider(libvirtSettings(uri)),
    recordedPodUid: metadataPodUid,
    async countForPod(podUid) {
      const uuids = (await virsh(uri, 'list', '--all', '--uuid')).split('\n').filter(Boolean);
      return (await Promise.all(uuids.map(metadataPodUid))).filter((uid) => uid === podUid).length;
    },
    async deleteOutOfBand(uuid) {
      await virsh(uri, 'destroy', uuid).catch(() => undefined);
      await virsh(uri, 'undefine', uuid);
    },
    async createUnmarked(name) {
      await virsh(uri, 'define', plainDomainFile(name));
      return (await virsh(uri, 'domuuid', name)).trim();
    },
    unreachable: () => createLibvirtProvider({ ...libvirtSettings(`qemu+unix:///system?socket=/tmp/steward-test-cloud-${run}.sock`), timeoutMs: 10_000 }),
  };
}

function awsBackend(): Backend {
  const { endpoint, region } = stackInfo().ec2;
  const ec2 = new EC2Client({ region, endpoint });
  const settings = { region, endpoint, imageId: 'ami-12c6146b', instanceType: 't3.micro', securityGroupIds: [], marker };
  const tag = async (instanceId: string, key: string) => {
    const reply = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    return reply.Reservations?.[0]?.Instances?.[0]?.Tags?.find((t) => t.Key === key)?.Value;
  };
  return {
    provider: createAwsProvider(settings),
    recordedPodUid: (instanceId) => tag(instanceId, tagKeys.podUid),
    async countForPod(podUid) {
      const reply = await ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: `tag:${tagKeys.podUid}`, Values: [podUid] }] }));
      const instances = (reply.Reservations ?? []).flatMap((r) => r.Instances ?? []);
      return instances.filter((i) => i.State?.Name !== 'terminated').length;
    },
    async deleteOutOfBand(instanceId) {
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    },
    async createUnmarked(name) {
      const reply = await ec2.send(
        new RunInstancesCommand({
          ImageId: settings.imageId,
          MinCount: 1,
          MaxCount: 1,
          TagSpecifications: [{ ResourceType: 'instance', Tags: [{ Key: 'Name', Value: name }, { Key: tagKeys.podUid, Value: randomUUID() }] }],
        }),
      );
      return reply.Instances![0]!.InstanceId!;
    },
    unreachable: () => createAwsProvider({ ...settings, endpoint: 'http://127.0.0.1:9' }, new EC2Client({ region, endpoint: 'http://127.0.0.1:9', maxAttempts: 1 })),
  };
}

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
    expect((await activities.cloudFindVmsByPodUid({ podUid: p.podUid })).instances).toHaveLength(1);
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
