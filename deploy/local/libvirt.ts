import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { installDebianPackages } from './apt';
import { capture, commandExists, ManagedProcess, waitUntil } from './process';
import { MissingPrerequisite, type Reporter } from './progress';

/**
 * libvirt with QEMU from Debian, for peer-pod VMs (domain type `qemu`, no KVM needed). As root, each stack runs a
 * `libvirtd` of its own, in the foreground as its child, in a mount namespace where the daemon's machine-wide
 * directories (/run/libvirt, /var/lib/libvirt, /etc/libvirt and the log and cache directories) are the stack's
 * (`<stateDir>/libvirt/`): its own sockets, configuration, domain definitions and QEMU driver state. So no stack
 * stops, reuses or sees another's daemon or VMs, nor the machine's; clients reach it through its socket in the URI.
 */
// qemu-utils: libvirt makes qcow2 volumes with qemu-img; xorriso: the worker makes each pod VM's cloud-init ISO;
// ovmf: UEFI firmware, whose NVRAM cloud-api-adaptor's pod VMs have and their delete removes.
const PACKAGES = ['libvirt-daemon-system', 'libvirt-clients', 'qemu-system-x86', 'qemu-utils', 'xorriso', 'ovmf'];
/** Debian's OVMF (package ovmf): the firmware code and the template of each VM's NVRAM. */
export const OVMF = { code: '/usr/share/OVMF/OVMF_CODE.fd', vars: '/usr/share/OVMF/OVMF_VARS.fd' };
const LIBVIRTD = '/usr/sbin/libvirtd';
/** What libvirtd running as root keeps where (fixed at its build), by the name of the stack's directory for it. */
const DAEMON_DIRS = {
  run: '/run/libvirt',
  lib: '/var/lib/libvirt',
  etc: '/etc/libvirt',
  log: '/var/log/libvirt',
  cache: '/var/cache/libvirt',
} as const;
type DaemonDir = keyof typeof DAEMON_DIRS;
const QEMU_CONF = `
# QEMU logs to files, so virtlogd (normally socket-activated by systemd) is not needed.
stdio_handler = "file"
# No cgroup management: works where cgroups are read-only or systemd-machined is absent.
cgroup_controllers = [ ]
`;
/**
 * A host UUID that survives a restart of the stack: it is the cloud identity Steward records with each VM (a mismatch
 * refuses to release a PeerPod), and without SMBIOS (VMs, containers) libvirtd makes up a new one at every start.
 * Chosen once per stack (its daemon is a cloud of its own), kept in the stack's libvirtd.conf.
 */
const LIBVIRTD_CONF = () => `host_uuid = "${randomUUID()}"\n`;
/** A Unix socket's path fits in 108 bytes (sun_path). */
const MAX_SOCKET_PATH = 107;

export interface Libvirt {
  uri: string;
  /** Present only when this stack started the daemon (and so stops it). */
  process?: ManagedProcess;
  stop(): Promise<void>;
}

export const virsh = (uri: string, ...args: string[]) => capture('virsh', ['-c', uri, ...args]);

/** The daemon's socket a URI names (`?socket=`), else the machine-wide daemon's. */
export const libvirtSocket = (uri: string) =>
  new URL(uri).searchParams.get('socket') ?? join(DAEMON_DIRS.run, 'libvirt-sock');

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
  const commands = ['virsh', 'qemu-system-x86_64', 'qemu-img', 'xorriso'];
  const files = [LIBVIRTD, OVMF.code].every((file) => existsSync(file));
  if (files && (await Promise.all(commands.map(commandExists))).every(Boolean)) return;
  await installDebianPackages({
    what: 'libvirt and QEMU',
    packages: PACKAGES,
    report,
    logFile,
    orElse: 'or set LIBVIRT_URI to an existing libvirt',
  });
}

/** Idempotent; without it every libvirt call re-probes QEMU (~30 s each) where /dev/kvm exists but is not usable. */
function fixKvmPermissions(): void {
  if (!existsSync('/dev/kvm')) return;
  const kvmGid = groupId('kvm');
  if (kvmGid === undefined) return;
  chownSync('/dev/kvm', 0, kvmGid);
  chmodSync('/dev/kvm', 0o660);
}

function groupId(name: string): number | undefined {
  const line = readFileSync('/etc/group', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return line ? Number(line.split(':')[2]) : undefined;
}

/** The stack's directories for the daemon, made (and its configuration written) once; a restart finds them as left. */
function daemonDirs(stateDir: string): Record<DaemonDir, string> {
  const root = resolve(stateDir, 'libvirt');
  const dirs = Object.fromEntries(Object.keys(DAEMON_DIRS).map((name) => [name, join(root, name)])) as Record<
    DaemonDir,
    string
  >;
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dirs.etc, 'qemu.conf'), QEMU_CONF);
  const libvirtdConf = join(dirs.etc, 'libvirtd.conf');
  if (!existsSync(libvirtdConf)) writeFileSync(libvirtdConf, LIBVIRTD_CONF());
  return dirs;
}

/**
 * `libvirtd` in a mount namespace of its own (unshare), with the stack's directories mounted over the machine's
 * there; the pid file, outside those directories by default (/run/libvirtd.pid), goes to the stack's too. And in a
 * PID namespace of its own: when its first process dies (unshare, the stack's child, kills it when it is killed
 * itself, even with the stack by SIGKILL), the kernel kills every QEMU the daemon started, so none outlives the stack.
 * That first process is the shell, waiting for the daemon: it reaps the QEMU processes left to it, as init would (a
 * destroyed domain's QEMU would otherwise stay a zombie, and libvirtd wait for it in vain).
 */
