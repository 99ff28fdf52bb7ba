// Direct access to the test stack's cloud backends, bypassing Steward's code: what tests compare Steward's work
// against (the pod UID as the backend records it, VMs counted by the backend itself, out-of-band deletes).
import {
  DescribeInstancesCommand,
  EC2Client,
  RunInstancesCommand,
  StopInstancesCommand,
  TerminateInstancesCommand,
} from '@aws-sdk/client-ec2';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PODVM_STORAGE, virsh } from '../../deploy/local/libvirt';
import type { StackInfo } from '../../deploy/local/stack';
import { createAwsProvider } from '../../activities/cloud/aws';
import { createLibvirtProvider, METADATA_NAMESPACE, type LibvirtSettings } from '../../activities/cloud/libvirt';
import { type CloudProvider, tagKeys } from '../../activities/cloud/provider';

// moto accepts any credentials; the SDK's default chain reads these.
process.env.AWS_ACCESS_KEY_ID ??= 'steward-test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'steward-test';

/** An AMI moto knows. */
export const TEST_AMI = 'ami-12c6146b';

// Domain files are tiny; the OS cleans the temporary directory.
const xmlDir = mkdtempSync(join(tmpdir(), 'steward-test-'));
/** A domain without Steward's metadata, as virsh takes it: from a file. */
export const plainDomainFile = (name: string) => {
  const file = join(xmlDir, `${name}.xml`);
  writeFileSync(
    file,
    `<domain type='qemu'><name>${name}</name><memory unit='MiB'>64</memory><vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices></domain>`,
  );
  return file;
};

export const libvirtSettings = (uri: string, marker: string): LibvirtSettings => ({
  uri,
  domainType: 'qemu',
  memoryMiB: 64,
  vcpus: 1,
  emulator: '/usr/bin/qemu-system-x86_64',
  // What the embedded stack's libvirtd holds (deploy/local/libvirt.ts); no network, so VMs are made without a NIC.
  ...PODVM_STORAGE,
  rootDiskGiB: 1,
  network: 'default',
  marker,
  concurrency: 4,
  timeoutMs: 60_000,
});

/** VM create and delete times (ms) of each round, the way under test and with virsh alone. */
export interface VmTimings {
  create: number[];
  delete: number[];
  virshCreate: number[];
  virshDelete: number[];
}

const timed = async (call: () => Promise<unknown>) => {
  const start = performance.now();
  await call();
  return performance.now() - start;
};

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Times `rounds` VMs created and deleted the way under test (`round(i)`: `create`, then `remove`), each followed by a
 * plain domain `domain` defined and started, then destroyed and undefined, with virsh alone: the baseline.
 */
export async function timeAgainstVirsh(
  uri: string,
  rounds: number,
  round: (i: number) => { domain: string; create: () => Promise<unknown>; remove: () => Promise<unknown> },
): Promise<VmTimings> {
  const times: VmTimings = { create: [], delete: [], virshCreate: [], virshDelete: [] };
  for (let i = 0; i < rounds; i++) {
    const { domain, create, remove } = round(i);
    times.create.push(await timed(create));
    times.delete.push(await timed(remove));
    const file = plainDomainFile(domain);
    times.virshCreate.push(
      await timed(async () => (await virsh(uri, 'define', file), await virsh(uri, 'start', domain))),
    );
    times.virshDelete.push(
      await timed(async () => (await virsh(uri, 'destroy', domain), await virsh(uri, 'undefine', domain))),
    );
  }
  return times;
}

/** What each case needs besides the provider: direct access to the backend, bypassing Steward's code. */
export interface Backend {
  provider: CloudProvider;
  /** The pod UID as the backend itself records it on the VM. */
  recordedPodUid(instanceId: string): Promise<string | undefined>;
  /** VMs (not gone) that carry this pod UID, counted by the backend itself. */
  countForPod(podUid: string): Promise<number>;
  deleteOutOfBand(instanceId: string): Promise<void>;
  /** The VM powered off as its host's restart or an operator would (libvirt: destroyed, still defined; EC2: stopped). */
  stopOutOfBand(instanceId: string): Promise<void>;
  /** A VM made without Steward's marker; returns its id. */
  createUnmarked(name: string): Promise<string>;
  /** A provider whose backend cannot be reached. */
  unreachable(): CloudProvider;
}

