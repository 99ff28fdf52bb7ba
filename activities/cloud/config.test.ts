import { execFileSync } from 'node:child_process';
import { ConfigError } from '../../platform/settings';
import { withStderr } from '../../test/support/stderr';
import { cloudWarnings, createCloudProvider, LIBVIRT_DEFAULT_URI, loadCloudConfig } from './config';
import { createInstance } from './aws/create';
import type { ApplicationFailure } from '@temporalio/common';
import { domainXml, parseMetadata } from './libvirt';

const problems = (env: NodeJS.ProcessEnv) => {
  try {
    loadCloudConfig({}, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('no ConfigError');
};

describe('cloud configuration', () => {
  it("defaults to libvirt with a tiny qemu domain, on cloud-api-adaptor's default host", () => {
    const config = loadCloudConfig({}, {});
    expect(config.provider).toBe('libvirt');
    expect(config).toMatchObject({
      libvirt: {
        uri: 'qemu+ssh://root@192.168.122.1/system?no_verify=1',
        domainType: 'qemu',
        memoryMiB: 64,
        vcpus: 1,
        marker: 'steward',
      },
    });
  });

  it.each([
    {
      what: 'an unknown provider names its variable',
      env: { STEWARD_CLOUD_PROVIDER: 'azure' },
      issue: /^--cloud-provider \/ STEWARD_CLOUD_PROVIDER: must be libvirt or aws, got "azure"/,
    },
    {
      what: 'aws needs a region',
      env: { STEWARD_CLOUD_PROVIDER: 'aws', STEWARD_PODVM_IMAGE: 'ami-1' },
      issue: /^--aws-region \/ AWS_REGION: is required with --cloud-provider \/ STEWARD_CLOUD_PROVIDER aws/,
    },
    {
      what: "cloud-api-adaptor's CLOUD_PROVIDER is checked as the setting is",
      env: { CLOUD_PROVIDER: 'azure' },
      issue: /^--cloud-provider \/ STEWARD_CLOUD_PROVIDER: must be libvirt or aws, got "azure"/,
    },
    {
      what: 'an alias beside its setting with another value is refused, naming whose name it is',
      env: { STEWARD_CLOUD_PROVIDER: 'aws', CLOUD_PROVIDER: 'libvirt', AWS_REGION: 'us-east-1' },
      issue:
        /^STEWARD_CLOUD_PROVIDER and CLOUD_PROVIDER \(cloud-api-adaptor's name for it\) are both set, to different values/,
    },
    {
      what: 'a domain type other than qemu or kvm is refused',
      env: { STEWARD_LIBVIRT_DOMAIN_TYPE: 'xen' },
      issue: /^--libvirt-domain-type \/ STEWARD_LIBVIRT_DOMAIN_TYPE: must be qemu or kvm/,
    },
    {
      what: 'memory must be a number',
      env: { STEWARD_PODVM_MEMORY_MIB: 'lots' },
      issue: /^--podvm-memory-mib \/ STEWARD_PODVM_MEMORY_MIB: must be a whole number/,
    },
    {
      what: 'the endpoint must be a URL',
      env: {
        STEWARD_CLOUD_PROVIDER: 'aws',
        AWS_REGION: 'us-east-1',
        STEWARD_PODVM_IMAGE: 'ami-1',
        AWS_ENDPOINT_URL: 'moto',
      },
      issue: /^--aws-endpoint-url \/ AWS_ENDPOINT_URL: must be an http\(s\) URL/,
    },
  ])('$what', ({ env, issue }) => {
    expect(problems(env)).toEqual([expect.stringMatching(issue)]);
  });

  it("libvirt pod VMs take cloud-api-adaptor's keys: pool, image volume, root disk, network, memory and CPUs", () => {
    const config = loadCloudConfig(
      {},
      {
        LIBVIRT_POOL: 'peerpods',
        LIBVIRT_VOL_NAME: 'podvm.qcow2',
        LIBVIRT_ROOT_DISK_SIZE: '0',
        LIBVIRT_NET: 'podnet',
        LIBVIRT_MEMORY: '2048',
        LIBVIRT_CPU: '2',
      },
    );
    expect(config).toMatchObject({
      provider: 'libvirt',
      libvirt: {
        pool: 'peerpods',
        imageVolume: 'podvm.qcow2',
        // 0 is upstream's default, 10 GiB (normalizeRootDiskSize).
        rootDiskGiB: 10,
        network: 'podnet',
        memoryMiB: 2048,
        vcpus: 2,
      },
    });
    expect(loadCloudConfig({}, {})).toMatchObject({
      provider: 'libvirt',
      libvirt: { pool: 'default', imageVolume: 'podvm-base.qcow2', network: 'default' },
    });
    expect(
      problems({ STEWARD_CLOUD_PROVIDER: 'aws', AWS_REGION: 'us-east-1', STEWARD_PODVM_IMAGE: 'ami-1', TAGS: 'team' }),
    ).toEqual([expect.stringMatching(/TAGS: must be key=value pairs/)]);
  });

  it('looks at the VMs every STEWARD_VM_WATCH_INTERVAL, a duration; the former STEWARD_VM_WATCH_SECONDS still read, with a warning', async () => {
    expect(loadCloudConfig({}, { STEWARD_VM_WATCH_INTERVAL: '1m' }).watchMs).toBe(60_000);
    expect(loadCloudConfig({}, { STEWARD_VM_WATCH_INTERVAL: '0' }).watchMs).toBe(0);
    const former = await withStderr(() => loadCloudConfig({}, { STEWARD_VM_WATCH_SECONDS: '10' }));
    expect(former).toEqual({
      result: expect.objectContaining({ watchMs: 10_000 }) as unknown,
      writes: ['warning: STEWARD_VM_WATCH_SECONDS is deprecated: use STEWARD_VM_WATCH_INTERVAL\n'],
    });
    expect(() => loadCloudConfig({}, { STEWARD_VM_WATCH_INTERVAL: '500ms' })).toThrow(
      '--vm-watch-interval / STEWARD_VM_WATCH_INTERVAL: must be 0 or from 1s to 1h',
    );
  });

  it('aws settings carry no credentials, even when the environment has them', () => {
    const config = loadCloudConfig(
      {},
      {
        STEWARD_CLOUD_PROVIDER: 'aws',
        AWS_REGION: 'eu-west-1',
        STEWARD_PODVM_IMAGE: 'ami-0abc',
        AWS_SG_IDS: 'sg-1, sg-2',
        TAGS: 'team=peerpods, env=dev',
        AWS_ACCESS_KEY_ID: 'AKIDSECRET',
        AWS_SECRET_ACCESS_KEY: 'very-secret',
      },
    );
    expect(config).toEqual({
      provider: 'aws',
      watchMs: 5_000,
      aws: {
        region: 'eu-west-1',
        endpoint: undefined,
        imageId: 'ami-0abc',
        instanceType: 'm6a.large',
        subnetId: undefined,
        securityGroupIds: ['sg-1', 'sg-2'],
        tags: { team: 'peerpods', env: 'dev' },
        marker: 'steward',
      },
    });
    expect(JSON.stringify(config)).not.toMatch(/SECRET|secret/);
  });
});

describe('the AWS SDK', () => {
  const loadsAwsSdk = (script: string) =>
    execFileSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: __dirname, encoding: 'utf8' }).trim();
  const awsModules = `Object.keys(require.cache).filter((m) => m.includes('@aws-sdk')).length`;

  it('is not loaded by a worker whose cloud is libvirt (it adds some 30 MB)', () => {
    expect(loadsAwsSdk(`require('../../cli/worker'); console.log(${awsModules})`)).toBe('0');
  });

  it('is loaded when the cloud is aws', () => {
    const provider = createCloudProvider(
      loadCloudConfig(
        {},
        {
          STEWARD_CLOUD_PROVIDER: 'aws',
          AWS_REGION: 'us-east-1',
          STEWARD_PODVM_IMAGE: 'ami-0123456789abcdef0',
        },
      ),
    );
    expect(provider.name).toBe('aws');
  });
});

describe('libvirt domain metadata', () => {
  it('round-trips the pod identity, escaped, through the domain XML', () => {
    const settings = {
      uri: 'qemu:///system',
      domainType: 'qemu' as const,
      memoryMiB: 64,
      vcpus: 1,
      emulator: '/usr/bin/qemu-system-x86_64',
      marker: 'steward',
      pool: 'default',
      imageVolume: 'podvm-base.qcow2',
      rootDiskGiB: 10,
      network: 'default',
      concurrency: 4,
      timeoutMs: 1000,
    };
    const xml = domainXml(
      settings,
      { name: 'podvm-a', podUid: 'u-1', podNamespace: 'ns', podName: 'a<&>"b' },
      '6f1c2d3e-0000-4000-8000-000000000001',
      { rootDisk: '/p/podvm-a-root.qcow2', cloudInitIso: '/p/podvm-a-cloudinit.iso' },
    );
    expect(parseMetadata(xml)).toEqual({ marker: 'steward', podUid: 'u-1', podNamespace: 'ns', podName: 'a<&>"b' });
  });

  it('finds none in a domain without Steward namespace', () => {
    expect(
      parseMetadata(
        '<domain><metadata><other:vm xmlns:other="urn:x"><other:podUid>u</other:podUid></other:vm></metadata></domain>',
      ),
    ).toBeUndefined();
  });
});

/** peer-pods-cm and peer-pods-secret as cloud-api-adaptor's chart writes them (templates/configmap.yaml, secrets.yaml). */
describe("cloud-api-adaptor's configuration, as its chart writes it", () => {
  const awsConfigMap = {
    CLOUD_PROVIDER: 'aws',
    AWS_REGION: 'eu-central-1',
    PODVM_AMI_ID: 'ami-0caa',
    PODVM_INSTANCE_TYPE: 't3.small',
    AWS_SUBNET_ID: 'subnet-1',
    AWS_SG_IDS: 'sg-1,sg-2',
    // Keys of its own that Steward does not read (docs/peer-pods.md lists them): present, and harmless.
    PEERPODS_LIMIT_PER_NODE: '10',
    DISABLECVM: 'false',
  };

  it.each([
    { key: 'CLOUD_PROVIDER', env: { CLOUD_PROVIDER: 'aws', AWS_REGION: 'us-east-1' }, read: { provider: 'aws' } },
    { key: 'PODVM_AMI_ID', env: { ...awsConfigMap }, read: { aws: { imageId: 'ami-0caa' } } },
    { key: 'PODVM_INSTANCE_TYPE', env: { ...awsConfigMap }, read: { aws: { instanceType: 't3.small' } } },
    { key: 'LIBVIRT_URI', env: { LIBVIRT_URI: 'qemu:///system' }, read: { libvirt: { uri: 'qemu:///system' } } },
    {
      key: 'LIBVIRT_MEMORY',
      env: { CLOUD_PROVIDER: 'libvirt', LIBVIRT_MEMORY: '8192' },
      read: { libvirt: { memoryMiB: 8192 } },
    },
    { key: 'LIBVIRT_CPU', env: { CLOUD_PROVIDER: 'libvirt', LIBVIRT_CPU: '2' }, read: { libvirt: { vcpus: 2 } } },
  ])('reads $key', ({ env, read }) => {
    expect(loadCloudConfig({}, env)).toMatchObject(read);
  });

  it('reads the whole aws ConfigMap, credentials left to the AWS SDK', () => {
    const secret = {
      AWS_ACCESS_KEY_ID: 'AKIDCAA',
      AWS_SECRET_ACCESS_KEY: 'caa-secret',
      AWS_SESSION_TOKEN: 'caa-token',
    };
    const config = loadCloudConfig({}, { ...awsConfigMap, ...secret });
    expect(config).toEqual({
      provider: 'aws',
      watchMs: 5_000,
      aws: {
        region: 'eu-central-1',
        endpoint: undefined,
        imageId: 'ami-0caa',
        instanceType: 't3.small',
        subnetId: 'subnet-1',
        securityGroupIds: ['sg-1', 'sg-2'],
        tags: {},
        marker: 'steward',
      },
    });
    expect(JSON.stringify(config)).not.toMatch(/AKIDCAA|caa-secret|caa-token/);
  });

  it('the same value under both names is taken', () => {
    expect(loadCloudConfig({}, { CLOUD_PROVIDER: 'libvirt', STEWARD_CLOUD_PROVIDER: 'libvirt' }).provider).toBe(
      'libvirt',
    );
  });

  it('aws without an image loads (tracking deletes VMs, makes none); making a VM then fails naming the setting', async () => {
    const withoutImage = { ...awsConfigMap, PODVM_AMI_ID: '' };
    const config = loadCloudConfig({}, withoutImage);
    expect(config).toMatchObject({ provider: 'aws', aws: { imageId: undefined } });
    if (config.provider !== 'aws') throw new Error('not aws');
    // Refused before any call to EC2: the client is never used.
    const ec2 = { settings: config.aws, client: {} as never, sts: {} as never };
    const input = { podUid: 'uid-1', podNamespace: 'default', podName: 'web', name: 'podvm-web-1' };
    const failure = await createInstance(ec2, input).then(
      () => undefined,
      (error: ApplicationFailure) => error,
    );
    expect(failure).toMatchObject({ type: 'CloudInvalidRequest', nonRetryable: true });
    expect(failure?.message).toMatch(/STEWARD_PODVM_IMAGE \(or cloud-api-adaptor's PODVM_AMI_ID\)/);
  });

  it.each([
    { uri: LIBVIRT_DEFAULT_URI, warns: true },
    { uri: 'qemu+ssh://root@libvirt-host:2222/system?no_verify=1&keyfile=/home/node/.ssh/id_rsa', warns: true },
    { uri: 'qemu+ssh://root@libvirt-host/system?keyfile=/home/node/.ssh/id_rsa', warns: false },
    { uri: 'qemu:///system?no_verify=1', warns: false },
  ])('takes LIBVIRT_URI $uri, warning at start that the host key is unchecked: $warns', ({ uri, warns }) => {
    const config = loadCloudConfig({}, { CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: uri });
    expect(config).toMatchObject({ libvirt: { uri } });
    const warnings = cloudWarnings(config);
    expect(warnings).toHaveLength(warns ? 1 : 0);
    if (warns) expect(warnings[0]).toMatch(/^LIBVIRT_URI has no_verify=1: the SSH host key of .* is not checked/);
  });
});
