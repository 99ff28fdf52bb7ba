/**
 * The manifests' libvirt over qemu+ssh, for real: the worker's cloud activities, in a process set up as the worker's
 * pod (the image's `node` user at the manifest's uid and groups, the Secret ssh-key-secret at its mount, the
 * ConfigMap's LIBVIRT_URI), create and delete a peer-pod VM on a libvirtd reached through an sshd of the test's own;
 * and a known_hosts that does not pin the sshd's host key stops them before any login.
 *
 * The far side: the URI names `/system` and no `socket=` (libvirt then runs virt-ssh-helper there, which connects to
 * the system daemon; with `socket=` it runs `nc -U` instead, which Debian's libvirt does not bring). So sshd runs in a
 * mount namespace where /run/libvirt is this test's libvirtd's run directory: its system daemon is the test's.
 */
import * as k8s from '@kubernetes/client-node';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { freePort } from '../worker/ports';
import { libvirtSocket, startLibvirt, virsh, type Libvirt } from './local/libvirt';
import { repoRoot } from './local/paths';
import { retryWhenPortTaken } from './local/ports';
import { ManagedProcess, waitUntil } from './local/process';
import { MissingPrerequisite } from './local/progress';

const SSHD = '/usr/sbin/sshd';
/** The image's user: node:24-bookworm-slim's `node` (deploy/image/Dockerfile), whose uid is the manifest's. */
const IMAGE_USER = { name: 'node', home: '/home/node' };

const objects = k8s.loadAllYaml(
  readFileSync(join(__dirname, 'manifests', 'steward.yaml'), 'utf8'),
) as k8s.KubernetesObject[];
const configMap = objects.find((o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap')!;
const workerPod = objects.find((o): o is k8s.V1Deployment => o.metadata?.name === 'steward-worker')!.spec!.template
  .spec!;
const manifestUri = new URL(configMap.data!.LIBVIRT_URI!);
const keyfile = manifestUri.searchParams.get('keyfile')!;
const sshMount = workerPod.containers[0]!.volumeMounts!.find((m) => keyfile.startsWith(`${m.mountPath}/`))!;
const sshVolume = workerPod.volumes!.find((v) => v.name === sshMount.name)!.secret!;
const { runAsUser: uid, runAsGroup: gid, fsGroup } = workerPod.securityContext as Required<k8s.V1PodSecurityContext>;

let dir: string;
let libvirt: Libvirt;
let sshd: ManagedProcess;
/** LIBVIRT_URI as the ConfigMap gives it, with the port of the test's sshd (its host name resolves to it). */
let uri: string;
let hostKey: string;
let clientKey: string;
/** The pod's view of the machine: /etc/passwd with the image's user, /etc/hosts naming the sshd, /home. */
let podFiles: { passwd: string; hosts: string; homes: string };

const keygen = (file: string, type: 'ed25519' | 'rsa') => {
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'steward-test', '-f', file]);
  return file;
};
/** A known_hosts line pinning the public key of `key` for the URI's host and port, as ssh-keyscan writes it. */
const knownHost = (key: string) => {
  const [type, blob] = readFileSync(`${key}.pub`, 'utf8').split(' ');
  return `[${manifestUri.hostname}]:${new URL(uri).port} ${type} ${blob}\n`;
};

/**
 * A folder as the kubelet writes a Secret volume: each key a relative symlink through `..data` to a timestamped
 * folder, the folders open to all, each file root's, of the pod's fsGroup, at the volume's defaultMode.
 */
function secretVolume(files: Record<string, string>): string {
  const volume = mkdtempSync(join(dir, 'secret-'));
  chmodSync(volume, 0o755);
  const stamp = '..2026_01_01_00_00_00.000000000';
  const payload = join(volume, stamp);
  mkdirSync(payload, { mode: 0o755 });
  symlinkSync(stamp, join(volume, '..data'));
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(payload, name), content);
    chownSync(join(payload, name), 0, fsGroup);
    chmodSync(join(payload, name), sshVolume.defaultMode!);
    symlinkSync(join('..data', name), join(volume, name));
  }
  return volume;
}