export function libvirtBackend(info: Pick<StackInfo, 'libvirt'>, marker: string): Backend {
  const { uri } = info.libvirt;
  const metadataPodUid = async (uuid: string) => {
    const xml = await virsh(uri, 'metadata', uuid, METADATA_NAMESPACE).catch(() => '');
    return /<(?:\w+:)?podUid>([^<]*)</.exec(xml)?.[1];
  };
  return {
    provider: createLibvirtProvider(libvirtSettings(uri, marker)),
    recordedPodUid: metadataPodUid,
    async countForPod(podUid) {
      const uuids = (await virsh(uri, 'list', '--all', '--uuid')).split('\n').filter(Boolean);
      return (await Promise.all(uuids.map(metadataPodUid))).filter((uid) => uid === podUid).length;
    },
    async deleteOutOfBand(uuid) {
      // Undefined first (a running domain turns transient), then destroyed: gone in one step, never seen shut off in
      // between, where the worker's watch would start it again (it starts a live pod's VM found shut off).
      await virsh(uri, 'undefine', uuid);
      await virsh(uri, 'destroy', uuid).catch(() => undefined);
    },
    async stopOutOfBand(uuid) {
      await virsh(uri, 'destroy', uuid);
    },
    async createUnmarked(name) {
      await virsh(uri, 'define', plainDomainFile(name));
      return (await virsh(uri, 'domuuid', name)).trim();
    },
    unreachable: () =>
      createLibvirtProvider({
        ...libvirtSettings(
          `qemu+unix:///system?socket=/tmp/steward-test-cloud-${randomUUID().slice(0, 8)}.sock`,
          marker,
        ),
        timeoutMs: 10_000,
      }),
  };
}

export function awsBackend(info: Pick<StackInfo, 'ec2'>, marker: string): Backend {
  const { endpoint, region } = info.ec2;
  const ec2 = new EC2Client({ region, endpoint });
  const settings = { region, endpoint, imageId: TEST_AMI, instanceType: 't3.micro', securityGroupIds: [], marker };
  const tag = async (instanceId: string, key: string) => {
    const reply = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    return reply.Reservations?.[0]?.Instances?.[0]?.Tags?.find((t) => t.Key === key)?.Value;
  };
  return {
    provider: createAwsProvider(settings),
    recordedPodUid: (instanceId) => tag(instanceId, tagKeys.podUid),
    async countForPod(podUid) {
      const reply = await ec2.send(
        new DescribeInstancesCommand({ Filters: [{ Name: `tag:${tagKeys.podUid}`, Values: [podUid] }] }),
      );
      const instances = (reply.Reservations ?? []).flatMap((r) => r.Instances ?? []);
      return instances.filter((i) => i.State?.Name !== 'terminated').length;
    },
    async deleteOutOfBand(instanceId) {
      await ec2.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
    },
    async stopOutOfBand(instanceId) {
      await ec2.send(new StopInstancesCommand({ InstanceIds: [instanceId] }));
    },
    async createUnmarked(name) {
      const reply = await ec2.send(
        new RunInstancesCommand({
          ImageId: settings.imageId,
          MinCount: 1,
          MaxCount: 1,
          TagSpecifications: [
            {
              ResourceType: 'instance',
              Tags: [
                { Key: 'Name', Value: name },
                { Key: tagKeys.podUid, Value: randomUUID() },
              ],
            },
          ],
        }),
      );
      return reply.Instances![0]!.InstanceId!;
    },
    unreachable: () =>
      createAwsProvider(
        { ...settings, endpoint: 'http://127.0.0.1:9' },
        new EC2Client({ region, endpoint: 'http://127.0.0.1:9', maxAttempts: 1 }),
      ),
  };
}
