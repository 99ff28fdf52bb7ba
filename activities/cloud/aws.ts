// The AWS provider: EC2 through the SDK v3 (and STS for the account). Region, endpoint and image come from
// configuration; credentials come from the SDK's default chain (environment, shared files, instance role), so they
// never pass through Steward's inputs, results or configuration objects.
import {
  CreateTagsCommand,
  DescribeAddressesCommand,
  DescribeInstancesCommand,
  DisassociateAddressCommand,
  EC2Client,
  paginateDescribeInstances,
  ReleaseAddressCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type Address,
  type Filter,
  type Instance,
  type InstanceStateName,
  type Tag,
} from '@aws-sdk/client-ec2';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { createHash } from 'node:crypto';
import { cloudFailure, type CloudFailureType, isCloudFailure } from './errors';
import { keptOnceRead } from './limit';
import {
  type CloudProvider,
  type CreateInstanceInput,
  type InstanceState,
  type MarkedInstance,
  tagKeys,
} from './provider';

export interface AwsSettings {
  region: string;
  /** An EC2-compatible endpoint (moto in tests); the SDK's regional endpoint when absent. */
  endpoint?: string;
  imageId: string;
  instanceType: string;
  subnetId?: string;
  securityGroupIds: string[];
  marker: string;
}

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

const codes: Record<string, CloudFailureType> = {
  RequestLimitExceeded: 'CloudThrottled',
  Throttling: 'CloudThrottled',
  ThrottlingException: 'CloudThrottled',
  InsufficientInstanceCapacity: 'CloudUnavailable',
  InstanceLimitExceeded: 'CloudQuotaExceeded',
  VcpuLimitExceeded: 'CloudQuotaExceeded',
  InsufficientFreeAddressesInSubnet: 'CloudQuotaExceeded',
  AuthFailure: 'CloudUnauthorized',
  UnauthorizedOperation: 'CloudUnauthorized',
  InvalidClientTokenId: 'CloudUnauthorized',
  SignatureDoesNotMatch: 'CloudUnauthorized',
  ExpiredToken: 'CloudUnauthorized',
  CredentialsProviderError: 'CloudUnauthorized',
  // ReleaseAddress right after DisassociateAddress, before the disassociation is visible: retrying succeeds.
  'InvalidIPAddress.InUse': 'CloudUnavailable',
};

const isCode = (error: unknown, code: string) => error instanceof Error && error.name === code;
const notFound = (error: unknown) => isCode(error, 'InvalidInstanceID.NotFound');

/**
 * Tag Steward puts on an instance's Elastic IPs before terminating it: the association goes with the instance, so a
 * retried delete finds the addresses an earlier attempt did not release by this tag.
 */
const RELEASE_WITH = 'steward.dev/release-with';

/** The SDK's error as a failure of the vocabulary: its code decides, then who is at fault. */
function failure(operation: string, error: unknown, instanceId?: string, service = 'EC2'): unknown {
  if (!(error instanceof Error) || isCloudFailure(error)) return error;
  const meta = error as Error & { $fault?: 'client' | 'server'; $metadata?: { httpStatusCode?: number } };
  // A client-side fault with an HTTP status is a refused request; no status at all is a network or timeout error.
  const refused =
    meta.$fault === 'client' &&
    (meta.$metadata?.httpStatusCode ?? 0) < 500 &&
    meta.$metadata?.httpStatusCode !== undefined;
  const type = codes[error.name] ?? (refused ? 'CloudInvalidRequest' : 'CloudUnavailable');
  return cloudFailure(
    type,
    `${service} ${operation}: ${error.name}: ${error.message}`,
    { provider: 'aws', operation, code: error.name, instanceId },
    error,
  );
}

/**
 * Idempotency token of RunInstances (at most 64 ASCII characters): the pod UID, readable, plus the name, so a VM
 * created again for the same pod after an out-of-band deletion gets a new token (EC2 would otherwise answer with
 * the terminated instance).
 */
export const clientToken = (input: Pick<CreateInstanceInput, 'podUid' | 'name'>) =>
  `${input.podUid}-${createHash('sha256').update(input.name).digest('hex')}`.slice(0, 64);

