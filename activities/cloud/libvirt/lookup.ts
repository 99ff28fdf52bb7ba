// Reading domains: one by UUID, all of Steward's (by the marker in their metadata), and the host's identity. The
// instance ID of a VM is its domain UUID, stable across crashes.
import { cloudFailure } from '../errors';
import { mapLimit } from '../limit';
import type { InstanceObservation, InstanceState, MarkedInstance } from '../provider';
import { domainName, parseHostUuid, parseMetadata } from './domain-xml';
import { checkUuid, type Libvirt, missing, virshSays } from './virsh';

/** Name and Steward metadata of one domain; undefined when it is gone. */
export async function readDomain({ virsh }: Libvirt, uuid: string) {
  try {
    const xml = await virsh('dumpxml', uuid);
    return { name: domainName(xml), meta: parseMetadata(xml) };
  } catch (error) {
    if (virshSays(error, missing)) return undefined;
    throw error;
  }
}

export async function listDomains(libvirt: Libvirt): Promise<MarkedInstance[]> {
  const { settings, virsh } = libvirt;
  try {
    const uuids = (await virsh('list', '--all', '--uuid'))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const domains = await mapLimit(uuids, settings.concurrency, async (uuid) => {
      const domain = await readDomain(libvirt, uuid);
      const meta = domain?.meta;
      if (meta?.marker !== settings.marker || !meta.podUid) return [];
      return [
        {
          instanceId: uuid,
          name: domain?.name,
          podUid: meta.podUid,
          podNamespace: meta.podNamespace,
          podName: meta.podName,
        },
      ];
    });
    return domains.flat();
  } catch (error) {
    throw libvirt.failure('list', error);
  }
}

const states: Record<string, InstanceState> = {
  running: 'running',
  idle: 'running',
  blocked: 'running',
  paused: 'paused',
  pmsuspended: 'paused',
  'in shutdown': 'stopping',
  'shut off': 'stopped',
  crashed: 'crashed',
};

export async function getDomain(libvirt: Libvirt, instanceId: string): Promise<InstanceObservation> {
  checkUuid('get', instanceId);
  try {
    const [domain, state] = await Promise.all([
      readDomain(libvirt, instanceId),
      libvirt.virsh('domstate', instanceId).catch((error: unknown) => {
        if (virshSays(error, missing)) return undefined;
        throw error;
      }),
    ]);
    if (!domain || state === undefined) return { exists: false };
    return {
      exists: true,
      state: states[state.trim()] ?? 'unknown',
      name: domain.name,
      podUid: domain.meta?.podUid,
      marker: domain.meta?.marker === libvirt.settings.marker,
    };
  } catch (error) {
    throw libvirt.failure('get', error, instanceId);
  }
}

/** `libvirt:<host UUID>`. */
export async function readHostIdentity({ settings, virsh, failure }: Libvirt) {
  try {
    const capabilities = await virsh('capabilities');
    // sysinfo only when capabilities has no host UUID. "Not supported" (the driver) or "not available" (no SMBIOS)
    // is an answer, not an outage.
    const sysinfo = async () =>
      virsh('sysinfo').catch((error: unknown) => {
        if (virshSays(error, /not supported|not available/)) return '';
        throw error;
      });
    const uuid = parseHostUuid(capabilities) ?? parseHostUuid('', await sysinfo());
    if (uuid === undefined) {
      throw cloudFailure(
        'CloudBadResponse',
        `libvirt identity (${settings.uri}): neither \`virsh capabilities\` nor \`virsh sysinfo\` names a host UUID`,
        {
          provider: 'libvirt',
          operation: 'identity',
        },
      );
    }
    return `libvirt:${uuid}`;
  } catch (error) {
    throw failure('identity', error);
  }
}
