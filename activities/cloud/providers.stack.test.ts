import {
  AllocateAddressCommand,
  AssociateAddressCommand,
  DescribeAddressesCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstancesCommand,
  EC2Client,
  ReleaseAddressCommand,
} from '@aws-sdk/client-ec2';
import { ApplicationFailure } from '@temporalio/common';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { virsh } from '../../deploy/local/libvirt';
import { capture } from '../../deploy/local/process';
import { createLibvirtProvider } from './libvirt';
import { tagKeys } from './provider';
import { createCloudActivities } from './activities';
import { clientToken, createAwsProvider } from './aws';
import {
  awsBackend as awsBackendOf,
  libvirtBackend as libvirtBackendOf,
  libvirtSettings,
  median,
  plainDomainFile,
  TEST_AMI,
  timeAgainstVirsh,
  type Backend,
} from '../../test/support/cloud-backends';
import { caaPodVm, podVmPool, requireOvmf, type PodVmPool } from '../../test/support/caa-pod-vm';
import { deleteDomain } from './libvirt/delete';
import { connectLibvirt, VirshError } from './libvirt/virsh';

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
    expect(await backend.provider.get({ instanceId })).toEqual(
      expect.objectContaining({ exists: true, podUid: p.podUid, marker: true, name: p.name }),
    );
    expect(await backend.provider.findByPodUid(p.podUid)).toEqual([
      expect.objectContaining({ instanceId, podUid: p.podUid, podName: p.podName, podNamespace: 'default' }),
    ]);

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

  it('a VM powered off is seen stopped, started again by start (a second start changes nothing); a gone one is absent', async () => {
    const { instanceId } = await backend.provider.create(pod());
    made.push(instanceId);
    await backend.stopOutOfBand(instanceId);
    expect(await backend.provider.get({ instanceId })).toEqual(
      expect.objectContaining({ exists: true, state: 'stopped' }),
    );
    // The watch's look at every VM (vm-watch.ts) sees it stopped too, with the pod it serves.
    expect((await backend.provider.powerStates()).find((vm) => vm.instanceId === instanceId)).toEqual(
      expect.objectContaining({ state: 'stopped', podNamespace: 'default' }),
    );
    expect(await backend.provider.start({ instanceId })).toEqual({ outcome: 'started' });
    expect(await backend.provider.get({ instanceId })).toEqual(
      expect.objectContaining({ exists: true, state: expect.stringMatching(/^(pending|running)$/) as unknown }),
    );
    expect(await backend.provider.start({ instanceId })).toEqual({ outcome: 'started' });
    await backend.deleteOutOfBand(instanceId);
    expect(await backend.provider.start({ instanceId })).toEqual({ outcome: 'absent' });
  });

  it('lists every VM with the marker and never one without it', async () => {
    const [a, b] = [pod(), pod()];
    const ids = [(await backend.provider.create(a)).instanceId, (await backend.provider.create(b)).instanceId];
    made.push(...ids);
    const unmarked = await backend.createUnmarked(`steward-test-${run}-unmarked`);
    try {
      const listed = await backend.provider.list();
      expect(listed.map((i) => i.instanceId).sort()).toEqual([...ids].sort());
      expect(listed.find((i) => i.instanceId === ids[0])).toEqual(
        expect.objectContaining({ podUid: a.podUid, name: a.name }),
      );
      expect(listed.map((i) => i.instanceId)).not.toContain(unmarked);
      // The watch's look lists the same VMs, each with its state, and never one without the marker.
      const powered = await backend.provider.powerStates();
      expect(powered.map((i) => i.instanceId).sort()).toEqual([...ids].sort());
      expect(powered.find((i) => i.instanceId === ids[0])).toEqual(
        expect.objectContaining({ podUid: a.podUid, podName: a.podName, state: expect.any(String) as unknown }),
      );
      expect(await backend.provider.get({ instanceId: unmarked })).toEqual(
        expect.objectContaining({ exists: true, marker: false }),
      );
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
    const times = await timeAgainstVirsh(uri, rounds, (i) => {
      let instanceId = '';
      return {
        domain: `steward-test-${run}-virsh-${i}`,
        create: async () => ({ instanceId } = await provider.create(pod())),
        remove: () => provider.delete({ instanceId }),
      };
    });
    const row = (what: string, p: number[], v: number[]) =>
      `  ${what}: provider ${median(p).toFixed(0)} ms, virsh ${median(v).toFixed(0)} ms (median of ${rounds})`;
    console.log(
      [
        'VM timings, libvirt (qemu, 64 MiB, diskless):',
        row('create (define+start)', times.create, times.virshCreate),
        row('delete (destroy+undefine)', times.delete, times.virshDelete),
      ].join('\n'),
    );
    expect(times.create).toHaveLength(rounds);
  });
});

