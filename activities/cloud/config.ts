// Which cloud holds peer-pod VMs, and its settings, from flags or environment variables like every other setting.
// Credentials are not settings here: the AWS SDK reads them itself (default chain), so no config object holds them.
// cloud-api-adaptor's keys (peer-pods-cm, peer-pods-secret) are read under their own names, as a setting's variable or
// its alias; the flags, variables and defaults are those of src/cloud-providers/{libvirt,aws}/manager.go there.
import { z } from 'zod';
import { duration, parseSettings, settingLabel, whole, type Flags, type Setting } from '../../platform/settings';
import { cloudName, cloudProviderSetting } from '../../platform/peerpod-clouds';
import type { AwsSettings } from './aws';
import { createLibvirtProvider, type LibvirtSettings } from './libvirt';
import { type CloudProvider, DEFAULT_MARKER } from './provider';

/** cloud-api-adaptor's LIBVIRT_URI default (src/cloud-providers/libvirt/manager.go `defaultURI`). */
export const LIBVIRT_DEFAULT_URI = 'qemu+ssh://root@192.168.122.1/system?no_verify=1';

export const cloudSettings = {
  cloudProvider: cloudProviderSetting,
  cloudMarker: {
    env: 'STEWARD_CLOUD_MARKER',
    arg: 'value',
    default: DEFAULT_MARKER,
    description:
      "value of the steward.dev/managed-by tag on this installation's VMs; the sweeper touches only VMs with it",
  },
  // A duration as every other one is written; the former name, in seconds, is still read with a warning.
  vmWatchInterval: {
    env: 'STEWARD_VM_WATCH_INTERVAL',
    arg: 'duration',
    default: '5s',
    description:
      "how often the worker looks at its peer-pod VMs' power states, so that a VM shut off, crashed or gone is seen within that time, e.g. 5s (0: only at each peer pod's drift check)",
    formerFlag: 'vm-watch-seconds',
    formerEnv: 'STEWARD_VM_WATCH_SECONDS',
    formerUnit: 's',
  },
  libvirtUri: {
    env: 'LIBVIRT_URI',
    arg: 'uri',
    // cloud-api-adaptor's default, so that its ConfigMap without the key means the same host to both.
    default: LIBVIRT_DEFAULT_URI,
    description:
      "libvirt connection URI (libvirt); qemu+ssh logs in with ~/.ssh/id_rsa (ssh-key-secret) unless keyfile= says otherwise, and no_verify=1 accepts the host's key unchecked",
  },
  libvirtDomainType: {
    env: 'STEWARD_LIBVIRT_DOMAIN_TYPE',
    arg: 'type',
    default: 'qemu',
    description: 'domain type: qemu (software emulation) or kvm (libvirt)',
  },
  libvirtEmulator: {
    env: 'STEWARD_LIBVIRT_EMULATOR',
    arg: 'file',
    default: '/usr/bin/qemu-system-x86_64',
    description: 'QEMU binary on the libvirt host (libvirt)',
  },
  // cloud-api-adaptor's keys and defaults (src/cloud-providers/libvirt/manager.go).
  libvirtPool: {
    env: 'LIBVIRT_POOL',
    arg: 'pool',
    default: 'default',
    description: "storage pool of pod VMs' volumes and of the pod-VM image (libvirt)",
  },
  libvirtVolName: {
    env: 'LIBVIRT_VOL_NAME',
    arg: 'volume',
    default: 'podvm-base.qcow2',
    description: "pod-VM image: the volume in the pool each pod VM's root disk is backed by (libvirt)",
  },
  libvirtRootDiskSize: {
    env: 'LIBVIRT_ROOT_DISK_SIZE',
    arg: 'GiB',
    default: '10',
    description: "size of a pod VM's root disk, never below the image's (libvirt; 0 means the default)",
  },
  libvirtNet: {
    env: 'LIBVIRT_NET',
    arg: 'network',
    default: 'default',
    description:
      "libvirt network of a pod VM's NIC; when it does not exist, the VM is made without a NIC and a warning logged (libvirt)",
  },
  podvmMemoryMib: {
    env: 'STEWARD_PODVM_MEMORY_MIB',
    alias: 'LIBVIRT_MEMORY',
    aliasOf: "cloud-api-adaptor's",
    arg: 'MiB',
    // Not cloud-api-adaptor's 8192: VMs made by Steward serve tests and demos (README), where 64 MiB boots no image.
    default: '64',
    description: 'memory of a pod VM (libvirt)',
  },
  podvmVcpus: {
    env: 'STEWARD_PODVM_VCPUS',
    alias: 'LIBVIRT_CPU',
    aliasOf: "cloud-api-adaptor's",
    arg: 'n',
    default: '1',
    description: 'vCPUs of a pod VM (libvirt)',
  },
  awsRegion: { env: 'AWS_REGION', arg: 'region', description: 'EC2 region (aws; required)' },
  awsEndpointUrl: {
    env: 'AWS_ENDPOINT_URL',
    arg: 'url',
    description: 'EC2-compatible endpoint instead of the regional one (aws)',
  },
  podvmImage: {
    env: 'STEWARD_PODVM_IMAGE',
    alias: 'PODVM_AMI_ID',
    aliasOf: "cloud-api-adaptor's",
    arg: 'ami',
    description: 'image (AMI id) of a pod VM (aws; required to make VMs, not to track and delete them)',
  },
  podvmInstanceType: {
    env: 'STEWARD_PODVM_INSTANCE_TYPE',
    alias: 'PODVM_INSTANCE_TYPE',
    aliasOf: "cloud-api-adaptor's",
    arg: 'type',
    default: 'm6a.large',
    description: 'instance type of a pod VM (aws)',
  },
  awsSubnetId: { env: 'AWS_SUBNET_ID', arg: 'id', description: 'subnet of pod VMs (aws; default subnet when unset)' },
  awsSecurityGroupIds: {
    env: 'AWS_SG_IDS',
    arg: 'ids',
    description: 'comma-separated security groups of pod VMs (aws)',
  },
  awsTags: {
    env: 'TAGS',
    arg: 'k=v,…',
    description: "comma-separated key=value tags on every pod VM, cloud-api-adaptor's TAGS (aws)",
  },
} satisfies Record<string, Setting>;

