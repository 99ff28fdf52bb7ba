// The domain XML Steward writes and the parts of libvirt's XML it reads back. A VM is a pod VM as cloud-api-adaptor's
// x86_64 one (createDomainXMLx86_64 in its libvirt.go): the root disk, the cloud-init ISO as a CD-ROM, a NIC on the
// configured network, a serial console. Its identity lives in the domain's <metadata> under Steward's own namespace.
import type { CreateInstanceInput } from '../provider';
import { UUID, type LibvirtSettings } from './virsh';
import { attribute, buildXml, child, childNames, children, parseXml, text, type XmlElement, type XmlTree } from './xml';

export const METADATA_NAMESPACE = 'https://steward.dev/xmlns/vm/1';

/** The host UUID from `virsh capabilities` (`/capabilities/host/uuid`) or `virsh sysinfo` (SMBIOS system uuid). */
export function parseHostUuid(capabilities: string, sysinfo = ''): string | undefined {
  const fromCaps = text(child(parseXml(capabilities), 'capabilities', 'host', 'uuid'));
  const entries = children(child(parseXml(sysinfo), 'sysinfo', 'system'), 'entry');
  const fromSysinfo = text(entries.find((entry) => attribute(entry, 'name') === 'uuid'));
  return [fromCaps, fromSysinfo].find((u) => u !== undefined && UUID.test(u))?.toLowerCase();
}

export interface DomainMetadata {
  marker?: string;
  podUid?: string;
  podNamespace?: string;
  podName?: string;
}

const metadataFields = {
  marker: 'managedBy',
  podUid: 'podUid',
  podNamespace: 'podNamespace',
  podName: 'podName',
} as const;

/** The volumes and network a domain is given (paths as the pool names them). */
export interface DomainDevices {
  rootDisk: string;
  cloudInitIso: string;
  /** The libvirt network of its NIC; none when undefined. */
  network?: string;
}

/** Root disk first to boot (SATA), the ISO read-only on IDE, a virtio NIC, as cloud-api-adaptor's. */
const devicesTree = ({ rootDisk, cloudInitIso, network }: DomainDevices): XmlTree => ({
  disk: [
    {
      '@_type': 'file',
      '@_device': 'disk',
      driver: { '@_name': 'qemu', '@_type': 'qcow2' },
      source: { '@_file': rootDisk },
      target: { '@_dev': 'sda', '@_bus': 'sata' },
      boot: { '@_order': 1 },
    },
    {
      '@_type': 'file',
      '@_device': 'cdrom',
      driver: { '@_name': 'qemu', '@_type': 'raw' },
      source: { '@_file': cloudInitIso },
      target: { '@_dev': 'hda', '@_bus': 'ide' },
      readonly: {},
    },
  ],
  interface:
    network === undefined
      ? undefined
      : { '@_type': 'network', source: { '@_network': network }, model: { '@_type': 'virtio' } },
  console: { '@_type': 'pty', target: { '@_type': 'serial' } },
});

export function domainXml(
  settings: LibvirtSettings,
  input: CreateInstanceInput,
  uuid: string,
  devices: DomainDevices,
): string {
  const meta: Record<keyof DomainMetadata, string> = {
    marker: settings.marker,
    podUid: input.podUid,
    podNamespace: input.podNamespace,
    podName: input.podName,
  };
  const vm: XmlTree = { '@_xmlns:steward': METADATA_NAMESPACE };
  for (const [key, element] of Object.entries(metadataFields))
    vm[`steward:${element}`] = meta[key as keyof DomainMetadata];
  vm['steward:tag'] = Object.entries(input.tags ?? {}).map(([k, v]) => ({ '@_key': k, '@_value': v }));
  return buildXml({
    domain: {
      '@_type': settings.domainType,
      name: input.name,
      uuid,
      description: `Steward peer-pod VM of ${input.podNamespace}/${input.podName}`,
      metadata: { 'steward:vm': vm },
      memory: { '@_unit': 'MiB', '#text': settings.memoryMiB },
      vcpu: settings.vcpus,
      os: { type: { '@_arch': 'x86_64', '@_machine': 'pc', '#text': 'hvm' } },
      devices: { emulator: settings.emulator, ...devicesTree(devices), memballoon: { '@_model': 'none' } },
    },
  });
}

/**
 * A domain's name, UUID and Steward's metadata from its `virsh dumpxml`, parsed once: a running domain's XML is some
 * 6 KB, and the power reader parsed each three times over (for the name, the metadata, the UUID).
 */
export function domainIdentity(xml: string): { name?: string; uuid?: string; meta?: DomainMetadata } {
  const domain = child(parseXml(xml), 'domain');
  return {
    name: text(child(domain, 'name')),
    uuid: text(child(domain, 'uuid')),
    meta: metadataIn(child(domain, 'metadata')),
  };
}

/** Steward's metadata from `virsh dumpxml`, whatever prefix libvirt writes it with; undefined when there is none. */
export const parseMetadata = (xml: string) => metadataIn(child(parseXml(xml), 'domain', 'metadata'));

function metadataIn(metadata: XmlElement | undefined): DomainMetadata | undefined {
  for (const name of childNames(metadata)) {
    const [prefix, local] = name.includes(':') ? name.split(':', 2) : [undefined, name];
    if (local !== 'vm') continue;
    const xmlns = prefix === undefined ? 'xmlns' : `xmlns:${prefix}`;
    const vm = children(metadata, name).find((element) => attribute(element, xmlns) === METADATA_NAMESPACE);
    if (vm === undefined) continue;
    const field = (element: string) => text(child(vm, prefix === undefined ? element : `${prefix}:${element}`));
    return Object.fromEntries(Object.entries(metadataFields).map(([key, element]) => [key, field(element)]));
  }
  return undefined;
}