describe('libvirt: a pod VM with its volumes, as cloud-api-adaptor makes it, deleted with everything it owns', () => {
  let uri: string;
  let pool: PodVmPool;
  let serialVm = 0;
  const vmName = () => `podvm-web-${serialVm++}-${run}`;
  beforeAll(async () => {
    uri = stackInfo().libvirt.uri;
    pool = await podVmPool(uri, `steward-test-${run}`);
    // Never skipped: without OVMF the pod VMs would have no NVRAM for the delete to remove.
    requireOvmf();
  });
  afterAll(() => pool.remove());
  const domains = async () => virsh(uri, 'list', '--all', '--name');

  it('a running VM: the domain, its NVRAM, its root volume and its cloud-init ISO go; the base image stays; a second delete is absent', async () => {
    const vm = await caaPodVm(uri, pool, vmName());
    expect(await pool.volumes()).toEqual([pool.base, `${vm.name}-cloudinit.iso`, `${vm.name}-root.qcow2`]);
    expect(existsSync(vm.nvram)).toBe(true);

    const { provider } = libvirtBackend();
    expect(await provider.delete({ instanceId: vm.uuid })).toEqual({ outcome: 'deleted' });
    expect(await domains()).not.toContain(vm.name);
    expect(await pool.volumes()).toEqual([pool.base]);
    expect(existsSync(vm.nvram)).toBe(false);
    expect(await provider.delete({ instanceId: vm.uuid })).toEqual({ outcome: 'absent' });
  });

  it('a delete interrupted between its volumes (libvirtd gone) is finished by the next attempt', async () => {
    const vm = await caaPodVm(uri, pool, vmName());
    const libvirt = connectLibvirt(libvirtSettings(uri, marker));
    const real = libvirt.virsh;
    // The ISO's delete fails as it does when libvirtd restarts: the root volume is gone by then, the domain is not.
    libvirt.virsh = (...args) =>
      args.some((a) => a.endsWith('-cloudinit.iso'))
        ? Promise.reject(new VirshError(args, 'failed to connect to the hypervisor', '1'))
        : real(...args);
    await expect(deleteDomain(libvirt, vm.uuid)).rejects.toMatchObject({ type: 'CloudUnavailable' });
    expect(await pool.volumes()).toEqual([pool.base, `${vm.name}-cloudinit.iso`]);
    expect(await domains()).toContain(vm.name);

    // The root volume's path, in the active pool's directory, is no volume any more: deleted, nothing kept.
    expect(await libvirtBackend().provider.delete({ instanceId: vm.uuid })).toEqual({ outcome: 'deleted' });
    expect(await domains()).not.toContain(vm.name);
    expect(await pool.volumes()).toEqual([pool.base]);
    expect(existsSync(vm.nvram)).toBe(false);
  });

  it('a delete while the pool is inactive fails, retryably, and keeps the domain; after pool-start the retry deletes the volumes', async () => {
    const vm = await caaPodVm(uri, pool, vmName());
    const { provider } = libvirtBackend();
    await virsh(uri, 'pool-destroy', pool.name);
    let first: unknown;
    let keptDomain: boolean;
    try {
      first = await provider.delete({ instanceId: vm.uuid }).catch((e: unknown) => e);
      keptDomain = (await domains()).includes(vm.name);
    } finally {
      await virsh(uri, 'pool-start', pool.name);
    }
    // The retry, once the pool is back: nothing left but the base. A first delete that undefined the domain left
    // both volumes behind, named by nothing any more.
    const second = await provider.delete({ instanceId: vm.uuid });
    expect(await pool.volumes()).toEqual([pool.base]);
    expect(second).toEqual({ outcome: 'deleted' });
    expect(keptDomain).toBe(true);
    expect(first).toBeInstanceOf(ApplicationFailure);
    expect(first).toMatchObject({ type: 'CloudUnavailable', nonRetryable: false });
    expect((first as Error).message).toContain(`is in storage pool "${pool.name}", which is not active`);
    expect(await domains()).not.toContain(vm.name);
  });

  it('a VM whose root volume an earlier attempt already deleted (stopped there) is finished: ISO, NVRAM and domain go', async () => {
    const vm = await caaPodVm(uri, pool, vmName());
    await virsh(uri, 'destroy', vm.uuid);
    await virsh(uri, 'vol-delete', '--pool', pool.name, `${vm.name}-root.qcow2`);

    expect(await libvirtBackend().provider.delete({ instanceId: vm.uuid })).toEqual({ outcome: 'deleted' });
    expect(await domains()).not.toContain(vm.name);
    expect(await pool.volumes()).toEqual([pool.base]);
    expect(existsSync(vm.nvram)).toBe(false);
  });

  it('a disk file outside every pool is left in place and reported as kept', async () => {
    const vm = await caaPodVm(uri, pool, vmName(), false);
    const outside = await mkdtemp(join(tmpdir(), 'steward-outside-'));
    try {
      const file = join(outside, 'data.qcow2');
      execFileSync('qemu-img', ['create', '-q', '-f', 'qcow2', file, '1M']);
      await virsh(uri, 'attach-disk', vm.uuid, file, 'vdb', '--config', '--subdriver', 'qcow2');

      const result = await libvirtBackend().provider.delete({ instanceId: vm.uuid });
      expect(result).toEqual({
        outcome: 'deleted',
        kept: [`${file}: in no libvirt storage pool (libvirt deletes only pool volumes): left as it is`],
      });
      expect(existsSync(file)).toBe(true);
      expect(await pool.volumes()).toEqual([pool.base]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('libvirt: host identity and pre-v0.20 (numeric) instance IDs', () => {
  let uri: string;
  beforeAll(() => {
    uri = stackInfo().libvirt.uri;
  });
  /** A running domain as cloud-api-adaptor names and defines it (no Steward marker), with its numeric ID and UUID. */
  const upstreamDomain = async (podName: string) => {
    // The tail stands for upstream's 8 chars of the sandbox ID; the run's own keeps test runs apart.
    const name = `podvm-${podName}-${run}`;
    await virsh(uri, 'define', plainDomainFile(name));
    await virsh(uri, 'start', name);
    const [id, uuid] = await Promise.all([virsh(uri, 'domid', name), virsh(uri, 'domuuid', name)]);
    const remove = async () => {
      await virsh(uri, 'destroy', name).catch(() => undefined);
      await virsh(uri, 'undefine', name).catch(() => undefined);
    };
    return { name, id: id.trim(), uuid: uuid.trim(), remove };
  };

  it('identity is libvirt:<the host UUID in virsh capabilities>, the same on every call and for every provider', async () => {
    const hostUuid = /<host>\s*<uuid>([^<]+)<\/uuid>/.exec(await virsh(uri, 'capabilities'))?.[1];
    expect(hostUuid).toMatch(/^[0-9a-f-]{36}$/);
    const { provider } = libvirtBackend();
    expect(await provider.identity()).toBe(`libvirt:${hostUuid}`);
    expect(await provider.identity()).toBe(`libvirt:${hostUuid}`);
    expect(await libvirtBackend().provider.identity()).toBe(`libvirt:${hostUuid}`);
  });

  it('identity of an unreachable libvirtd is a retryable CloudUnavailable', async () => {
    const failure = await failureOf(libvirtBackend().unreachable().identity());
    expect(failure.type).toBe('CloudUnavailable');
    expect(failure.nonRetryable).toBe(false);
  });

  it('a recorded UUID comes back unchanged, without asking libvirtd', async () => {
    const instanceId = randomUUID();
    expect(await libvirtBackend().unreachable().resolveRecordedId({ instanceId, podName: 'web-1' })).toEqual({
      instanceId,
    });
  });

  it("the numeric ID of pod web-1's upstream VM resolves to its UUID, and delete of that UUID deletes it", async () => {
    const { provider } = libvirtBackend();
    const vm = await upstreamDomain('web-1');
    try {
      expect(vm.id).toMatch(/^\d+$/);
      expect(await provider.resolveRecordedId({ instanceId: vm.id, podName: 'web-1' })).toEqual({
        instanceId: vm.uuid,
      });
      expect(await provider.delete({ instanceId: vm.uuid })).toEqual({ outcome: 'deleted' });
      expect(await virsh(uri, 'list', '--all', '--name')).not.toContain(vm.name);
    } finally {
      await vm.remove();
    }
  });

  it("the same numeric ID asked for pod web-2 is a non-retryable CloudLegacyInstanceId naming what holds it, and web-1's VM is left alone", async () => {
    const { provider } = libvirtBackend();
    const vm = await upstreamDomain('web-1');
    try {
      const failure = await failureOf(provider.resolveRecordedId({ instanceId: vm.id, podName: 'web-2' }));
      expect(failure.type).toBe('CloudLegacyInstanceId');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toContain(`domain ${vm.id} is now \`${vm.name}\`, not pod web-2's VM`);
      expect(failure.message).toContain('podvm-web-2-…');
      expect(failure.message).toContain('--mode orphan');
      expect(await provider.get({ instanceId: vm.uuid })).toEqual(
        expect.objectContaining({ exists: true, state: 'running', marker: false }),
      );
    } finally {
      await vm.remove();
    }
  });

  it('a numeric ID no domain holds (its VM is gone) is a non-retryable CloudLegacyInstanceId', async () => {
    const { provider } = libvirtBackend();
    const vm = await upstreamDomain('web-1');
    await vm.remove();
    const failure = await failureOf(provider.resolveRecordedId({ instanceId: vm.id, podName: 'web-1' }));
    expect(failure.type).toBe('CloudLegacyInstanceId');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('no running domain has that ID now');
    expect(failure.message).toContain('podvm-web-1-…');
  });

  it('a domain whose name is the number asked for is not that domain ID (virsh falls back to names)', async () => {
    const { provider } = libvirtBackend();
    const number = String(2_000_000_000 + Math.floor(Math.random() * 100_000_000));
    await virsh(uri, 'define', plainDomainFile(number));
    try {
      const failure = await failureOf(provider.resolveRecordedId({ instanceId: number, podName: 'web-1' }));
      expect(failure.type).toBe('CloudLegacyInstanceId');
    } finally {
      await virsh(uri, 'undefine', number).catch(() => undefined);
    }
  });

  it.each(['--help', '7a', '-1', '99999999999', ''])(
    'a recorded ID %j, neither a UUID nor a domain ID, is a non-retryable CloudInvalidRequest',
    async (instanceId) => {
      const failure = await failureOf(libvirtBackend().provider.resolveRecordedId({ instanceId, podName: 'web-1' }));
      expect(failure.type).toBe('CloudInvalidRequest');
      expect(failure.nonRetryable).toBe(true);
    },
  );
});

describe('libvirt: a pod VM as cloud-api-adaptor makes it (volumes, cloud-init, NIC)', () => {
  const { uri } = stackInfo().libvirt;
  const id = `steward-test-${run}`;
  const dir = mkdtempSync(join(tmpdir(), 'steward-podvm-'));
  const [pool, network] = [`${id}-pool`, `${id}-net`];
  // The test's own pool and pod-VM image, made by qemu-img as an image build would leave it.
  const settings = { ...libvirtSettings(uri, marker), pool, imageVolume: 'base.qcow2', rootDiskGiB: 1, network };
  const provider = createLibvirtProvider(settings);
  const made: string[] = [];
  const volumes = async () =>
    (await virsh(uri, 'vol-list', pool))
      .split('\n')
      .slice(2)
      .map((line) => line.trim().split(/\s+/)[0])
      .filter(Boolean);
  const create = async (p: ReturnType<typeof pod>, withSettings = provider) => {
    const vm = await withSettings.create(p);
    made.push(p.name);
    return vm;
  };
  /** A file of the ISO volume, read back through libvirt and xorriso. */
  const isoFile = async (volume: string, file: string) => {
    const iso = join(dir, `${volume}.download`);
    await virsh(uri, 'vol-download', '--pool', pool, volume, iso);
    const out = join(dir, `${volume}-${file}`);
    await capture('xorriso', ['-osirrox', 'on', '-indev', iso, '-extract', `/${file}`, out]);
    return readFileSync(out, 'utf8');
  };

  beforeAll(async () => {
    // QEMU runs as libvirt's own user: it must reach the volumes (mkdtemp makes the directory 0700).
    chmodSync(dir, 0o755);
    await capture('qemu-img', ['create', '-f', 'qcow2', join(dir, 'base.qcow2'), '32M']);
    await virsh(uri, 'pool-create-as', pool, 'dir', '--target', dir);
    // An isolated network (no DHCP, so no dnsmasq), the bridge's name left to libvirt.
    writeFileSync(join(dir, 'net.xml'), `<network><name>${network}</name></network>`);
    await virsh(uri, 'net-create', join(dir, 'net.xml'));
  });
  afterAll(async () => {
    for (const name of made) {
      await virsh(uri, 'destroy', name).catch(() => undefined);
      await virsh(uri, 'undefine', name).catch(() => undefined);
    }
    await virsh(uri, 'net-destroy', network).catch(() => undefined);
    await virsh(uri, 'pool-destroy', pool).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('has a qcow2 root volume backed by the image, the cloud-init ISO with the pod identity, and a NIC on LIBVIRT_NET', async () => {
    const p = pod();
    const { instanceId } = await create(p);
    const root = await virsh(uri, 'vol-dumpxml', '--pool', pool, `${p.name}-root.qcow2`);
    expect(root).toMatch(/<format type='qcow2'\/>/);
    expect(/<backingStore>\s*<path>([^<]+)<\/path>\s*<format type='qcow2'\/>/.exec(root)?.[1]).toBe(
      join(dir, 'base.qcow2'),
    );
    // LIBVIRT_ROOT_DISK_SIZE in GiB, above the 32 MiB image.
    expect(/<capacity unit='bytes'>(\d+)</.exec(root)?.[1]).toBe(String(1024 ** 3));

    const userData = await isoFile(`${p.name}-cloudinit.iso`, 'user-data');
    expect(userData.split('\n')[0]).toBe('#cloud-config');
    const [file] = (
      JSON.parse(userData.slice('#cloud-config'.length)) as { write_files: { path: string; content: string }[] }
    ).write_files;
    expect(file!.path).toBe('/run/peerpod/steward-pod.json');
    expect(JSON.parse(file!.content)).toEqual({
      'pod-namespace': 'default',
      'pod-name': p.podName,
      'pod-uid': p.podUid,
    });
    expect(JSON.parse(await isoFile(`${p.name}-cloudinit.iso`, 'meta-data'))).toEqual(
      expect.objectContaining({ 'local-hostname': p.name }),
    );

    const disks = await virsh(uri, 'domblklist', instanceId);
    expect(disks).toContain(join(dir, `${p.name}-root.qcow2`));
    expect(disks).toContain(join(dir, `${p.name}-cloudinit.iso`));
    expect(await virsh(uri, 'domiflist', instanceId)).toMatch(new RegExp(`network\\s+${network}\\s+virtio`));
    expect((await virsh(uri, 'domstate', instanceId)).trim()).toBe('running');
  });

  it('a repeated create (lost reply) makes no second volume', async () => {
    const p = pod();
    const first = await create(p);
    const before = await volumes();
    expect(await provider.create(p)).toEqual(first);
    expect(await volumes()).toEqual(before);
    expect(before.filter((v) => v!.startsWith(p.name))).toEqual([`${p.name}-cloudinit.iso`, `${p.name}-root.qcow2`]);
  });

  it('a network that does not exist: the VM is made, with its volumes and without a NIC', async () => {
    const p = pod();
    const { instanceId } = await create(p, createLibvirtProvider({ ...settings, network: `${id}-absent` }));
    expect(await virsh(uri, 'domblklist', instanceId)).toContain(`${p.name}-root.qcow2`);
    expect(await virsh(uri, 'domiflist', instanceId)).not.toMatch(/network/);
  });

  it('an image volume that is not in the pool is a non-retryable CloudInvalidRequest naming it, and nothing is made', async () => {
    const p = pod();
    const before = await volumes();
    const missing = createLibvirtProvider({ ...settings, imageVolume: 'no-such-image.qcow2' });
    const failure = await failureOf(missing.create(p));
    expect(failure.type).toBe('CloudInvalidRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('no volume "no-such-image.qcow2" in pool');
    expect(failure.message).toContain('LIBVIRT_VOL_NAME');
    expect(await volumes()).toEqual(before);
    await expect(virsh(uri, 'dominfo', p.name)).rejects.toThrow();
  });
});

describe('aws specifics', () => {
  it('RunInstances carries a ClientToken derived from the pod UID (moto records it, EC2 honours it)', async () => {
    const { provider } = awsBackend();
    const { endpoint, region } = stackInfo().ec2;
    const p = pod();
    const { instanceId } = await provider.create(p);
    try {
      const reply = await new EC2Client({ region, endpoint }).send(
        new DescribeInstancesCommand({ InstanceIds: [instanceId] }),
      );
      const token = reply.Reservations?.[0]?.Instances?.[0]?.ClientToken;
      expect(token).toBe(clientToken(p));
      expect(token!.startsWith(p.podUid)).toBe(true);
      expect(token!.length).toBeLessThanOrEqual(64);
    } finally {
      await provider.delete({ instanceId });
    }
  });

  it("the instance carries the user data (base64, the pod's identity), cloud-api-adaptor's TAGS and Steward's tags", async () => {
    const { endpoint, region } = stackInfo().ec2;
    const ec2 = new EC2Client({ region, endpoint });
    const provider = createAwsProvider({
      region,
      endpoint,
      imageId: TEST_AMI,
      instanceType: 't3.micro',
      securityGroupIds: [],
      tags: { team: 'peerpods', [tagKeys.marker]: 'not-this' },
      marker,
    });
    const p = pod();
    const { instanceId } = await provider.create(p);
    try {
      const { UserData } = await ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: instanceId, Attribute: 'userData' }),
      );
      const userData = Buffer.from(UserData!.Value!, 'base64').toString();
      expect(userData.split('\n')[0]).toBe('#cloud-config');
      expect(userData).toContain(`\\"pod-uid\\": \\"${p.podUid}\\"`);
      const reply = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      const tags = reply.Reservations![0]!.Instances![0]!.Tags!;
      for (const [Key, Value] of Object.entries({
        Name: p.name,
        team: 'peerpods',
        [tagKeys.marker]: marker,
        [tagKeys.podUid]: p.podUid,
      }))
        expect(tags).toContainEqual({ Key, Value });
      expect(tags).not.toContainEqual({ Key: tagKeys.marker, Value: 'not-this' });
    } finally {
      await provider.delete({ instanceId });
    }
  });

  it('identity is aws:<account>:<region>, the same on every call and for every provider of this cloud', async () => {
    const { provider } = awsBackend();
    const { region } = stackInfo().ec2;
    const identity = await provider.identity();
    expect(identity).toMatch(new RegExp(`^aws:\\d{12}:${region}$`));
    expect(await provider.identity()).toBe(identity);
    expect(await awsBackend().provider.identity()).toBe(identity);
  });

  it('identity of an unreachable endpoint is a retryable CloudUnavailable (STS uses the EC2 client settings)', async () => {
    const failure = await failureOf(awsBackend().unreachable().identity());
    expect(failure.type).toBe('CloudUnavailable');
    expect(failure.nonRetryable).toBe(false);
  });

  it('resolveRecordedId passes an EC2 instance ID and refuses a numeric libvirt domain ID', async () => {
    const { provider } = awsBackend();
    expect(await provider.resolveRecordedId({ instanceId: 'i-0123456789abcdef0', podName: 'web' })).toEqual({
      instanceId: 'i-0123456789abcdef0',
    });
    const failure = await failureOf(provider.resolveRecordedId({ instanceId: '7', podName: 'web' }));
    expect(failure.type).toBe('CloudInvalidRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('"7"');
  });

  describe('Elastic IPs (upstream allocates one per multi-NIC VM with a public IP)', () => {
    const { endpoint, region } = stackInfo().ec2;
    const ec2 = new EC2Client({ region, endpoint });
    const allocations: string[] = [];
    afterAll(async () => {
      for (const AllocationId of allocations)
        await ec2.send(new ReleaseAddressCommand({ AllocationId })).catch(() => undefined);
    });
    /** An address allocated and associated to the instance, as upstream does; its allocation ID. */
    const associated = async (instanceId: string) => {
      const { AllocationId } = await ec2.send(new AllocateAddressCommand({ Domain: 'vpc' }));
      allocations.push(AllocationId!);
      await ec2.send(new AssociateAddressCommand({ AllocationId, InstanceId: instanceId }));
      return AllocationId!;
    };
    const allocated = async (allocationId: string) => {
      const { Addresses = [] } = await ec2.send(
        new DescribeAddressesCommand({ Filters: [{ Name: 'allocation-id', Values: [allocationId] }] }),
      );
      return Addresses.length > 0;
    };

    it('delete releases the instance address; a second delete is absent', async () => {
      const { provider } = awsBackend();
      const { instanceId } = await provider.create(pod());
      const allocationId = await associated(instanceId);
      expect(await allocated(allocationId)).toBe(true);

      expect(await provider.delete({ instanceId })).toEqual({ outcome: 'deleted' });
      expect(await allocated(allocationId)).toBe(false);
      expect(await provider.delete({ instanceId })).toEqual({ outcome: 'absent' });
    });

    it('a delete retried after the instance is terminated still releases the address the first attempt could not', async () => {
      // The first ReleaseAddress fails as EC2 does when it throttles, after TerminateInstances succeeded.
      const client = new EC2Client({ region, endpoint });
      let failures = 1;
      client.middlewareStack.add(
        (next, context) => (args) => {
          if (context.commandName === 'ReleaseAddressCommand' && failures-- > 0)
            throw Object.assign(new Error('Request limit exceeded.'), { name: 'RequestLimitExceeded' });
          return next(args);
        },
        { step: 'initialize' },
      );
      const provider = createAwsProvider(
        { region, endpoint, imageId: TEST_AMI, instanceType: 't3.micro', securityGroupIds: [], marker },
        client,
      );
      const { instanceId } = await provider.create(pod());
      const allocationId = await associated(instanceId);

      const failure = await failureOf(provider.delete({ instanceId }));
      expect(failure.type).toBe('CloudThrottled');
      expect(await provider.get({ instanceId })).toEqual({ exists: false });
      expect(await allocated(allocationId)).toBe(true);

      expect(await provider.delete({ instanceId })).toEqual({ outcome: 'absent' });
      expect(await allocated(allocationId)).toBe(false);
    });
  });
});
