// A pod VM as cloud-api-adaptor makes it on libvirt (src/cloud-providers/libvirt/libvirt.go CreateDomain, volume.go):
// in a storage pool, a root qcow2 volume `<name>-root.qcow2` backed by the pod-VM image volume, a cloud-init NoCloud
// ISO volume `<name>-cloudinit.iso`, both named in the domain by file path; UEFI firmware with NVRAM (OVMF). Made with
// virsh, qemu-img and xorriso directly, never with Steward's code.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OVMF, virsh } from '../../deploy/local/libvirt';

const run = promisify(execFile);

/**
 * Fails, with the command that installs it, where OVMF is missing: a pod VM without NVRAM would leave the NVRAM half
 * of the delete untested (CI installs it, .ci/run; so does the stack, deploy/local/libvirt.ts).
 */
export function requireOvmf(): void {
  if (!existsSync(OVMF.code)) {
    throw new Error(
      `no OVMF firmware at ${OVMF.code}: sudo apt-get update && sudo apt-get install -y --no-install-recommends ovmf`,
    );
  }
}

export interface PodVmPool {
  name: string;
  dir: string;
  /** Where the pod VMs' NVRAM files are (not in the pool). */
  nvramDir: string;
  base: string;
  /** The volume names in the pool now, sorted. */
  volumes(): Promise<string[]>;
  remove(): Promise<void>;
}

/** A directory pool in a temporary directory with a 16 MiB pod-VM base image made by `qemu-img`. */
export async function podVmPool(uri: string, name: string): Promise<PodVmPool> {
  const dir = await mkdtemp(join(tmpdir(), 'steward-pool-'));
  const nvramDir = await mkdtemp(join(tmpdir(), 'steward-nvram-'));
  // QEMU runs as its own user (libvirt's DAC driver gives it the files, not their directories).
  await Promise.all([chmod(dir, 0o755), chmod(nvramDir, 0o755)]);
  await virsh(uri, 'pool-define-as', name, 'dir', '--target', dir);
  await virsh(uri, 'pool-start', name);
  const base = 'podvm-base.qcow2';
  await run('qemu-img', ['create', '-q', '-f', 'qcow2', join(dir, base), '16M']);
  await virsh(uri, 'pool-refresh', name);
  return {
    name,
    dir,
    nvramDir,
    base,
    async volumes() {
      await virsh(uri, 'pool-refresh', name);
      // `vol-list --name` is newer than Debian 12's virsh: the table's first column, below its rule.
      const rows = (await virsh(uri, 'vol-list', '--pool', name)).split(/^-+$/m)[1] ?? '';
      return rows
        .split('\n')
        .map((row) => row.trim().split(/\s+/)[0] ?? '')
        .filter(Boolean)
        .sort();
    },
    async remove() {
      await virsh(uri, 'pool-destroy', name).catch(() => undefined);
      await virsh(uri, 'pool-undefine', name).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      await rm(nvramDir, { recursive: true, force: true });
    },
  };
}

export interface PodVm {
  name: string;
  uuid: string;
  /** The NVRAM file (outside the pool, as libvirt keeps it). */
  nvram: string;
}

/** The NoCloud ISO: `user-data` and `meta-data` on a volume labelled `cidata` (cloud-api-adaptor's cloudinit.go). */
async function cloudInitIso(file: string, name: string) {
  const dir = await mkdtemp(join(tmpdir(), 'steward-cidata-'));
  try {
    await writeFile(join(dir, 'user-data'), '#cloud-config\nwrite_files: []\n');
    await writeFile(join(dir, 'meta-data'), `instance-id: ${name}\nlocal-hostname: ${name}\n`);
    await run('xorriso', ['-as', 'mkisofs', '-quiet', '-output', file, '-volid', 'cidata', '-joliet', '-rock', dir]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Defines (and starts, unless told not to) a cloud-api-adaptor pod VM named `name` with its volumes in `pool`. */
export async function caaPodVm(uri: string, pool: PodVmPool, name: string, start = true): Promise<PodVm> {
  const scratch = await mkdtemp(join(tmpdir(), 'steward-podvm-'));
  try {
    return await define(uri, pool, name, scratch, start);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The volumes, then the domain; its XML and the ISO's first copy in `scratch`, and its NVRAM in `nvramDir`. */
async function define(uri: string, pool: PodVmPool, name: string, scratch: string, start: boolean): Promise<PodVm> {
  const root = `${name}-root.qcow2`;
  await virsh(uri, 'vol-create-as', pool.name, root, '32M', '--format', 'qcow2', '--backing-vol', pool.base);
  await virsh(uri, 'vol-create-as', pool.name, `${name}-cloudinit.iso`, '1M', '--format', 'raw');
  const iso = join(pool.dir, `${name}-cloudinit.iso`);
  await cloudInitIso(join(scratch, 'cidata.iso'), name);
  await virsh(uri, 'vol-upload', '--pool', pool.name, `${name}-cloudinit.iso`, join(scratch, 'cidata.iso'));
  // Outside the pool, as libvirt keeps NVRAM (/var/lib/libvirt/qemu/nvram): not a volume.
  requireOvmf();
  const nvram = join(pool.nvramDir, `${name}_VARS.fd`);
  const firmware = `<loader readonly='yes' type='pflash'>${OVMF.code}</loader><nvram template='${OVMF.vars}'>${nvram}</nvram>`;
  const xml = `<domain type='qemu'><name>${name}</name><description>This Virtual Machine is the peer-pod VM</description>
  <memory unit='MiB'>64</memory><vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type>${firmware}</os><features><acpi/><apic/></features>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='${join(pool.dir, root)}'/>
      <target dev='sda' bus='sata'/></disk>
    <disk type='file' device='cdrom'><driver name='qemu' type='raw'/><source file='${iso}'/>
      <target dev='hda' bus='ide'/><readonly/></disk>
    <memballoon model='none'/></devices></domain>`;
  await writeFile(join(scratch, 'domain.xml'), xml);
  await virsh(uri, 'define', join(scratch, 'domain.xml'));
  if (start) await virsh(uri, 'start', name);
  const uuid = (await virsh(uri, 'domuuid', name)).trim();
  return { name, uuid, nvram };
}
