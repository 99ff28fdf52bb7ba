// Create: RunInstances with Steward's tags, after a lookup by tag for the VM an earlier attempt made.
import { RunInstancesCommand } from '@aws-sdk/client-ec2';
import { createHash } from 'node:crypto';
import { podVmUserData } from '../cloud-init';
import { cloudFailure } from '../errors';
import { type CreateInstanceInput, tagKeys } from '../provider';
import type { Ec2 } from './ec2';
import { awsFailure } from './errors';
import { findByPodUid } from './lookup';

/**
 * Idempotency token of RunInstances (at most 64 ASCII characters): the pod UID, readable, plus the name, so a VM
 * created again for the same pod after an out-of-band deletion gets a new token (EC2 would otherwise answer with
 * the terminated instance).
 */
export const clientToken = (input: Pick<CreateInstanceInput, 'podUid' | 'name'>) =>
  `${input.podUid}-${createHash('sha256').update(input.name).digest('hex')}`.slice(0, 64);

export async function createInstance(ec2: Ec2, input: CreateInstanceInput): Promise<{ instanceId: string }> {
  const { settings, client } = ec2;
  // Needed only here: an installation that tracks cloud-api-adaptor's PeerPods deletes VMs and makes none.
  if (!settings.imageId)
    throw cloudFailure(
      'CloudInvalidRequest',
      "EC2 RunInstances: no pod-VM image; set --podvm-image / STEWARD_PODVM_IMAGE (or cloud-api-adaptor's PODVM_AMI_ID) to make VMs",
      { provider: 'aws', operation: 'create' },
    );
  // The ClientToken makes a repeated RunInstances return the first instance on EC2; the lookup by tag does the
  // same where the token is not honoured (moto ignores it) or has expired.
  const earlier = (await findByPodUid(ec2, input.podUid)).find((instance) => instance.name === input.name);
  if (earlier) return { instanceId: earlier.instanceId };
  // cloud-api-adaptor's tags first (TAGS), Steward's after them, so no custom tag can hide the marker or the pod.
  const tags = {
    ...settings.tags,
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
        // Base64, as RunInstances takes it and cloud-api-adaptor sends it (aws/provider.go).
        UserData: Buffer.from(podVmUserData(input)).toString('base64'),
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
    throw awsFailure('create', error);
  }
}
