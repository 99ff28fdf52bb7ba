// The libvirt provider: `virsh` against a configured URI (ref/peerpods.md §12: no native build, the whole API,
// errors recognisable from stderr). A VM is a tiny diskless domain (§11.5); its identity lives in the domain's
// <metadata> under Steward's own XML namespace, and its instance ID is the domain UUID (stable across crashes).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cloudFailure, type CloudFailureType } from './errors';
import { keptOnceRead, mapLimit } from './limit';
import type {
  CloudProvider,
  CreateInstanceInput,
  InstanceObservation,
  InstanceState,
  MarkedInstance,
} from './provider';
import { vmNamePodPart } from '../../workflows/machines/peerpod';

export const METADATA_NAMESPACE = 'https://steward.dev/xmlns/vm/1';

export interface LibvirtSettings {
  uri: string;
  /** `qemu` (software emulation, works anywhere) or `kvm`. */
  domainType: 'qemu' | 'kvm';
  memoryMiB: number;
  vcpus: number;
  emulator: string;
  /** The value that marks Steward's VMs (provider.ts). */
  marker: string;
  /** Parallel `virsh` calls when listing. */
  concurrency: number;
  /** Per `virsh` call; destroy of a TCG domain takes ~1.5 s (§11.6). */
  timeoutMs: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Upstream names are [a-z0-9-]; a leading letter or digit also keeps a name from reading as a virsh option.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

// A request libvirt refuses as such. Everything else (cannot connect, daemon restarting, QEMU failing to start, a
// timeout) is retryable: libvirt's messages are too varied to call the rest permanent.
const invalidRequest =
  /XML error|XML document failed to validate|unsupported configuration|invalid argument|Cannot find .*emulator|Cannot check QEMU binary/i;

class VirshError extends Error {
  constructor(
    readonly args: string[],
    readonly stderr: string,
    readonly code: string,
  ) {
    super(`virsh ${args.join(' ')}: ${stderr || code}`);
  }
  matches = (pattern: RegExp) => pattern.test(this.stderr);
}

const missing = /failed to get domain|Domain not found/;

/** One word of a virsh command string: every character but [A-Za-z0-9_/-] escaped with a backslash. */
const virshWord = (s: string) => s.replace(/[^A-Za-z0-9_/-]/g, (c) => `\\${c}`);

// Before v0.20.0 cloud-api-adaptor recorded `dom.GetID()` as a decimal uint32; libvirt's IDs are positive ints.
const LEGACY_ID = /^\d{1,10}$/;
const MAX_DOMAIN_ID = 2 ** 31 - 1;

/**
 * What upstream's `GenerateInstanceName(pod, sandbox, 63)` makes of a pod's VM name, as a pattern:
 * `podvm-<sanitized pod name, cut to 48>-<8 chars of the sandbox ID>`. The fixed tail keeps pod `web` from claiming
 * `podvm-web-1-…`.
 */
export const upstreamVmName = (podName: string) => new RegExp(`^podvm-${vmNamePodPart(podName)}-[a-z0-9-]{8}$`);

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

interface DomainMetadata {
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

const domainName = (xml: string) => {
  const name = /<name>([^<]*)<\/name>/.exec(xml)?.[1];
  return name === undefined ? undefined : xmlUnescape(name);
};

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

export function createLibvirtProvider(settings: LibvirtSettings): CloudProvider {
  const virsh = (...args: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        'virsh',
        ['-c', settings.uri, ...args],
        { timeout: settings.timeoutMs, maxBuffer: 16 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (!error) return resolve(stdout);
          const code = error.killed ? `timed out after ${settings.timeoutMs} ms` : String(error.code ?? error.signal);
          reject(
            new VirshError(
              args,
              stderr
                .replace(/^error: /gm, '')
                .trim()
                .replace(/\n+/g, '; '),
              code,
            ),
          );
        },
      );
    });

  /** The failure for a virsh error no caller handled. */
  const failure = (operation: string, error: unknown, instanceId?: string) => {
    if (!(error instanceof VirshError)) return error;
    const type: CloudFailureType = error.matches(invalidRequest) ? 'CloudInvalidRequest' : 'CloudUnavailable';
    return cloudFailure(
      type,
      `libvirt ${operation} (${settings.uri}): ${error.message}`,
      { provider: 'libvirt', operation, code: error.code, instanceId },
      error,
    );
  };

