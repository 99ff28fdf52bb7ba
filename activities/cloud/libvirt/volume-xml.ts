// A pod VM's volumes as cloud-api-adaptor makes them (src/cloud-providers/libvirt/libvirt.go, volume.go): a qcow2 root
// disk backed by the pod-VM image volume, and a raw cloud-init ISO, both in one pool and named after the VM.
import { noCloudFiles } from '../cloud-init';
import type { CreateInstanceInput } from '../provider';
import type { LibvirtSettings } from './virsh';
import { attribute, buildXml, child, parseXml, text } from './xml';

/** `<vm>-root.qcow2` and `<vm>-cloudinit.iso`, cloud-api-adaptor's names (CreateDomain in libvirt.go). */
export const volumeNames = (vmName: string) => ({ root: `${vmName}-root.qcow2`, cloudInit: `${vmName}-cloudinit.iso` });

const GIB = 1024 ** 3;

/**
 * The root disk's capacity in bytes: the size asked for (GiB, LIBVIRT_ROOT_DISK_SIZE), never below the image's own, as
 * a qcow2 overlay cannot be smaller than its backing file (volumeCapacityBytes in volume.go).
 */
export const rootCapacityBytes = (rootDiskGiB: number, imageBytes: number) => Math.max(rootDiskGiB * GIB, imageBytes);

/** What a volume's XML (`virsh vol-dumpxml`) says of it. */
export interface VolumeInfo {
  path: string;
  format: string;
  capacityBytes: number;
}

const UNITS: Record<string, number> = {
  b: 1,
  bytes: 1,
  kib: 1024,
  k: 1024,
  mib: 1024 ** 2,
  m: 1024 ** 2,
  gib: GIB,
  g: GIB,
};

/** The target path, format and capacity of `virsh vol-dumpxml`'s volume; undefined when one of them is missing. */
export function parseVolume(xml: string): VolumeInfo | undefined {
  const volume = child(parseXml(xml), 'volume');
  const path = text(child(volume, 'target', 'path'));
  const format = attribute(child(volume, 'target', 'format'), 'type');
  const capacity = child(volume, 'capacity');
  const amount = text(capacity);
  const unit = UNITS[(attribute(capacity, 'unit') ?? 'bytes').toLowerCase()];
  if (!path || format === undefined || amount === undefined || !/^\d+$/.test(amount) || unit === undefined)
    return undefined;
  return { path, format, capacityBytes: Number(amount) * unit };
}

/** The root disk: a qcow2 volume of `capacityBytes` backed by the pod-VM image (newDefVolume and createVolume). */
export function rootVolumeXml(name: string, capacityBytes: number, image: VolumeInfo): string {
  return buildXml({
    volume: {
      name,
      capacity: { '@_unit': 'bytes', '#text': capacityBytes },
      target: { format: { '@_type': 'qcow2' }, permissions: { mode: '0644' } },
      backingStore: { path: image.path, format: { '@_type': image.format } },
    },
  });
}

/** What to make for a pod VM before its domain: the root volume's XML and the cloud-init seed's files. */
export function podVmVolumes(
  settings: Pick<LibvirtSettings, 'rootDiskGiB'>,
  input: CreateInstanceInput,
  image: VolumeInfo,
) {
  const names = volumeNames(input.name);
  const capacity = rootCapacityBytes(settings.rootDiskGiB, image.capacityBytes);
  return {
    root: { name: names.root, xml: rootVolumeXml(names.root, capacity, image) },
    cloudInit: { name: names.cloudInit, files: noCloudFiles(input) },
  };
}
