// Create: define and start a domain under a fresh UUID; a repeated create adopts the domain its name already holds
// when that domain is this pod's VM.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cloudFailure } from '../errors';
import type { CreateInstanceInput } from '../provider';
import { domainXml } from './domain-xml';
import { readDomain } from './lookup';
import { type Libvirt, VirshError, virshSays, virshWord } from './virsh';

// Upstream names are [a-z0-9-]; a leading letter or digit also keeps a name from reading as a virsh option.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

export async function createDomain(libvirt: Libvirt, input: CreateInstanceInput): Promise<{ instanceId: string }> {
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
    await writeFile(file, domainXml(libvirt.settings, input, uuid));
    // Define and start in one virsh process: each process blocks the worker's event loop while it forks (with 20
    // VMs at once, a second of it). virsh runs both commands whatever the first one's outcome and exits with the
    // last one's, so a success means this fresh UUID was defined and started.
    try {
      await libvirt.virsh(`define ${virshWord(file)} ; start ${uuid}`);
      return { instanceId: uuid };
    } catch (error) {
      return { instanceId: await adoptEarlierAttempt(libvirt, input, error) };
    }
  } catch (error) {
    throw libvirt.failure('create', error);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** After a failed define and start: the earlier attempt's domain, started, when the define met it; else the error. */
async function adoptEarlierAttempt(libvirt: Libvirt, input: CreateInstanceInput, error: unknown) {
  // A repeated create (lost reply): libvirt names the UUID of the domain that already holds the name.
  const existing =
    error instanceof VirshError ? /already exists with uuid ([0-9a-f-]{36})/.exec(error.stderr)?.[1] : undefined;
  // Anything else (a define refused, a start that failed after the define) is retried as before: the retry
  // meets the name taken and adopts the domain.
  if (existing === undefined) throw error;
  const adopted = await adopt(libvirt, input, existing);
  // The earlier attempt may have stopped between define and start.
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