export type CloudConfig = (
  | { provider: 'libvirt'; libvirt: LibvirtSettings }
  | { provider: 'aws'; aws: AwsSettings }
) & {
  /** How often the worker looks at the VMs' power states (vm-watch.ts), in ms; 0: never. */
  watchMs: number;
};

const schema = z
  .object({
    cloudProvider: cloudName,
    vmWatchInterval: duration.pipe(
      z.number().refine((ms) => ms === 0 || (ms >= 1_000 && ms <= 3_600_000), 'must be 0 or from 1s to 1h'),
    ),
    cloudMarker: z.string().regex(/^[A-Za-z0-9_.:/=+@-]{1,63}$/, 'must be 1 to 63 letters, digits or _ . : / = + @ -'),
    libvirtUri: z.string().regex(/^[a-z0-9+]+:\/\//, {
      error: (issue) => `must be a libvirt URI such as qemu:///system, got "${String(issue.input)}"`,
    }),
    libvirtDomainType: z.enum(['qemu', 'kvm'], {
      error: (issue) => `must be qemu or kvm, got "${String(issue.input)}"`,
    }),
    libvirtEmulator: z.string().startsWith('/', 'must be an absolute path'),
    libvirtPool: z.string().min(1),
    libvirtVolName: z.string().min(1),
    // 0 is the default, as upstream's normalizeRootDiskSize has it.
    libvirtRootDiskSize: whole(0, 64 * 1024).transform((gib) => gib || 10),
    libvirtNet: z.string().min(1),
    podvmMemoryMib: whole(16, 1024 * 1024),
    podvmVcpus: whole(1, 256),
    awsRegion: z
      .string()
      .regex(/^[a-z0-9-]+$/, 'must be a region name such as us-east-1')
      .optional(),
    awsEndpointUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    podvmImage: z.string().min(1).optional(),
    podvmInstanceType: z.string().min(1),
    awsSubnetId: z.string().min(1).optional(),
    awsSecurityGroupIds: z.string().optional(),
    awsTags: z
      .string()
      .regex(/^\s*([^=,]+=[^,]*(,\s*[^=,]+=[^,]*)*)?\s*$/, 'must be key=value pairs separated by commas')
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (v.cloudProvider !== 'aws') return;
    // The image is not: only making a VM needs it (aws/create.ts says so then), and beside cloud-api-adaptor none is.
    if (!v.awsRegion)
      ctx.addIssue({
        code: 'custom',
        path: ['awsRegion'],
        message: `is required with ${settingLabel('cloudProvider', cloudSettings.cloudProvider)} aws`,
      });
  });