  const checkUuid = (operation: string, instanceId: string) => {
    if (!UUID.test(instanceId)) {
      throw cloudFailure(
        'CloudInvalidRequest',
        `libvirt ${operation}: instance ID "${instanceId}" is not a domain UUID`,
        { provider: 'libvirt', operation, instanceId },
      );
    }
  };

  /** Name and Steward metadata of one domain; undefined when it is gone. */
  const readDomain = async (uuid: string) => {
    try {
      const xml = await virsh('dumpxml', uuid);
      return { name: domainName(xml), meta: parseMetadata(xml) };
    } catch (error) {
      if (error instanceof VirshError && error.matches(missing)) return undefined;
      throw error;
    }
  };

  const start = async (uuid: string) => {
    try {
      await virsh('start', uuid);
    } catch (error) {
      if (!(error instanceof VirshError && error.matches(/already active/))) throw error;
    }
  };

  /** A define that met an existing name: the earlier attempt's domain when it is this pod's, else an error. */
  const adopt = async (input: CreateInstanceInput, uuid: string) => {
    const existing = await readDomain(uuid);
    if (existing?.meta?.podUid !== input.podUid || existing.meta.marker !== settings.marker) {
      throw cloudFailure(
        'CloudNameTaken',
        `libvirt create: domain "${input.name}" (${uuid}) exists and is not Steward's VM of pod ${input.podUid}`,
        {
          provider: 'libvirt',
          operation: 'create',
          instanceId: uuid,
        },
      );
    }
    return uuid;
  };

