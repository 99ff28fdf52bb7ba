// Create: the pod VM's volumes (root disk backed by the pod-VM image, cloud-init ISO), then its domain, defined and
// started under a fresh UUID. A repeated create adopts the domain its name already holds when that domain is this
// pod's VM, and touches no volume then; volumes an attempt made before it stopped are kept and used.
import { Context } from '@temporalio/activity';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cloudFailure } from '../errors';
import { sharedWhileInFlight } from '../limit';
import type { CreateInstanceInput } from '../provider';
import { writeNoCloudIso } from './cloud-init-iso';
import { type DomainDevices, domainXml } from './domain-xml';
import { readDomain } from './lookup';
import { type Libvirt, missing, VirshError, virshSays, virshWord } from './virsh';
import { parseVolume, podVmVolumes, type VolumeInfo } from './volume-xml';

// Upstream names are [a-z0-9-]; a leading letter or digit also keeps a name from reading as a virsh option.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/** Creates pod VMs; the pod-VM image and the network are read once for the creates that run at the same time. */
export function domainCreator(libvirt: Libvirt): (input: CreateInstanceInput) => Promise<{ instanceId: string }> {
  const image = sharedWhileInFlight(() => readImage(libvirt));
  const network = sharedWhileInFlight(() => networkIfPresent(libvirt));
  return (input) => createDomain(libvirt, input, image, network);
}

