import { appendFileSync, chmodSync, chownSync, existsSync, readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { installDebianPackages } from './apt';
import { capture, commandExists, ManagedProcess, waitUntil } from './process';
import { MissingPrerequisite, type Reporter } from './progress';

/**
 * libvirt with QEMU from Debian, for peer-pod VMs (domain type `qemu`, no KVM needed). As root, the stack installs
 * and configures it as ref/peerpods.md §11 describes, then runs `libvirtd` in the foreground as its own child.
 */
export const SYSTEM_URI = 'qemu:///system';
const PACKAGES = ['libvirt-daemon-system', 'libvirt-clients', 'qemu-system-x86'];
const LIBVIRTD = '/usr/sbin/libvirtd';
const QEMU_CONF = '/etc/libvirt/qemu.conf';
const QEMU_SETTINGS: Record<string, string> = {
  // QEMU logs to files, so virtlogd (normally socket-activated by systemd) is not needed.
  stdio_handler: '"file"',
  // No cgroup management: works where cgroups are read-only or systemd-machined is absent.
  cgroup_controllers: '[ ]',
};
const LIBVIRTD_CONF = '/etc/libvirt/libvirtd.conf';
/**
 * A host UUID that survives a restart: it is the cloud identity Steward records with each VM (a mismatch refuses to
 * release a PeerPod), and without SMBIOS (VMs, containers) libvirtd makes up a new one at every start.
 */
const LIBVIRTD_SETTINGS = (): Record<string, string> =>
  existsSync('/etc/machine-id') && readFileSync('/etc/machine-id', 'utf8').trim()
    ? { host_uuid_source: '"machine-id"' }
    : { host_uuid: `"${randomUUID()}"` };

export interface Libvirt {
  uri: string;
  /** Present only when this stack started the daemon (and so stops it). */
  process?: ManagedProcess;
  stop(): Promise<void>;
}

export const virsh = (uri: string, ...args: string[]) => capture('virsh', ['-c', uri, ...args]);

async function answers(uri: string): Promise<boolean> {
  try {
    await virsh(uri, 'uri');
    return true;
  } catch {
    return false;
  }
}

const isRoot = () => process.getuid?.() === 0;

export async function ensureLibvirtInstalled(report: Reporter, logFile: string): Promise<void> {
  if ((await commandExists('virsh')) && existsSync(LIBVIRTD) && (await commandExists('qemu-system-x86_64'))) return;
  await installDebianPackages({
    what: 'libvirt and QEMU',
    packages: PACKAGES,
    report,
    logFile,
    orElse: 'or set LIBVIRT_URI to an existing libvirt',
  });
}

/** Idempotent host settings; without the /dev/kvm fix every libvirt call re-probes QEMU (~30 s each). */
function configureHost(): void {
  if (existsSync('/dev/kvm')) {
    const kvmGid = groupId('kvm');
    if (kvmGid !== undefined) {
      chownSync('/dev/kvm', 0, kvmGid);
      chmodSync('/dev/kvm', 0o660);
    }
  }
  setOnce(QEMU_CONF, QEMU_SETTINGS);
  setOnce(LIBVIRTD_CONF, LIBVIRTD_SETTINGS());
}

/** Appends each setting the file does not set yet; a host UUID set either way (chosen once, or by source) stays. */
function setOnce(file: string, settings: Record<string, string>): void {
  const conf = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const isSet = (key: string) =>
    new RegExp(`^\\s*${key.startsWith('host_uuid') ? 'host_uuid\\w*' : key}\\s*=`, 'm').test(conf);
  for (const [key, value] of Object.entries(settings)) if (!isSet(key)) appendFileSync(file, `\n${key} = ${value}\n`);
}

function groupId(name: string): number | undefined {
  const line = readFileSync('/etc/group', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return line ? Number(line.split(':')[2]) : undefined;
}

export async function startLibvirt(options: { stateDir: string; report: Reporter }): Promise<Libvirt> {
  const logFile = join(options.stateDir, 'logs', 'libvirtd.log');
  await ensureLibvirtInstalled(options.report, join(options.stateDir, 'logs', 'provision-libvirt.log'));
  if (await answers(SYSTEM_URI)) return { uri: SYSTEM_URI, stop: async () => {} };
  if (!isRoot()) {
    throw new MissingPrerequisite(
      'libvirtd is not running, and starting it needs root.',
      'run as root, or start libvirtd yourself and set LIBVIRT_URI=qemu:///system',
    );
  }
  configureHost();
  // Foreground (no -d), so it stays this stack's child and dies with it.
  const daemon = ManagedProcess.start('libvirtd', LIBVIRTD, ['--pid-file', join(options.stateDir, 'libvirtd.pid')], {
    logFile,
  });
  await waitUntil('libvirtd answers', () => answers(SYSTEM_URI), {
    timeoutMs: 20_000,
    intervalMs: 100,
    process: daemon,
  });
  // The first QEMU capability probe takes seconds; do it now rather than in the first test.
  await virsh(SYSTEM_URI, 'domcapabilities', '--virttype', 'qemu');
  return {
    uri: SYSTEM_URI,
    process: daemon,
    async stop() {
      if (!daemon.running) return;
      // Running domains outlive the daemon: destroy the ones started through it so no QEMU process is left.
      const running = (await virsh(SYSTEM_URI, 'list', '--state-running', '--uuid')).split('\n').filter(Boolean);
      await Promise.all(running.map((uuid) => virsh(SYSTEM_URI, 'destroy', uuid).catch(() => undefined)));
      await daemon.stop();
    },
  };
}
