// Reading domains: one by UUID, all of Steward's (by the marker in their metadata), and the host's identity. The
// instance ID of a VM is its domain UUID, stable across crashes.
import { cloudFailure } from '../errors';
import { mapLimit } from '../limit';
import type { InstanceObservation, InstanceState, MarkedInstance, UpstreamInstance, VmPower } from '../provider';
import { UPSTREAM_VM_NAME } from '../../../model/vm-naming';
import { planDeletion } from './deletion-plan';
import { domainIdentity, parseHostUuid } from './domain-xml';
import { poolTargetDir } from './pools';
import { checkUuid, type Libvirt, missing, virshSays } from './virsh';

/** Name, UUID and Steward metadata of one domain, by UUID or name, with its XML; undefined when it is gone. */
export async function readDomain({ virsh }: Libvirt, domain: string) {
  try {
    const xml = await virsh('dumpxml', domain);
    return { ...domainIdentity(xml), xml };
  } catch (error) {
    if (virshSays(error, missing)) return undefined;
    throw error;
  }
}

/** Every domain's UUID, name and Steward metadata, through `pick`; `operation` names a failure. */
async function eachDomain<T>(
  libvirt: Libvirt,
  operation: string,
  pick: (uuid: string, domain: NonNullable<Awaited<ReturnType<typeof readDomain>>>) => T[],
): Promise<T[]> {
  try {
    const uuids = (await libvirt.virsh('list', '--all', '--uuid'))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const picked = await mapLimit(uuids, libvirt.settings.concurrency, async (uuid) => {
      const domain = await readDomain(libvirt, uuid);
      return domain ? pick(uuid, domain) : [];
    });
    return picked.flat();
  } catch (error) {
    throw libvirt.failure(operation, error);
  }
}

/** The domain as one of this installation's pod VMs; none when it has no marker of ours or no pod. */
const markedInstance = (
  { settings }: Libvirt,
  uuid: string,
  { name, meta }: NonNullable<Awaited<ReturnType<typeof readDomain>>>,
): MarkedInstance[] =>
  meta?.marker !== settings.marker || !meta.podUid
    ? []
    : [{ instanceId: uuid, name, podUid: meta.podUid, podNamespace: meta.podNamespace, podName: meta.podName }];

export const listDomains = (libvirt: Libvirt): Promise<MarkedInstance[]> =>
  eachDomain(libvirt, 'list', (uuid, domain) => markedInstance(libvirt, uuid, domain));

/**
 * Domains named as cloud-api-adaptor names them, with no Steward metadata (of any installation), and with a disk in
 * the configured pool (by pool, or by a path under the pool's directory): cloud-api-adaptor's own.
 */
export async function listUpstreamDomains(libvirt: Libvirt): Promise<UpstreamInstance[]> {
  const { pool } = libvirt.settings;
  let poolDir: string | undefined;
  try {
    poolDir = poolTargetDir(await libvirt.virsh('pool-dumpxml', pool));
  } catch (error) {
    throw libvirt.failure('listUpstream', error);
  }
  const inPool = (xml: string) =>
    planDeletion([xml]).volumes.some((v) =>
      'pool' in v ? v.pool === pool : poolDir !== undefined && v.path.startsWith(`${poolDir}/`),
    );
  return eachDomain(libvirt, 'listUpstream', (uuid, { name, meta, xml }) =>
    meta === undefined && name !== undefined && UPSTREAM_VM_NAME.test(name) && inPool(xml)
      ? [{ instanceId: uuid, name }]
      : [],
  );
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

/** `virsh list --all`'s table: each domain's name and state (`-` ids are domains shut off). */
export function parseDomainTable(table: string): { name: string; state: string }[] {
  return table
    .split('\n')
    .map((line) => /^\s*(?:\d+|-)\s+(\S+)\s+(\S.*?)\s*$/.exec(line))
    .flatMap((m) => (m ? [{ name: m[1]!, state: m[2]! }] : []));
}

/**
 * Steward's domains and their states from one `virsh list --all` a look: which domain is whose is read from its
 * metadata (a `dumpxml` of each name not seen before: 100 VMs being made are not read again at every look), and kept;
 * a name gone from the table is forgotten.
 */
export function createPowerReader(libvirt: Libvirt): () => Promise<VmPower[]> {
  const known = new Map<string, MarkedInstance | null>();
  return async () => {
    let table: { name: string; state: string }[];
    try {
      table = parseDomainTable(await libvirt.virsh('list', '--all'));
      const unseen = table.filter(({ name }) => !known.has(name));
      await mapLimit(unseen, libvirt.settings.concurrency, async ({ name }) => {
        const domain = await readDomain(libvirt, name);
        const uuid = domain?.uuid;
        known.set(name, (domain && uuid && markedInstance(libvirt, uuid, domain)[0]) || null);
      });
    } catch (error) {
      throw libvirt.failure('powerStates', error);
    }
    const listed = new Set(table.map(({ name }) => name));
    for (const name of known.keys()) if (!listed.has(name)) known.delete(name);
    return table.flatMap(({ name, state }) => {
      const vm = known.get(name);
      return vm ? [{ ...vm, state: states[state] ?? 'unknown' }] : [];
    });
  };
}

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