async function createDomain(
  libvirt: Libvirt,
  input: CreateInstanceInput,
  image: () => Promise<VolumeInfo>,
  network: () => Promise<string | undefined>,
): Promise<{ instanceId: string }> {
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
  const dir = await mkdtemp(join(tmpdir(), 'steward-domain-'));
  try {
    const [earlier, podVmImage, vmNetwork] = await Promise.all([domainNamed(libvirt, input.name), image(), network()]);
    if (earlier !== undefined) return { instanceId: await adoptAndStart(libvirt, input, earlier) };
    const devices = { ...(await makeVolumes(libvirt, input, podVmImage, dir)), network: vmNetwork };
    return { instanceId: await defineAndStart(libvirt, input, devices, dir) };
  } catch (error) {
    throw libvirt.failure('create', error);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function defineAndStart(libvirt: Libvirt, input: CreateInstanceInput, devices: DomainDevices, dir: string) {
  const uuid: string = randomUUID();
  const file = join(dir, 'domain.xml');
  await writeFile(file, domainXml(libvirt.settings, input, uuid, devices));
  // Define and start in one virsh process: each process blocks the worker's event loop while it forks (with 20
  // VMs at once, a second of it). virsh runs both commands whatever the first one's outcome and exits with the
  // last one's, so a success means this fresh UUID was defined and started.
  try {
    await libvirt.virsh(`define ${virshWord(file)} ; start ${uuid}`);
    return uuid;
  } catch (error) {
    return adoptEarlierAttempt(libvirt, input, error);
  }
}

/** The UUID of the domain holding `name`, if one does. */
async function domainNamed({ virsh }: Libvirt, name: string) {
  try {
    return (await virsh('domuuid', name)).trim();
  } catch (error) {
    if (virshSays(error, missing)) return undefined;
    throw error;
  }
}

/** The pod-VM image volume; a pool or image that is not there is the configuration's fault, said as such. */
async function readImage({ settings, virsh }: Libvirt): Promise<VolumeInfo> {
  const { pool, imageVolume } = settings;
  const refused = (why: string) =>
    cloudFailure(
      'CloudInvalidRequest',
      `libvirt create: ${why}: LIBVIRT_POOL and LIBVIRT_VOL_NAME name the pool and the pod-VM image volume in it`,
      { provider: 'libvirt', operation: 'create' },
    );
  let xml: string;
  try {
    xml = await virsh('vol-dumpxml', '--pool', pool, imageVolume);
  } catch (error) {
    if (virshSays(error, /Storage pool not found|no storage pool/i)) throw refused(`no storage pool "${pool}"`);
    if (virshSays(error, /Storage volume not found|no storage vol/i))
      throw refused(`no volume "${imageVolume}" in pool "${pool}"`);
    throw error;
  }
  const image = parseVolume(xml);
  if (!image) throw refused(`the XML of volume "${imageVolume}" names no path, format or capacity`);
  return image;
}

/**
 * The network's name when it exists. When it does not, the VM is made without a NIC and a warning logged, not
 * refused: Steward's VMs serve tests and demos (README), often where no libvirt network can be made (a NAT network needs
 * dnsmasq and the host's network), and a VM without a NIC is still made, recorded and deleted in full.
 */
async function networkIfPresent({ settings, virsh }: Libvirt) {
  try {
    await virsh('net-info', settings.network);
    return settings.network;
  } catch (error) {
    if (!virshSays(error, /Network not found|no network with matching name/)) throw error;
    warn(`libvirt network "${settings.network}" (LIBVIRT_NET) does not exist: pod VMs are made without a NIC`);
    return undefined;
  }
}

function warn(message: string) {
  try {
    Context.current().log.warn(message);
  } catch {
    // Outside an activity (a test calling the provider) there is no activity logger; nothing else to tell.
  }
}

/**
 * The root volume and the cloud-init ISO volume; either one already there (an attempt that stopped before its define)
 * is kept. The ISO is uploaded every time, so one made and never filled is filled now.
 */
async function makeVolumes(libvirt: Libvirt, input: CreateInstanceInput, image: VolumeInfo, dir: string) {
  const { pool } = libvirt.settings;
  const plan = podVmVolumes(libvirt.settings, input, image);
  const rootFile = join(dir, 'root.xml');
  await writeFile(rootFile, plan.root.xml);
  const iso = await writeNoCloudIso(dir, plan.cloudInit.files);
  const { size } = await stat(iso);
  const exists = (error: unknown) => {
    if (!virshSays(error, /exists already|already exists/)) throw error;
  };
  await libvirt.virsh('vol-create', '--pool', pool, rootFile).catch(exists);
  await libvirt.virsh('vol-create-as', pool, plan.cloudInit.name, String(size), '--format', 'raw').catch(exists);
  await libvirt.virsh('vol-upload', '--pool', pool, plan.cloudInit.name, iso);
  // Both paths from one virsh process, which runs both commands and exits with the last one's status: one path a
  // line, so anything but two lines is a failure.
  const volPath = (name: string) => `vol-path --pool ${virshWord(pool)} ${virshWord(name)}`;
  const output = await libvirt.virsh(`${volPath(plan.root.name)} ; ${volPath(plan.cloudInit.name)}`);
  const paths = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  if (paths.length !== 2)
    throw new VirshError(
      ['vol-path'],
      `the paths of ${plan.root.name} and ${plan.cloudInit.name}: "${output.trim()}"`,
      '0',
    );
  return { rootDisk: paths[0]!, cloudInitIso: paths[1]! };
}

/** After a failed define and start: the earlier attempt's domain, started, when the define met it; else the error. */
async function adoptEarlierAttempt(libvirt: Libvirt, input: CreateInstanceInput, error: unknown) {
  // A repeated create (lost reply): libvirt names the UUID of the domain that already holds the name.
  const existing =
    error instanceof VirshError ? /already exists with uuid ([0-9a-f-]{36})/.exec(error.stderr)?.[1] : undefined;
  // Anything else (a define refused, a start that failed after the define) is retried as before: the retry
  // meets the name taken and adopts the domain.
  if (existing === undefined) throw error;
  return adoptAndStart(libvirt, input, existing);
}

/** The earlier attempt's domain, started: it may have stopped between define and start. */
async function adoptAndStart(libvirt: Libvirt, input: CreateInstanceInput, uuid: string) {
  const adopted = await adopt(libvirt, input, uuid);
  await start(libvirt, adopted);
  return adopted;
}

/** A define that met an existing name: the earlier attempt's domain when it is this pod's, else an error. */
async function adopt(libvirt: Libvirt, input: CreateInstanceInput, uuid: string) {
  const existing = await readDomain(libvirt, uuid);
  if (existing?.meta?.podUid !== input.podUid || existing.meta.marker !== libvirt.settings.marker) {
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
}

async function start({ virsh }: Libvirt, uuid: string) {
  try {
    await virsh('start', uuid);
  } catch (error) {
    if (!virshSays(error, /already active/)) throw error;
  }
}
