// What deleting a domain removes, read from its XML (pure: no virsh here). cloud-api-adaptor's pod VM names its root
// qcow2 volume and its cloud-init ISO by file path (`<disk type='file'><source file=…>`, libvirt.go createDomainXML*),
// Steward's may name pool volumes (`<disk type='volume'><source pool=… volume=…>`); either is deleted, as
// cloud-api-adaptor's DeleteDomain deletes every disk's file. The base image a root volume is backed by is named only
// inside `<backingStore>` (libvirt writes the chain into the live XML), never as a disk's own source, so it is not
// deleted. libvirt has no call that deletes a file outside its pools: such a file is kept and reported (it may be
// shared, e.g. an image used in place, and only its owner knows).
//
// No XML library is in package.json; libvirt writes its own XML in one regular form (attributes quoted, empty elements
// self-closed), which the patterns below read. Nested elements that carry a `<source>` of their own (`backingStore`,
// `mirror`) are cut out first.

/** A volume to delete: by pool and name, or by path (`virsh vol-delete <path>` finds the pool volume at that path). */
export type VolumeRef = { pool: string; volume: string } | { path: string };

export interface DeletionPlan {
  volumes: VolumeRef[];
  /** Disks left alone, with why (`vda: shareable`, `hdc: network disk`). */
  kept: string[];
  /** The domain has NVRAM (UEFI variables): `undefine --nvram` removes it with the domain. */
  nvram: boolean;
}

const unescape = (s: string) =>
  s.replace(/&(#\d+|#x[0-9a-f]+|lt|gt|amp|apos|quot);/gi, (_, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };
    if (e[0] !== '#') return named[e.toLowerCase()] ?? '';
    return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });

/** The attributes of an element's opening tag. */
function attributes(tag: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [, name, , value] of tag.matchAll(/([\w:-]+)\s*=\s*(['"])(.*?)\2/g)) found[name!] = unescape(value!);
  return found;
}

/** `xml` without its `<name …>…</name>` elements, nested ones included (innermost first). */
function without(xml: string, name: string): string {
  const innermost = new RegExp(`<${name}\\b[^>]*/>|<${name}\\b[^>]*>(?:(?!<${name}\\b)[\\s\\S])*?</${name}>`, 'g');
  let rest = xml;
  for (let before = ''; before !== rest; ) [before, rest] = [rest, rest.replace(innermost, '')];
  return rest;
}

/** One `<disk>`: what to delete, or why it is kept. */
function planDisk(open: string, body: string): { volume: VolumeRef } | { kept: string } {
  const disk = attributes(open);
  const own = without(without(body, 'backingStore'), 'mirror');
  const source = attributes(/<source\b[^>]*>/.exec(own)?.[0] ?? '');
  const target = attributes(/<target\b[^>]*>/.exec(own)?.[0] ?? '').dev ?? disk.device ?? 'disk';
  if (/<shareable\s*\/?>/.test(own)) return { kept: `${target}: shareable (other domains use it)` };
  const type = disk.type ?? 'file';
  if (type === 'volume' && source.pool && source.volume)
    return { volume: { pool: source.pool, volume: source.volume } };
  const path = type === 'file' ? source.file : type === 'block' ? source.dev : undefined;
  if (path) return { volume: { path } };
  if (type === 'file' && !source.file) return { kept: `${target}: no medium` };
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
    const devices = /<devices>([\s\S]*)<\/devices>/.exec(xml)?.[1] ?? '';
    for (const [, open, body] of devices.matchAll(/(<disk\b[^>]*>)([\s\S]*?)<\/disk>/g)) {
      const step = planDisk(open!, body!);
      if ('volume' in step) volumes.set(key(step.volume), step.volume);
      else kept.add(step.kept);
    }
    nvram ||= /<nvram\b/.test(/<os\b[\s\S]*?<\/os>/.exec(xml)?.[0] ?? '');
  }
  return { volumes: [...volumes.values()], kept: [...kept], nvram };
}

export const describeVolume = (v: VolumeRef) => ('path' in v ? v.path : `${v.pool}/${v.volume}`);
