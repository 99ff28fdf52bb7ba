// The AWS provider: EC2 through the SDK v3. Region, endpoint and image come from configuration; credentials come
// from the SDK's default chain (environment, shared files, instance role), so they never pass through Steward's
// inputs, results or configuration objects.
import {
  DescribeInstancesCommand,
  EC2Client,
  paginateDescribeInstances,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type Filter,
  type Instance,
  type InstanceStateName,
} from '@aws-sdk/client-ec2';
import { createHash } from 'node:crypto';
import { cloudFailure, type CloudFailureType, isCloudFailure } from './errors';
import { type CloudProvider, type CreateInstanceInput, type InstanceState, type MarkedInstance, tagKeys } from './provider';

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
};

const notFound = (error: unknown) => error instanceof Error && error.name === 'InvalidInstanceID.NotFound';

/** The SDK's error as a failure of the vocabulary: its code decides, then who is at fault. */
function failure(operation: string, error: unknown, instanceId?: string): unknown {
  if (!(error instanceof Error) || isCloudFailure(error)) return error;
  const meta = error as Error & { $fault?: 'client' | 'server'; $metadata?: { httpStatusCode?: number } };
  // A client-side fault with an HTTP status is a refused request; no status at all is a network or timeout error.
  const refused = meta.$fault === 'client' && (meta.$metadata?.httpStatusCode ?? 0) < 500 && meta.$metadata?.httpStatusCode !== undefined;
  const type = codes[error.name] ?? (refused ? 'CloudInvalidRequest' : 'CloudUnavailable');
  return cloudFailure(type, `EC2 ${operation}: ${error.name}: ${error.message}`, { provider: 'aws', operation, code: error.name, instanceId }, error);
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

const tagOf = (instance: Instance, key: string) => instance.Tags?.find((t) => t.Key === key)?.Value;

export function createAwsProvider(settings: AwsSettings, client = new EC2Client({ region: settings.region, endpoint: settings.endpoint })): CloudProvider {
  const checkId = (operation: string, instanceId: string) => {
    if (!INSTANCE_ID.test(instanceId)) {
      throw cloudFailure('CloudInvalidRequest', `EC2 ${operation}: "${instanceId}" is not an instance ID`, { provider: 'aws', operation, instanceId });
    }
  };

  const marked = (instance: Instance): MarkedInstance[] => {
    const podUid = tagOf(instance, tagKeys.podUid);
    if (!instance.InstanceId || !podUid || tagOf(instance, tagKeys.marker) !== settings.marker) return [];
    return [{ instanceId: instance.InstanceId, name: tagOf(instance, 'Name'), podUid, podNamespace: tagOf(instance, tagKeys.podNamespace), podName: tagOf(instance, tagKeys.podName) }];
  };

  const describe = async (operation: string, filters: Filter[]): Promise<MarkedInstance[]> => {
    const Filters = [{ Name: `tag:${tagKeys.marker}`, Values: [settings.marker] }, { Name: 'instance-state-name', Values: live }, ...filters];
    try {
      const found: MarkedInstance[] = [];
      for await (const page of paginateDescribeInstances({ client }, { Filters })) {
        for (const reservation of page.Reservations ?? []) for (const instance of reservation.Instances ?? []) found.push(...marked(instance));
      }
      return found;
    } catch (error) {
      throw failure(operation, error);
    }
  };

  const findByPodUid = (podUid: string) => describe('findByPodUid', [{ Name: `tag:${tagKeys.podUid}`, Values: [podUid] }]);

  return {
    name: 'aws',

    async create(input) {
      // The ClientToken makes a repeated RunInstances return the first instance on EC2; the lookup by tag does the
      // same where the token is not honoured (moto ignores it) or has expired.
      const earlier = (await findByPodUid(input.podUid)).find((instance) => instance.name === input.name);
      if (earlier) return { instanceId: earlier.instanceId };
      const tags = { ...input.tags, Name: input.name, [tagKeys.marker]: settings.marker, [tagKeys.podUid]: input.podUid, [tagKeys.podNamespace]: input.podNamespace, [tagKeys.podName]: input.podName };
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
            TagSpecifications: [{ ResourceType: 'instance', Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }],
          }),
        );
        const instanceId = reply.Instances?.[0]?.InstanceId;
        if (!instanceId) throw cloudFailure('CloudBadResponse', 'EC2 RunInstances answered without an instance', { provider: 'aws', operation: 'create' });
        return { instanceId };
      } catch (error) {
        throw failure('create', error);
      }
    },

    async delete({ instanceId }) {
      checkId('delete', instanceId);
      try {
        const reply = await client.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
        // Terminated instances stay visible for about an hour; terminating one again changes nothing.
        return { outcome: reply.TerminatingInstances?.[0]?.PreviousState?.Name === 'terminated' ? 'absent' : 'deleted' };
      } catch (error) {
        if (notFound(error)) return { outcome: 'absent' };
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
  };
}