const states: Partial<Record<InstanceStateName, InstanceState>> = {
  pending: 'pending',
  running: 'running',
  stopping: 'stopping',
  stopped: 'stopped',
  'shutting-down': 'deleting',
};
const live: InstanceStateName[] = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];

const tagIn = (tags: Tag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value;
const tagOf = (instance: Instance, key: string) => tagIn(instance.Tags, key);

export function createAwsProvider(
  settings: AwsSettings,
  client = new EC2Client({ region: settings.region, endpoint: settings.endpoint }),
): CloudProvider {
  // The EC2 client's own settings, so both see the same account, region and endpoint (moto serves STS there too).
  const { region, endpoint, credentials, maxAttempts } = client.config;
  const sts = new STSClient({ region, endpoint, credentials, maxAttempts });

  const checkId = (operation: string, instanceId: string) => {
    if (!INSTANCE_ID.test(instanceId)) {
      throw cloudFailure('CloudInvalidRequest', `EC2 ${operation}: "${instanceId}" is not an instance ID`, {
        provider: 'aws',
        operation,
        instanceId,
      });
    }
  };

  const marked = (instance: Instance): MarkedInstance[] => {
    const podUid = tagOf(instance, tagKeys.podUid);
    if (!instance.InstanceId || !podUid || tagOf(instance, tagKeys.marker) !== settings.marker) return [];
    return [
      {
        instanceId: instance.InstanceId,
        name: tagOf(instance, 'Name'),
        podUid,
        podNamespace: tagOf(instance, tagKeys.podNamespace),
        podName: tagOf(instance, tagKeys.podName),
      },
    ];
  };

  const describe = async (operation: string, filters: Filter[]): Promise<MarkedInstance[]> => {
    const Filters = [
      { Name: `tag:${tagKeys.marker}`, Values: [settings.marker] },
      { Name: 'instance-state-name', Values: live },
      ...filters,
    ];
    try {
      const found: MarkedInstance[] = [];
      for await (const page of paginateDescribeInstances({ client }, { Filters })) {
        for (const reservation of page.Reservations ?? [])
          for (const instance of reservation.Instances ?? []) found.push(...marked(instance));
      }
      return found;
    } catch (error) {
      throw failure(operation, error);
    }
  };

  const findByPodUid = (podUid: string) =>
    describe('findByPodUid', [{ Name: `tag:${tagKeys.podUid}`, Values: [podUid] }]);

  const readIdentity = async () => {
    try {
      const [{ Account }, regionName] = await Promise.all([sts.send(new GetCallerIdentityCommand({})), region()]);
      if (!Account || !/^\d{12}$/.test(Account)) {
        throw cloudFailure('CloudBadResponse', `STS GetCallerIdentity answered without an account ID`, {
          provider: 'aws',
          operation: 'identity',
        });
      }
      return `aws:${Account}:${regionName}`;
    } catch (error) {
      throw failure('identity', error, undefined, 'STS');
    }
  };

  /**
   * The instance's Elastic IPs (upstream allocates one for a multi-NIC VM with a public IP), tagged for release. One
   * unfiltered call: DescribeAddresses is not paged, accounts hold few addresses, and its filters cannot say "this
   * instance or this tag". An address now on another instance is not this instance's, whatever its tag says.
   */
  const addressesToRelease = async (instanceId: string): Promise<Address[]> => {
    const { Addresses = [] } = await client.send(new DescribeAddressesCommand({}));
    const found = Addresses.filter(
      (a) =>
        a.AllocationId &&
        (a.InstanceId === instanceId || (!a.InstanceId && tagIn(a.Tags, RELEASE_WITH) === instanceId)),
    );
    const untagged = found.filter((a) => tagIn(a.Tags, RELEASE_WITH) !== instanceId).map((a) => a.AllocationId!);
    if (untagged.length)
      await client.send(
        new CreateTagsCommand({ Resources: untagged, Tags: [{ Key: RELEASE_WITH, Value: instanceId }] }),
      );
    return found;
  };

  /** Idempotent: an association or address already gone is done. */
  const release = async ({ AllocationId, AssociationId }: Address) => {
    const unless = (code: string) => (error: unknown) => {
      if (!isCode(error, code)) throw error;
    };
    // The instance is still shutting down, holding its address, when TerminateInstances returns.
    if (AssociationId)
      await client
        .send(new DisassociateAddressCommand({ AssociationId }))
        .catch(unless('InvalidAssociationID.NotFound'));
    await client.send(new ReleaseAddressCommand({ AllocationId })).catch(unless('InvalidAllocationID.NotFound'));
  };

  return {
    name: 'aws',

    async create(input) {
      // The ClientToken makes a repeated RunInstances return the first instance on EC2; the lookup by tag does the
      // same where the token is not honoured (moto ignores it) or has expired.
      const earlier = (await findByPodUid(input.podUid)).find((instance) => instance.name === input.name);
      if (earlier) return { instanceId: earlier.instanceId };
      const tags = {
        ...input.tags,
        Name: input.name,
        [tagKeys.marker]: settings.marker,
        [tagKeys.podUid]: input.podUid,
        [tagKeys.podNamespace]: input.podNamespace,
        [tagKeys.podName]: input.podName,
      };
      try {
        const reply = await client.send(
          new RunInstancesCommand({
            ImageId: settings.imageId,
            InstanceType: settings.instanceType as never,
            MinCount: 1,
            MaxCount: 1,
            ClientToken: clientToken(input),
            SubnetId: settings.subnetId,
            SecurityGroupIds: settings.securityGroupIds.length ? settings.securityGroupIds : undefined,
            TagSpecifications: [
              { ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) },
            ],
          }),
        );
        const instanceId = reply.Instances?.[0]?.InstanceId;
        if (!instanceId)
          throw cloudFailure('CloudBadResponse', 'EC2 RunInstances answered without an instance', {
            provider: 'aws',
            operation: 'create',
          });
        return { instanceId };
      } catch (error) {
        throw failure('create', error);
      }
    },

    async delete({ instanceId }) {
      checkId('delete', instanceId);
      try {
        // Found before terminating (the association goes with the instance), released after, so a VM whose
        // termination fails keeps its address.
        const addresses = await addressesToRelease(instanceId);
        let outcome: 'deleted' | 'absent';
        try {
          const reply = await client.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
          // Terminated instances stay visible for about an hour; terminating one again changes nothing.
          outcome = reply.TerminatingInstances?.[0]?.PreviousState?.Name === 'terminated' ? 'absent' : 'deleted';
        } catch (error) {
          if (!notFound(error)) throw error;
          outcome = 'absent';
        }
        for (const address of addresses) await release(address);
        return { outcome };
      } catch (error) {
        throw failure('delete', error, instanceId);
      }
    },

    async get({ instanceId }) {
      checkId('get', instanceId);
      try {
        const reply = await client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
        const instance = reply.Reservations?.[0]?.Instances?.[0];
        const stateName = instance?.State?.Name;
        if (!instance || stateName === 'terminated') return { exists: false };
        return {
          exists: true,
          state: (stateName && states[stateName]) ?? 'unknown',
          name: tagOf(instance, 'Name'),
          podUid: tagOf(instance, tagKeys.podUid),
          marker: tagOf(instance, tagKeys.marker) === settings.marker,
        };
      } catch (error) {
        if (notFound(error)) return { exists: false };
        throw failure('get', error, instanceId);
      }
    },

    list: () => describe('list', []),
    findByPodUid,

    identity: keptOnceRead(readIdentity),

    // EC2 IDs were never libvirt's numeric domain IDs: only the format is checked.
    resolveRecordedId({ instanceId, podName }) {
      if (!INSTANCE_ID.test(instanceId)) {
        const message = `EC2: the PeerPod of pod ${podName} records "${instanceId}", which is not an EC2 instance ID (i- and hex digits)`;
        return Promise.reject(
          cloudFailure('CloudInvalidRequest', message, { provider: 'aws', operation: 'resolveRecordedId', instanceId }),
        );
      }
      return Promise.resolve({ instanceId });
    },
  };
}