/** The cloud's settings; libvirt when none is named (the worker asks only when one is: activities/config.ts). */
export function loadCloudConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): CloudConfig {
  const settings = { ...cloudSettings, cloudProvider: { ...cloudSettings.cloudProvider, default: 'libvirt' } };
  const v = parseSettings(settings, schema, flags, env);
  if (v.cloudProvider === 'aws') {
    return {
      provider: 'aws',
      watchMs: v.vmWatchInterval,
      aws: {
        region: v.awsRegion!,
        endpoint: v.awsEndpointUrl,
        imageId: v.podvmImage,
        instanceType: v.podvmInstanceType,
        subnetId: v.awsSubnetId,
        securityGroupIds: (v.awsSecurityGroupIds ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        tags: Object.fromEntries(
          (v.awsTags ?? '')
            .split(',')
            .filter((pair) => pair.trim())
            .map((pair) => pair.split('=').map((s) => s.trim()) as [string, string]),
        ),
        marker: v.cloudMarker,
      },
    };
  }
  return {
    provider: 'libvirt',
    watchMs: v.vmWatchInterval,
    libvirt: {
      uri: v.libvirtUri,
      domainType: v.libvirtDomainType,
      emulator: v.libvirtEmulator,
      memoryMiB: v.podvmMemoryMib,
      vcpus: v.podvmVcpus,
      pool: v.libvirtPool,
      imageVolume: v.libvirtVolName,
      rootDiskGiB: v.libvirtRootDiskSize,
      network: v.libvirtNet,
      marker: v.cloudMarker,
      concurrency: 4,
      timeoutMs: 60_000,
    },
  };
}

export function createCloudProvider(config: CloudConfig): CloudProvider {
  if (config.provider === 'libvirt') return createLibvirtProvider(config.libvirt);
  // Loaded only for aws: the AWS SDK added some 30 MB to every idle worker (docs/benchmarks.md).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createAwsProvider } = require('./aws') as typeof import('./aws');
  return createAwsProvider(config.aws);
}

/**
 * What an operator must hear of the cloud settings, once at start. cloud-api-adaptor's default URI says no_verify=1,
 * which libvirt turns into ssh's StrictHostKeyChecking=no: any host answering at that address is taken for the
 * libvirt host, and a known_hosts beside the key no longer stops a changed one.
 */
export function cloudWarnings(config: CloudConfig): string[] {
  if (config.provider !== 'libvirt') return [];
  const uri = new URL(config.libvirt.uri);
  if (!uri.protocol.endsWith('+ssh:') || uri.searchParams.get('no_verify') !== '1') return [];
  return [
    `LIBVIRT_URI has no_verify=1: the SSH host key of ${uri.host} is not checked, so whoever answers there is taken for the libvirt host; to pin it, give known_hosts in ssh-key-secret and drop no_verify=1 (docs/peer-pods.md)`,
  ];
}
