// Reading instances: one by ID, Steward's by tag (its marker, optionally a pod UID), and the account and region.
import {
  DescribeInstancesCommand,
  paginateDescribeInstances,
  type Filter,
  type Instance,
  type InstanceStateName,
  type Tag,
} from '@aws-sdk/client-ec2';
import { GetCallerIdentityCommand } from '@aws-sdk/client-sts';
import { cloudFailure } from '../errors';
import { UPSTREAM_VM_NAME } from '../../../model/vm-naming';
import {
  type InstanceObservation,
  type InstanceState,
  type MarkedInstance,
  tagKeys,
  type UpstreamInstance,
  type VmPower,
} from '../provider';
import { checkInstanceId, type Ec2 } from './ec2';
import { awsFailure, notFound } from './errors';

export const tagIn = (tags: Tag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value;
const tagOf = (instance: Instance, key: string) => tagIn(instance.Tags, key);

const states: Partial<Record<InstanceStateName, InstanceState>> = {
  pending: 'pending',
  running: 'running',
  stopping: 'stopping',
  stopped: 'stopped',
  'shutting-down': 'deleting',
};
const stateOf = (instance: Instance): InstanceState =>
  (instance.State?.Name && states[instance.State.Name]) ?? 'unknown';
const live: InstanceStateName[] = ['pending', 'running', 'stopping', 'stopped', 'shutting-down'];

const marked = (marker: string, instance: Instance): MarkedInstance[] => {
  const podUid = tagOf(instance, tagKeys.podUid);
  if (!instance.InstanceId || !podUid || tagOf(instance, tagKeys.marker) !== marker) return [];
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

/** The live instances that match `filters`, through `pick`. */
async function describeLive<T>(
  { client }: Ec2,
  operation: string,
  filters: Filter[],
  pick: (instance: Instance) => T[],
): Promise<T[]> {
  const Filters = [{ Name: 'instance-state-name', Values: live }, ...filters];
  try {
    const found: T[] = [];
    for await (const page of paginateDescribeInstances({ client }, { Filters })) {
      for (const reservation of page.Reservations ?? [])
        for (const instance of reservation.Instances ?? []) found.push(...pick(instance));
    }
    return found;
  } catch (error) {
    throw awsFailure(operation, error);
  }
}

/** The live instances with Steward's marker that match `filters` too. */
export const describeMarked = (ec2: Ec2, operation: string, filters: Filter[]): Promise<MarkedInstance[]> =>
  describeLive(ec2, operation, [{ Name: `tag:${tagKeys.marker}`, Values: [ec2.settings.marker] }, ...filters], (i) =>
    marked(ec2.settings.marker, i),
  );

/** Every live instance with Steward's marker and its state, in one DescribeInstances (paginated). */
export const describePower = (ec2: Ec2): Promise<VmPower[]> =>
  describeLive(ec2, 'powerStates', [{ Name: `tag:${tagKeys.marker}`, Values: [ec2.settings.marker] }], (i) =>
    marked(ec2.settings.marker, i).map((vm) => ({ ...vm, state: stateOf(i) })),
  );

/** Live instances whose Name tag (cloud-api-adaptor's aws provider.go sets it) has its VM name shape, with no marker. */
export const describeUpstream = (ec2: Ec2): Promise<UpstreamInstance[]> =>
  describeLive(ec2, 'listUpstream', [{ Name: 'tag:Name', Values: ['podvm-*'] }], (instance) => {
    const name = tagOf(instance, 'Name');
    if (!instance.InstanceId || !name || !UPSTREAM_VM_NAME.test(name)) return [];
    return tagOf(instance, tagKeys.marker) === undefined ? [{ instanceId: instance.InstanceId, name }] : [];
  });

export const findByPodUid = (ec2: Ec2, podUid: string) =>
  describeMarked(ec2, 'findByPodUid', [{ Name: `tag:${tagKeys.podUid}`, Values: [podUid] }]);

export async function getInstance({ settings, client }: Ec2, instanceId: string): Promise<InstanceObservation> {
  checkInstanceId('get', instanceId);
  try {
    const reply = await client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    const instance = reply.Reservations?.[0]?.Instances?.[0];
    const stateName = instance?.State?.Name;
    if (!instance || stateName === 'terminated') return { exists: false };
    return {
      exists: true,
      state: stateOf(instance),
      name: tagOf(instance, 'Name'),
      podUid: tagOf(instance, tagKeys.podUid),
      marker: tagOf(instance, tagKeys.marker) === settings.marker,
    };
  } catch (error) {
    if (notFound(error)) return { exists: false };
    throw awsFailure('get', error, instanceId);
  }
}

/** `aws:<account>:<region>`. */
export async function readAccountIdentity({ client, sts }: Ec2) {
  const { region } = client.config;
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
    throw awsFailure('identity', error, undefined, 'STS');
  }
}