async function startSshd(): Promise<ManagedProcess> {
  const logFile = join(dir, 'sshd.log');
  return retryWhenPortTaken(logFile, async () => {
    const port = await freePort();
    const config = join(dir, 'sshd_config');
    // Its own host key and authorized_keys, nothing of /etc/ssh. StrictModes would refuse them under /tmp (a
    // world-writable parent); PAM is not needed for a key login.
    writeFileSync(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        'StrictModes no',
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'PidFile none',
        'LogLevel VERBOSE',
        '',
      ].join('\n'),
    );
    const url = new URL(manifestUri);
    url.port = String(port);
    uri = url.toString();
    // /run a tmpfs of its own: sshd's privilege separation directory, and the test's libvirtd as the system one.
    const script =
      'mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/sshd /run/libvirt && mount --bind "$1" /run/libvirt && ' +
      `exec ${SSHD} -D -e -f "$2"`;
    const libvirtRun = dirname(libvirtSocket(libvirt.uri));
    const args = ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh', libvirtRun, config];
    const server = ManagedProcess.start('sshd', 'unshare', args, { logFile });
    await waitUntil('sshd listens', () => Promise.resolve(readFileSync(logFile, 'utf8').includes(`port ${port}.`)), {
      timeoutMs: 10_000,
      intervalMs: 100,
      process: server,
    });
    return server;
  });
}

function writePodFiles(): typeof podFiles {
  const passwd = join(dir, 'passwd');
  const others = readFileSync('/etc/passwd', 'utf8').replace(new RegExp(`^[^:]*:[^:]*:${uid}:.*\\n`, 'gm'), '');
  writeFileSync(passwd, `${others}${IMAGE_USER.name}:x:${uid}:${gid}::${IMAGE_USER.home}:/bin/sh\n`);
  const hosts = join(dir, 'hosts');
  writeFileSync(hosts, `${readFileSync('/etc/hosts', 'utf8')}127.0.0.1 ${manifestUri.hostname}\n`);
  // Mounted over /home: the user's home, root's and not writable (the pod's root filesystem is read-only), with the
  // Secret's mount point in it.
  const homes = join(dir, 'home');
  mkdirSync(join(homes, relative(dirname(IMAGE_USER.home), sshMount.mountPath)), { recursive: true });
  return { passwd, hosts, homes };
}

/** One worker activity's outcome: its result, or the failure's type and message. */
interface Outcome<T> {
  result?: T;
  failure?: { type: string; message: string };
}

// What the worker does for one activity: the cloud settings from its environment, the cloud activities over them.
const activityScript = `
  const { createCloudActivities, createCloudProvider, loadCloudConfig } = require('./activities/cloud');
  const [name, input] = process.argv.slice(1);
  const activities = createCloudActivities({ provider: createCloudProvider(loadCloudConfig()) });
  activities[name](JSON.parse(input)).then(
    (result) => console.log(JSON.stringify({ result })),
    (error) => console.log(JSON.stringify({ failure: { type: error.type, message: error.message } })),
  );
`;

/**
 * Runs cloud activity `name` as the worker's pod would: as the manifest's uid and groups, named as in the image, the
 * Secret `secret` read-only at its mount, the ConfigMap as its environment, the URI's host name resolving to the
 * sshd, and no terminal (its own session), so ssh can ask nobody about an unknown host.
 */
async function inWorkerPod<T>(secret: string, name: string, input: unknown, libvirtUri = uri): Promise<Outcome<T>> {
  const mounts = [
    'mount --bind "$1" /etc/passwd',
    'mount --bind "$2" /etc/hosts',
    `mount --bind "$3" ${dirname(IMAGE_USER.home)}`,
    'mount -o bind,ro "$4" "$5"',
  ];
  const script = `${mounts.join(' && ')} && shift 5 && exec "$@"`;
  const drop = ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, `--groups=${fsGroup}`, '--'];
  const node = [process.execPath, '--import', 'tsx', '-e', activityScript, name, JSON.stringify(input)];
  const args = ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'sh'];
  const { passwd, hosts, homes } = podFiles;
  const child = spawn('unshare', [...args, passwd, hosts, homes, secret, sshMount.mountPath, ...drop, ...node], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH!, HOME: IMAGE_USER.home, ...configMap.data, LIBVIRT_URI: libvirtUri },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`the worker's process exited with ${code}: ${stderr}`);
  return JSON.parse(stdout) as Outcome<T>;
}

const logins = () => readFileSync(sshd.logFile, 'utf8').match(/^Accepted publickey for root .*$/gm) ?? [];
const fingerprint = (key: string) => execFileSync('ssh-keygen', ['-l', '-f', `${key}.pub`], { encoding: 'utf8' });

