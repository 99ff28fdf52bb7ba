// The domain XML Steward writes and the parts of libvirt's XML it reads back. A VM is a pod VM as cloud-api-adaptor's
// x86_64 one (createDomainXMLx86_64 in its libvirt.go): the root disk, the cloud-init ISO as a CD-ROM, a NIC on the
// configured network, a serial console. Its identity lives in the domain's <metadata> under Steward's own namespace.
import type { CreateInstanceInput } from '../provider';
import { UUID, type LibvirtSettings } from './virsh';

export const METADATA_NAMESPACE = 'https://steward.dev/xmlns/vm/1';

/** The host UUID from `virsh capabilities` (`/capabilities/host/uuid`) or `virsh sysinfo` (SMBIOS system uuid). */
export function parseHostUuid(capabilities: string, sysinfo = ''): string | undefined {
  const host = /<host>([\s\S]*?)<\/host>/.exec(capabilities)?.[1];
  const fromCaps = host === undefined ? undefined : /<uuid>\s*([^<\s]+)\s*<\/uuid>/.exec(host)?.[1];
  const system = /<system>([\s\S]*?)<\/system>/.exec(sysinfo)?.[1];
  const fromSysinfo =
    system === undefined ? undefined : /<entry name=["']uuid["']>\s*([^<\s]+)\s*<\/entry>/.exec(system)?.[1];
  return [fromCaps, fromSysinfo].find((u) => u !== undefined && UUID.test(u))?.toLowerCase();
}

export const xmlEscape = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const xmlUnescape = (s: string) =>
  s.replace(/&(#\d+|#x[0-9a-f]+|lt|gt|amp|apos|quot);/gi, (_, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };
    if (e[0] !== '#') return named[e.toLowerCase()] ?? '';
    return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });

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
const devicesXml = ({ rootDisk, cloudInitIso, network }: DomainDevices) =>
  [
    `<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='${xmlEscape(rootDisk)}'/><target dev='sda' bus='sata'/><boot order='1'/></disk>`,
    `<disk type='file' device='cdrom'><driver name='qemu' type='raw'/><source file='${xmlEscape(cloudInitIso)}'/><target dev='hda' bus='ide'/><readonly/></disk>`,
    ...(network === undefined
      ? []
      : [`<interface type='network'><source network='${xmlEscape(network)}'/><model type='virtio'/></interface>`]),
    `<console type='pty'><target type='serial'/></console>`,
  ].join('\n    ');

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
  const fields = Object.entries(metadataFields).map(
    ([key, element]) => `<steward:${element}>${xmlEscape(meta[key as keyof DomainMetadata])}</steward:${element}>`,
  );
  const tags = Object.entries(input.tags ?? {}).map(
    ([k, v]) => `<steward:tag key="${xmlEscape(k)}" value="${xmlEscape(v)}"/>`,
  );
  return `<domain type='${settings.domainType}'>
  <name>${xmlEscape(input.name)}</name>
  <uuid>${uuid}</uuid>
  <description>Steward peer-pod VM of ${xmlEscape(`${input.podNamespace}/${input.podName}`)}</description>
  <metadata><steward:vm xmlns:steward="${METADATA_NAMESPACE}">${[...fields, ...tags].join('')}</steward:vm></metadata>
  <memory unit='MiB'>${settings.memoryMiB}</memory>
  <vcpu>${settings.vcpus}</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>${xmlEscape(settings.emulator)}</emulator>
    ${devicesXml(devices)}
    <memballoon model='none'/>
  </devices>
</domain>`;
}

/** Steward's metadata from `virsh dumpxml`, whatever prefix libvirt writes it with; undefined when there is none. */
export function parseMetadata(xml: string): DomainMetadata | undefined {
  const block = /<metadata>([\s\S]*?)<\/metadata>/.exec(xml)?.[1] ?? '';
  const ns = METADATA_NAMESPACE.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const vm = new RegExp(`<(\\w+:)?vm\\b[^>]*xmlns(:\\w+)?=["']${ns}["'][^>]*>([\\s\\S]*?)</(\\w+:)?vm>`).exec(
    block,
  )?.[3];
  if (vm === undefined) return undefined;
  const field = (element: string) => {
    const value = new RegExp(`<(?:\\w+:)?${element}>([^<]*)</(?:\\w+:)?${element}>`).exec(vm)?.[1];
    return value === undefined ? undefined : xmlUnescape(value);
  };
  return Object.fromEntries(Object.entries(metadataFields).map(([key, element]) => [key, field(element)]));
}

export const domainName = (xml: string) => {
  const name = /<name>([^<]*)<\/name>/.exec(xml)?.[1];
  return name === undefined ? undefined : xmlUnescape(name);
};