function daemonCommand(dirs: Record<DaemonDir, string>): [string, string[]] {
  const names = Object.keys(DAEMON_DIRS) as DaemonDir[];
  const mounts = names.map(
    (name, i) => `mkdir -p ${DAEMON_DIRS[name]} && mount --bind "$${i + 1}" ${DAEMON_DIRS[name]}`,
  );
  const script = `${mounts.join(' && ')} && shift ${names.length} && { "$@" & wait $!; }`;
  const mountThenRun = ['sh', '-c', script, 'sh', ...names.map((name) => dirs[name])];
  const daemon = [LIBVIRTD, '--pid-file', join(dirs.run, 'libvirtd.pid')];
  const namespaces = ['--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child', '--mount-proc'];
  return ['unshare', [...namespaces, '--', ...mountThenRun, ...daemon]];
}

/**
 * The storage a pod VM needs, as cloud-api-adaptor's defaults name it (LIBVIRT_POOL, LIBVIRT_VOL_NAME): the pool
 * `default` (a directory, the daemon's /var/lib/libvirt/images, which is the stack's) and in it a pod-VM image. The
 * image is an empty 64 MiB qcow2 (libvirt makes it with qemu-img): VMs backed by it show their volumes and boot
 * nothing, as a stack running no pod's containers needs. No libvirt network is made: a NAT one needs dnsmasq, and
 * its bridge would be the machine's, shared by every stack; pod VMs are made without a NIC (LIBVIRT_NET).
 */
export const PODVM_STORAGE = { pool: 'default', imageVolume: 'podvm-base.qcow2' } as const;

async function ensurePodVmStorage(uri: string): Promise<void> {
  const { pool, imageVolume } = PODVM_STORAGE;
  const pools = await virsh(uri, 'pool-list', '--all', '--name');
  if (!pools.split('\n').some((name) => name.trim() === pool)) {
    await virsh(uri, 'pool-define-as', pool, 'dir', '--target', join(DAEMON_DIRS.lib, 'images'));
    await virsh(uri, 'pool-build', pool);
    await virsh(uri, 'pool-autostart', pool);
  }
  // Started by the daemon itself after a restart (autostart); started here the first time.
  if (!/^State:\s+running/m.test(await virsh(uri, 'pool-info', pool))) await virsh(uri, 'pool-start', pool);
  const volumes = await virsh(uri, 'vol-list', pool, '--details');
  if (!volumes.split('\n').some((line) => line.trim().split(/\s+/)[0] === imageVolume))
    await virsh(uri, 'vol-create-as', pool, imageVolume, '64M', '--format', 'qcow2');
}

/** Starts the stack's own libvirtd (root only); its URI names its socket. */
export async function startLibvirt(options: { stateDir: string; report: Reporter }): Promise<Libvirt> {
  const logFile = join(options.stateDir, 'logs', 'libvirtd.log');
  await ensureLibvirtInstalled(options.report, join(options.stateDir, 'logs', 'provision-libvirt.log'));
  if (!isRoot()) {
    throw new MissingPrerequisite(
      'The stack runs a libvirtd of its own, and that needs root.',
      'run as root, or start libvirtd yourself and set LIBVIRT_URI (qemu:///session, for one)',
    );
  }
  const dirs = daemonDirs(options.stateDir);
  const socket = join(dirs.run, 'libvirt-sock');
  if (socket.length > MAX_SOCKET_PATH) {
    throw new MissingPrerequisite(
      `libvirtd's socket ${socket} would be longer than a Unix socket's path may be.`,
      'use a state directory with a shorter path (--state-dir)',
    );
  }
  fixKvmPermissions();
  const uri = `qemu:///system?socket=${socket}`;
  // Foreground (no -d), so it stays this stack's child and dies with it.
  const [cmd, args] = daemonCommand(dirs);
  // unshare ignores SIGTERM while it waits for the daemon; its domains are destroyed before it is stopped.
  const daemon = ManagedProcess.start('libvirtd', cmd, args, { logFile, stopSignal: 'SIGKILL' });
  await waitUntil('libvirtd answers', () => answers(uri), { timeoutMs: 20_000, intervalMs: 100, process: daemon });
  // The first QEMU capability probe takes seconds; do it now rather than in the first test.
  await virsh(uri, 'domcapabilities', '--virttype', 'qemu');
  await ensurePodVmStorage(uri);
  return {
    uri,
    process: daemon,
    async stop() {
      if (!daemon.running) return;
      // Running domains outlive the daemon: destroy this daemon's (all of them are the stack's) so no QEMU is left. A
      // daemon that no longer answers (killed, its exit not seen yet) took its QEMUs with it (its PID namespace).
      const listed = await virsh(uri, 'list', '--state-running', '--uuid').catch(() => '');
      const running = listed.split('\n').filter(Boolean);
      await Promise.all(running.map((uuid) => virsh(uri, 'destroy', uuid).catch(() => undefined)));
      await daemon.stop();
    },
  };
}

/** The stack's libvirt: the one at `uri` if given (someone else's: used, never stopped), else a daemon of its own. */
export async function stackLibvirt(options: { uri?: string; stateDir: string; report: Reporter }): Promise<Libvirt> {
  if (options.uri) return { uri: options.uri, stop: async () => {} };
  return startLibvirt(options);
}
