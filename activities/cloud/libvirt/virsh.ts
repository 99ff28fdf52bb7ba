// `virsh` against the configured URI, and what its errors mean: libvirt's errors are recognisable only from stderr
// (ref/peerpods.md §12).
import { exec, ExecError } from '../../../platform/exec';
import { cloudFailure, type CloudFailureType } from '../errors';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LibvirtSettings {
  uri: string;
  /** `qemu` (software emulation, works anywhere) or `kvm`. */
  domainType: 'qemu' | 'kvm';
  memoryMiB: number;
  vcpus: number;
  emulator: string;
  /** The storage pool of the VMs' volumes and of the pod-VM image (cloud-api-adaptor's LIBVIRT_POOL); cloud-api-adaptor's VMs are looked for there. */
  pool: string;
  /** The pod-VM image: the volume in `pool` each root disk is backed by (LIBVIRT_VOL_NAME). */
  imageVolume: string;
  /** Root disk size in GiB, never below the image's own (LIBVIRT_ROOT_DISK_SIZE). */
  rootDiskGiB: number;
  /** The libvirt network of the VMs' NIC (LIBVIRT_NET); a VM is made without one when it does not exist. */
  network: string;
  /** The value that marks Steward's VMs (provider.ts). */
  marker: string;
  /** Parallel `virsh` calls when listing. */
  concurrency: number;
  /** Per `virsh` call; destroy of a TCG domain takes ~1.5 s (§11.6). */
  timeoutMs: number;
}

// A request libvirt refuses as such. Everything else (cannot connect, daemon restarting, QEMU failing to start, a
// timeout) is retryable: libvirt's messages are too varied to call the rest permanent.
const invalidRequest =
  /XML error|XML document failed to validate|unsupported configuration|invalid argument|Cannot find .*emulator|Cannot check QEMU binary/i;

export class VirshError extends Error {
  constructor(
    readonly args: string[],
    readonly stderr: string,
    readonly code: string,
  ) {
    super(`virsh ${args.join(' ')}: ${stderr || code}`);
  }
  matches = (pattern: RegExp) => pattern.test(this.stderr);
}

/** True when `error` is virsh failing with a stderr that matches `pattern`. */
export const virshSays = (error: unknown, pattern: RegExp) => error instanceof VirshError && error.matches(pattern);

export const missing = /failed to get domain|Domain not found/;

/** One word of a virsh command string: every character but [A-Za-z0-9_/-] escaped with a backslash. */
export const virshWord = (s: string) => s.replace(/[^A-Za-z0-9_/-]/g, (c) => `\\${c}`);

/** What every libvirt operation works with: the settings, virsh on their URI, and the failure for an unhandled error. */
export interface Libvirt {
  settings: LibvirtSettings;
  virsh: (...args: string[]) => Promise<string>;
  failure: (operation: string, error: unknown, instanceId?: string) => unknown;
}

export const connectLibvirt = (settings: LibvirtSettings): Libvirt => ({
  settings,
  virsh: (...args) => runVirsh(settings, args),
  failure: (operation, error, instanceId) => virshFailure(settings.uri, operation, error, instanceId),
});

async function runVirsh(settings: LibvirtSettings, args: string[]) {
  try {
    return (
      await exec('virsh', ['-c', settings.uri, ...args], { timeoutMs: settings.timeoutMs, maxBuffer: 16 * 1024 * 1024 })
    ).stdout;
  } catch (error) {
    if (!(error instanceof ExecError)) throw error;
    const code = error.killed ? `timed out after ${settings.timeoutMs} ms` : String(error.code ?? error.signal);
    throw new VirshError(
      args,
      error.stderr
        .replace(/^error: /gm, '')
        .trim()
        .replace(/\n+/g, '; '),
      code,
    );
  }
}

/** The failure for a virsh error no caller handled. */
function virshFailure(uri: string, operation: string, error: unknown, instanceId?: string) {
  if (!(error instanceof VirshError)) return error;
  const type: CloudFailureType = error.matches(invalidRequest) ? 'CloudInvalidRequest' : 'CloudUnavailable';
  return cloudFailure(
    type,
    `libvirt ${operation} (${uri}): ${error.message}`,
    { provider: 'libvirt', operation, code: error.code, instanceId },
    error,
  );
}

export const checkUuid = (operation: string, instanceId: string) => {
  if (!UUID.test(instanceId)) {
    throw cloudFailure(
      'CloudInvalidRequest',
      `libvirt ${operation}: instance ID "${instanceId}" is not a domain UUID`,
      {
        provider: 'libvirt',
        operation,
        instanceId,
      },
    );
  }
};
