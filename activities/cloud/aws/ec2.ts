// What every AWS operation works with: the settings, the EC2 client and an STS client on the same account, region
// and endpoint; and the instance ID format every operation checks first.
import { EC2Client } from '@aws-sdk/client-ec2';
import { STSClient } from '@aws-sdk/client-sts';
import { cloudFailure } from '../errors';
import type { CloudProvider } from '../provider';

export interface AwsSettings {
  region: string;
  /** An EC2-compatible endpoint (moto in tests); the SDK's regional endpoint when absent. */
  endpoint?: string;
  /** The pod-VM image (AMI); only making a VM needs it, so a tracking installation goes without. */
  imageId?: string;
  instanceType: string;
  subnetId?: string;
  securityGroupIds: string[];
  /** cloud-api-adaptor's custom tags (TAGS) on every pod VM. */
  tags?: Record<string, string>;
  marker: string;
}

export interface Ec2 {
  settings: AwsSettings;
  client: EC2Client;
  sts: STSClient;
}

export function connectEc2(settings: AwsSettings, client: EC2Client): Ec2 {
  // The EC2 client's own settings, so both see the same account, region and endpoint (moto serves STS there too).
  const { region, endpoint, credentials, maxAttempts } = client.config;
  return { settings, client, sts: new STSClient({ region, endpoint, credentials, maxAttempts }) };
}

const INSTANCE_ID = /^i-[0-9a-f]{8,17}$/;

export const checkInstanceId = (operation: string, instanceId: string) => {
  if (!INSTANCE_ID.test(instanceId)) {
    throw cloudFailure('CloudInvalidRequest', `EC2 ${operation}: "${instanceId}" is not an instance ID`, {
      provider: 'aws',
      operation,
      instanceId,
    });
  }
};

// EC2 IDs were never libvirt's numeric domain IDs: only the format is checked.
export const resolveRecordedId: CloudProvider['resolveRecordedId'] = ({ instanceId, podName }) => {
  if (!INSTANCE_ID.test(instanceId)) {
    const message = `EC2: the PeerPod of pod ${podName} records "${instanceId}", which is not an EC2 instance ID (i- and hex digits)`;
    return Promise.reject(
      cloudFailure('CloudInvalidRequest', message, { provider: 'aws', operation: 'resolveRecordedId', instanceId }),
    );
  }
  return Promise.resolve({ instanceId });
};