  const list = async (): Promise<MarkedInstance[]> => {
    try {
      const uuids = (await virsh('list', '--all', '--uuid'))
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
      const domains = await mapLimit(uuids, settings.concurrency, async (uuid) => {
        const domain = await readDomain(uuid);
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
      throw failure('list', error);
    }
  };

  const readIdentity = async () => {
    try {
      const capabilities = await virsh('capabilities');
      // sysinfo only when capabilities has no host UUID. "Not supported" (the driver) or "not available" (no SMBIOS)
      // is an answer, not an outage.
      const sysinfo = async () =>
        virsh('sysinfo').catch((error: unknown) => {
          if (error instanceof VirshError && error.matches(/not supported|not available/)) return '';
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
  };

  /** The domain that holds a numeric ID now: name and UUID from one `dumpxml`, so both are of the same domain. */
  const domainById = async (id: string) => {
    try {
      const xml = await virsh('dumpxml', id);
      // virsh falls back to a lookup by name: a domain *named* "7" is not domain 7.
      if (/^\s*<domain\b[^>]*\bid=['"](\d+)['"]/.exec(xml)?.[1] !== id) return undefined;
      const uuid = /<uuid>([^<]*)<\/uuid>/.exec(xml)?.[1];
      return { name: domainName(xml), uuid };
    } catch (error) {
      if (error instanceof VirshError && error.matches(missing)) return undefined;
      throw error;
    }
  };

  const resolveRecordedId: CloudProvider['resolveRecordedId'] = async ({ instanceId, podName }) => {
    if (UUID.test(instanceId)) return { instanceId };
    if (!LEGACY_ID.test(instanceId) || Number(instanceId) > MAX_DOMAIN_ID) {
      throw cloudFailure(
        'CloudInvalidRequest',
        `libvirt resolveRecordedId: instance ID "${instanceId}" is neither a domain UUID nor a domain ID`,
        {
          provider: 'libvirt',
          operation: 'resolveRecordedId',
          instanceId,
        },
      );
    }
    const id = String(Number(instanceId));
    let domain: Awaited<ReturnType<typeof domainById>>;
    try {
      domain = await domainById(id);
    } catch (error) {
      throw failure('resolveRecordedId', error, instanceId);
    }
    const vm = `podvm-${vmNamePodPart(podName)}-…`;
    const advice =
      `the VM was probably stopped or lost in a libvirtd restart (libvirtd reuses domain IDs). Check \`virsh -c ${settings.uri} list --all\` ` +
      `for ${vm}, delete it by hand if it is there, then \`steward cleanup peerpod <namespace>/<this PeerPod> --mode orphan --reason …\``;
    const refuse = (found: string) =>
      cloudFailure(
        'CloudLegacyInstanceId',
        `libvirt: the PeerPod of pod ${podName} records domain ID ${instanceId} (cloud-api-adaptor before v0.20.0), and ${found}: ${advice}`,
        { provider: 'libvirt', operation: 'resolveRecordedId', instanceId },
      );
    if (domain === undefined) throw refuse(`no running domain has that ID now`);
    if (domain.name === undefined || !upstreamVmName(podName).test(domain.name)) {
      throw refuse(`domain ${id} is now \`${domain.name ?? '(no name)'}\`, not pod ${podName}'s VM`);
    }
    if (domain.uuid === undefined || !UUID.test(domain.uuid)) {
      throw cloudFailure(
        'CloudBadResponse',
        `libvirt resolveRecordedId (${settings.uri}): \`virsh dumpxml ${id}\` has no domain UUID`,
        {
          provider: 'libvirt',
          operation: 'resolveRecordedId',
          instanceId,
        },
      );
    }
    return { instanceId: domain.uuid.toLowerCase() };
  };

  return {
    name: 'libvirt',

    identity: keptOnceRead(readIdentity),

    resolveRecordedId,

    async create(input) {
      if (!NAME.test(input.name)) {
        throw cloudFailure(
          'CloudInvalidRequest',
          `libvirt create: "${input.name}" is not a valid domain name (letters, digits, . _ -; at most 63)`,
          {
            provider: 'libvirt',
            operation: 'create',
          },
        );
      }
      const uuid: string = randomUUID();
      const dir = await mkdtemp(join(tmpdir(), 'steward-domain-'));
      try {
        const file = join(dir, 'domain.xml');
        await writeFile(file, domainXml(settings, input, uuid));
        // Define and start in one virsh process: each process blocks the worker's event loop while it forks (with 20
        // VMs at once, a second of it). virsh runs both commands whatever the first one's outcome and exits with the
        // last one's, so a success means this fresh UUID was defined and started.
        try {
          await virsh(`define ${virshWord(file)} ; start ${uuid}`);
          return { instanceId: uuid };
        } catch (error) {
          // A repeated create (lost reply): libvirt names the UUID of the domain that already holds the name.
          const existing =
            error instanceof VirshError
              ? /already exists with uuid ([0-9a-f-]{36})/.exec(error.stderr)?.[1]
              : undefined;
          // Anything else (a define refused, a start that failed after the define) is retried as before: the retry
          // meets the name taken and adopts the domain.
          if (existing === undefined) throw error;
          const adopted = await adopt(input, existing);
          // The earlier attempt may have stopped between define and start.
          await start(adopted);
          return { instanceId: adopted };
        }
      } catch (error) {
        throw failure('create', error);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },

    async delete({ instanceId }) {
      checkUuid('delete', instanceId);
      try {
        try {
          await virsh('destroy', instanceId);
        } catch (error) {
          if (error instanceof VirshError && error.matches(missing)) return { outcome: 'absent' };
          if (!(error instanceof VirshError && error.matches(/not running/))) throw error;
        }
        // --nvram and storage: a domain cloud-api-adaptor made has an EFI store and per-VM volumes (§6).
        await virsh('undefine', '--nvram', '--remove-all-storage', instanceId).catch((error: unknown) => {
          if (!(error instanceof VirshError && error.matches(missing))) throw error;
        });
        return { outcome: 'deleted' };
      } catch (error) {
        throw failure('delete', error, instanceId);
      }
    },

    async get({ instanceId }): Promise<InstanceObservation> {
      checkUuid('get', instanceId);
      try {
        const [domain, state] = await Promise.all([
          readDomain(instanceId),
          virsh('domstate', instanceId).catch((error: unknown) => {
            if (error instanceof VirshError && error.matches(missing)) return undefined;
            throw error;
          }),
        ]);
        if (!domain || state === undefined) return { exists: false };
        return {
          exists: true,
          state: states[state.trim()] ?? 'unknown',
          name: domain.name,
          podUid: domain.meta?.podUid,
          marker: domain.meta?.marker === settings.marker,
        };
      } catch (error) {
        throw failure('get', error, instanceId);
      }
    },

    list,

    findByPodUid: async (podUid) => (await list()).filter((instance) => instance.podUid === podUid),
  };
}
