// What deleting a domain removes, read from its XML (pure: no virsh here). cloud-api-adaptor's pod VM names its root
// qcow2 volume and its cloud-init ISO by file path (`<disk type='file'><source file=…>`, libvirt.go createDomainXML*),
// Steward's may name pool volumes (`<disk type='volume'><source pool=… volume=…>`); either is deleted, as
// cloud-api-adaptor's DeleteDomain deletes every disk's file. The base image a root volume is backed by is named only
// inside `<backingStore>` (libvirt writes the chain into the live XML), never as a disk's own source, so it is not
// deleted. libvirt has no call that deletes a file outside its pools: such a file is kept and reported (it may be
// shared, e.g. an image used in place, and only its owner knows). A disk's own `<source>` is its direct child; the
// ones nested in `<backingStore>` or `<mirror>` are other files.
import { attribute, child, children, parseXml, type XmlElement } from './xml';

/** A volume to delete: by pool and name, or by path (`virsh vol-delete <path>` finds the pool volume at that path). */
export type VolumeRef = { pool: string; volume: string } | { path: string };

export interface DeletionPlan {
  volumes: VolumeRef[];
  /** Disks left alone, with why (`vda: shareable`, `hdc: network disk`). */
  kept: string[];
  /** The domain has NVRAM (UEFI variables): `undefine --nvram` removes it with the domain. */
  nvram: boolean;
}

/** One `<disk>`: what to delete, or why it is kept. */
function planDisk(disk: XmlElement): { volume: VolumeRef } | { kept: string } {
  const source = child(disk, 'source');
  const target = attribute(child(disk, 'target'), 'dev') ?? attribute(disk, 'device') ?? 'disk';
  if (child(disk, 'shareable') !== undefined) return { kept: `${target}: shareable (other domains use it)` };
  const type = attribute(disk, 'type') ?? 'file';
  const [pool, volume] = [attribute(source, 'pool'), attribute(source, 'volume')];
  if (type === 'volume' && pool && volume) return { volume: { pool, volume } };
  const path = type === 'file' ? attribute(source, 'file') : type === 'block' ? attribute(source, 'dev') : undefined;
  if (path) return { volume: { path } };
  if (type === 'file') return { kept: `${target}: no medium` };
  return { kept: `${target}: ${type} disk, not a storage volume` };
}

const key = (v: VolumeRef) => ('path' in v ? `path:${v.path}` : `vol:${v.pool}/${v.volume}`);

/**
 * The deletions for a domain, from one or more of its XMLs (the live one and the persistent one can differ: a disk
 * hot-plugged, or defined for the next boot): every disk's own volume, once.
 */
export function planDeletion(xmls: string[]): DeletionPlan {
  const volumes = new Map<string, VolumeRef>();
  const kept = new Set<string>();
  let nvram = false;
  for (const xml of xmls) {
    const domain = child(parseXml(xml), 'domain');
    for (const disk of children(child(domain, 'devices'), 'disk')) {
      const step = planDisk(disk);
      if ('volume' in step) volumes.set(key(step.volume), step.volume);
      else kept.add(step.kept);
    }
    nvram ||= child(domain, 'os', 'nvram') !== undefined;
  }
  return { volumes: [...volumes.values()], kept: [...kept], nvram };
}

export const describeVolume = (v: VolumeRef) => ('path' in v ? v.path : `${v.pool}/${v.volume}`);
