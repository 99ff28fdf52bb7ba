// What a pod VM Steward makes is told when it boots: cloud-init data, on libvirt as a NoCloud ISO volume
// (libvirt/cloud-init-iso.ts), on EC2 as the instance's user data. cloud-api-adaptor's daemon on the node writes its
// own there (pkg/adaptor/cloud/cloud.go): /run/peerpod/apf.json with the pod-network tunnel and the TLS keys of the
// agent protocol, the pod's image pull secrets, initdata. Those are the daemon's alone, so Steward writes none of
// them: only the pod's identity, in a file of its own, which no cloud-api-adaptor pod-VM image reads.
import type { CreateInstanceInput } from './provider';

/** Where the pod's identity is written in the VM. */
export const POD_IDENTITY_PATH = '/run/peerpod/steward-pod.json';

// JSON is YAML, and cloud-init reads user data after the `#cloud-config` line as YAML: JSON.stringify quotes every
// value, so no pod name can break the document.
const document = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The `#cloud-config` user data: the pod's namespace, name and UID as JSON at POD_IDENTITY_PATH. */
export function podVmUserData(input: Pick<CreateInstanceInput, 'podNamespace' | 'podName' | 'podUid'>): string {
  const identity = { 'pod-namespace': input.podNamespace, 'pod-name': input.podName, 'pod-uid': input.podUid };
  return `#cloud-config\n${document({
    write_files: [{ path: POD_IDENTITY_PATH, permissions: '0644', content: document(identity) }],
  })}`;
}

/** NoCloud meta-data: the VM's name as its host name (as cloud-api-adaptor's, libvirt.go) and its instance id. */
export const podVmMetaData = (vmName: string) => document({ 'instance-id': vmName, 'local-hostname': vmName });

/** The files of a NoCloud seed (cloud-api-adaptor's cloudinit.go writes the same three, vendor-data empty). */
export const noCloudFiles = (input: CreateInstanceInput) => ({
  'user-data': podVmUserData(input),
  'meta-data': podVmMetaData(input.name),
  'vendor-data': '',
});
