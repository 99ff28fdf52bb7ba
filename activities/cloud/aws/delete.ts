// Delete: TerminateInstances, then release the instance's Elastic IPs. An instance already gone is `absent`.
import {
  CreateTagsCommand,
  DescribeAddressesCommand,
  DisassociateAddressCommand,
  type EC2Client,
  ReleaseAddressCommand,
  TerminateInstancesCommand,
  type Address,
} from '@aws-sdk/client-ec2';
import { checkInstanceId, type Ec2 } from './ec2';
import { awsFailure, isCode, notFound } from './errors';
import { tagIn } from './lookup';

/**
 * Tag Steward puts on an instance's Elastic IPs before terminating it: the association goes with the instance, so a
 * retried delete finds the addresses an earlier attempt did not release by this tag.
 */
const RELEASE_WITH = 'steward.dev/release-with';

export async function deleteInstance({ client }: Ec2, instanceId: string): Promise<{ outcome: 'deleted' | 'absent' }> {
  checkInstanceId('delete', instanceId);
  try {
    // Found before terminating (the association goes with the instance), released after, so a VM whose
    // termination fails keeps its address.
    const addresses = await addressesToRelease(client, instanceId);
    let outcome: 'deleted' | 'absent';
    try {
      const reply = await client.send(new TerminateInstancesCommand({ InstanceIds: [instanceId] }));
      // Terminated instances stay visible for about an hour; terminating one again changes nothing.
      outcome = reply.TerminatingInstances?.[0]?.PreviousState?.Name === 'terminated' ? 'absent' : 'deleted';
    } catch (error) {
      if (!notFound(error)) throw error;
      outcome = 'absent';
    }
    for (const address of addresses) await release(client, address);
    return { outcome };
  } catch (error) {
    throw awsFailure('delete', error, instanceId);
  }
}

/**
 * The instance's Elastic IPs (upstream allocates one for a multi-NIC VM with a public IP), tagged for release. One
 * unfiltered call: DescribeAddresses is not paged, accounts hold few addresses, and its filters cannot say "this
 * instance or this tag". An address now on another instance is not this instance's, whatever its tag says.
 */
async function addressesToRelease(client: EC2Client, instanceId: string): Promise<Address[]> {
  const { Addresses = [] } = await client.send(new DescribeAddressesCommand({}));
  const found = Addresses.filter(
    (a) =>
      a.AllocationId && (a.InstanceId === instanceId || (!a.InstanceId && tagIn(a.Tags, RELEASE_WITH) === instanceId)),
  );
  const untagged = found.filter((a) => tagIn(a.Tags, RELEASE_WITH) !== instanceId).map((a) => a.AllocationId!);
  if (untagged.length)
    await client.send(new CreateTagsCommand({ Resources: untagged, Tags: [{ Key: RELEASE_WITH, Value: instanceId }] }));
  return found;
}

/** Idempotent: an association or address already gone is done. */
async function release(client: EC2Client, { AllocationId, AssociationId }: Address) {
  const unless = (code: string) => (error: unknown) => {
    if (!isCode(error, code)) throw error;
  };
  // The instance is still shutting down, holding its address, when TerminateInstances returns.
  if (AssociationId)
    await client.send(new DisassociateAddressCommand({ AssociationId })).catch(unless('InvalidAssociationID.NotFound'));
  await client.send(new ReleaseAddressCommand({ AllocationId })).catch(unless('InvalidAllocationID.NotFound'));
}
