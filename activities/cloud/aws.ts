// The AWS provider: EC2 through the SDK v3 (and STS for the account). Region, endpoint and image come from
// configuration; credentials come from the SDK's default chain (environment, shared files, instance role), so they
// never pass through Steward's inputs, results or configuration objects.
// One module per concern in aws/: the clients and ID format, error mapping, lookups by tag, create, delete.
import { EC2Client } from '@aws-sdk/client-ec2';
import { keptOnceRead } from './limit';
import type { CloudProvider } from './provider';
import { createInstance } from './aws/create';
import { deleteInstance } from './aws/delete';
import { type AwsSettings, connectEc2, resolveRecordedId } from './aws/ec2';
import { startInstance } from './aws/start';
import {
  describeMarked,
  describePower,
  describeUpstream,
  findByPodUid,
  getInstance,
  readAccountIdentity,
} from './aws/lookup';

export { clientToken } from './aws/create';
export type { AwsSettings } from './aws/ec2';

export function createAwsProvider(
  settings: AwsSettings,
  client = new EC2Client({ region: settings.region, endpoint: settings.endpoint }),
): CloudProvider {
  const ec2 = connectEc2(settings, client);
  return {
    name: 'aws',
    create: (input) => createInstance(ec2, input),
    delete: ({ instanceId }) => deleteInstance(ec2, instanceId),
    get: ({ instanceId }) => getInstance(ec2, instanceId),
    start: ({ instanceId }) => startInstance(ec2, instanceId),
    list: () => describeMarked(ec2, 'list', []),
    powerStates: () => describePower(ec2),
    listUpstream: () => describeUpstream(ec2),
    findByPodUid: (podUid) => findByPodUid(ec2, podUid),
    identity: keptOnceRead(() => readAccountIdentity(ec2)),
    resolveRecordedId,
  };
}
