// Start: a stopped pod VM is started again. Starting a running one changes nothing; a terminated or unknown one is
// `absent`, for the caller to make anew (looked up first: EC2 keeps terminated instances visible for a while).
import { StartInstancesCommand } from '@aws-sdk/client-ec2';
import type { Ec2 } from './ec2';
import { awsFailure } from './errors';
import { getInstance } from './lookup';

export async function startInstance(ec2: Ec2, instanceId: string): Promise<{ outcome: 'started' | 'absent' }> {
  if (!(await getInstance(ec2, instanceId)).exists) return { outcome: 'absent' };
  try {
    await ec2.client.send(new StartInstancesCommand({ InstanceIds: [instanceId] }));
    return { outcome: 'started' };
  } catch (error) {
    throw awsFailure('start', error, instanceId);
  }
}