beforeAll(async () => {
  if (!existsSync(SSHD)) {
    throw new MissingPrerequisite(
      `No sshd (${SSHD}): the test serves libvirt over ssh.`,
      'apt-get install openssh-server',
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'steward-ssh-'));
  hostKey = keygen(join(dir, 'host_key'), 'ed25519');
  clientKey = keygen(join(dir, 'id_rsa'), 'rsa');
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`));
  libvirt = await startLibvirt({ stateDir: join(dir, 'stack'), report: () => {} });
  sshd = await startSshd();
  podFiles = writePodFiles();
}, 120_000);

afterAll(async () => {
  await sshd?.stop();
  await libvirt?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const pod = { podUid: '5d6c5a1e-0000-4000-8000-000000000001', podNamespace: 'default', podName: 'web-peer' };

it('creates and deletes a peer-pod VM over qemu+ssh with the Secret laid out as the worker mounts it', async () => {
  const secret = secretVolume({ id_rsa: readFileSync(clientKey, 'utf8'), known_hosts: knownHost(hostKey) });
  const vm = { ...pod, name: 'podvm-web-peer-ssh' };

  const created = await inWorkerPod<{ instanceId: string; provider: string; cloud: string }>(
    secret,
    'cloudCreateVm',
    vm,
  );
  expect(created.failure).toBeUndefined();
  const { instanceId, provider, cloud } = created.result!;
  expect(provider).toBe('libvirt');
  // Made on the daemon behind the sshd (asked on its own socket), logged in with the Secret's key.
  expect((await virsh(libvirt.uri, 'domstate', instanceId)).trim()).toBe('running');
  expect(logins().at(-1)).toContain(fingerprint(clientKey).split(' ')[1]);

  const recorded = { provider: 'libvirt', cloud, instanceId, podName: vm.podName };
  expect(await inWorkerPod(secret, 'cloudObserveRecordedVm', recorded)).toMatchObject({
    result: { exists: true, state: 'running', podUid: pod.podUid },
  });
  expect(await inWorkerPod(secret, 'cloudDeletePodVms', { vm: recorded, podUid: pod.podUid })).toEqual({
    result: { deleted: [instanceId], absent: [] },
  });
  expect((await virsh(libvirt.uri, 'list', '--all', '--name')).trim()).toBe('');
});

it.each([
  {
    case: 'pins another host key for the host',
    knownHosts: () => knownHost(keygen(join(dir, 'other_host_key'), 'ed25519')),
    // ssh names the file it checked: the Secret's, at the user's ~/.ssh.
    says: `Offending ED25519 key in ${sshMount.mountPath}/known_hosts`,
  },
  // No terminal to ask on: refused, never trusted on first use.
  { case: 'does not know the host', knownHosts: () => '', says: 'Cannot recv data: Host key verification failed.' },
])('refuses the host when known_hosts $case: CloudUnavailable, no login, no VM', async ({ knownHosts, says }) => {
  const secret = secretVolume({ id_rsa: readFileSync(clientKey, 'utf8'), known_hosts: knownHosts() });
  const before = logins().length;

  const { failure } = await inWorkerPod(secret, 'cloudCreateVm', { ...pod, name: 'podvm-web-peer-refused' });
  expect(failure?.type).toBe('CloudUnavailable');
  expect(failure?.message).toContain('Host key verification failed');
  expect(failure?.message).toContain(says);
  expect(logins()).toHaveLength(before);
  expect((await virsh(libvirt.uri, 'list', '--all', '--name')).trim()).toBe('');
});

it("takes cloud-api-adaptor's ssh-key-secret (id_rsa alone) and its URI form (no keyfile, no_verify=1): the host key unchecked, as there", async () => {
  const secret = secretVolume({ id_rsa: readFileSync(clientKey, 'utf8') });
  // cloud-api-adaptor's default URI (src/cloud-providers/libvirt/manager.go), at the test's sshd.
  const caaUri = new URL(uri);
  caaUri.search = '?no_verify=1';
  const vm = { ...pod, name: 'podvm-web-peer-caa' };
  const before = logins().length;

  const created = await inWorkerPod<{ instanceId: string; cloud: string }>(
    secret,
    'cloudCreateVm',
    vm,
    caaUri.toString(),
  );
  expect(created.failure).toBeUndefined();
  const { instanceId, cloud } = created.result!;
  expect((await virsh(libvirt.uri, 'domstate', instanceId)).trim()).toBe('running');
  // ssh offered ~/.ssh/id_rsa, the Secret's, unasked.
  expect(logins().slice(before).at(-1)).toContain(fingerprint(clientKey).split(' ')[1]);
  const recorded = { provider: 'libvirt', cloud, instanceId, podName: vm.podName };
  expect(
    await inWorkerPod(secret, 'cloudDeletePodVms', { vm: recorded, podUid: pod.podUid }, caaUri.toString()),
  ).toEqual({ result: { deleted: [instanceId], absent: [] } });
  expect((await virsh(libvirt.uri, 'list', '--all', '--name')).trim()).toBe('');
});
