// The domain XML Steward writes and the parts of libvirt's XML it reads back. A VM is a tiny diskless domain
// (ref/peerpods.md §11.5); its identity lives in the domain's <metadata> under Steward's own XML namespace.
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

const xmlEscape = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
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

export function domainXml(settings: LibvirtSettings, input: CreateInstanceInput, uuid: string): string {
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
  <devices><emulator>${xmlEscape(settings.emulator)}</emulator><memballoon model='none'/></devices>
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
