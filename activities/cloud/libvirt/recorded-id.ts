// Instance IDs recorded before cloud-api-adaptor v0.20.0: `dom.GetID()` as a decimal uint32, which libvirtd reuses
// after a restart. Accepted only when the domain holding that ID now is the pod's VM by name, and answered with its UUID.
import { cloudFailure } from '../errors';
import type { CloudProvider } from '../provider';
import { vmNamePodPart } from '../../../model/vm-naming';
import { type Libvirt, missing, UUID, virshSays } from './virsh';
import { attribute, child, parseXml, text } from './xml';

// libvirt's domain IDs are positive ints.
const LEGACY_ID = /^\d{1,10}$/;
const MAX_DOMAIN_ID = 2 ** 31 - 1;

/**
 * What upstream's `GenerateInstanceName(pod, sandbox, 63)` makes of a pod's VM name, as a pattern:
 * `podvm-<sanitized pod name, cut to 48>-<8 chars of the sandbox ID>`. The fixed tail keeps pod `web` from claiming
 * `podvm-web-1-…`.
 */
export const upstreamVmName = (podName: string) => new RegExp(`^podvm-${vmNamePodPart(podName)}-[a-z0-9-]{8}$`);

type RecordedId = Parameters<CloudProvider['resolveRecordedId']>[0];

export async function resolveRecordedId(libvirt: Libvirt, { instanceId, podName }: RecordedId) {
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
    domain = await domainById(libvirt, id);
  } catch (error) {
    throw libvirt.failure('resolveRecordedId', error, instanceId);
  }
  const refuse = (found: string) => legacyIdRefused(libvirt, { instanceId, podName }, found);
  if (domain === undefined) throw refuse(`no running domain has that ID now`);
  if (domain.name === undefined || !upstreamVmName(podName).test(domain.name)) {
    throw refuse(`domain ${id} is now \`${domain.name ?? '(no name)'}\`, not pod ${podName}'s VM`);
  }
  if (domain.uuid === undefined || !UUID.test(domain.uuid)) {
    throw cloudFailure(
      'CloudBadResponse',
      `libvirt resolveRecordedId (${libvirt.settings.uri}): \`virsh dumpxml ${id}\` has no domain UUID`,
      {
        provider: 'libvirt',
        operation: 'resolveRecordedId',
        instanceId,
      },
    );
  }
  return { instanceId: domain.uuid.toLowerCase() };
}

/** The domain that holds a numeric ID now: name and UUID from one `dumpxml`, so both are of the same domain. */
async function domainById({ virsh }: Libvirt, id: string) {
  try {
    const domain = child(parseXml(await virsh('dumpxml', id)), 'domain');
    // virsh falls back to a lookup by name: a domain *named* "7" is not domain 7.
    if (attribute(domain, 'id') !== id) return undefined;
    return { name: text(child(domain, 'name')), uuid: text(child(domain, 'uuid')) };
  } catch (error) {
    if (virshSays(error, missing)) return undefined;
    throw error;
  }
}

/** The non-retryable answer for a legacy ID that cannot be proved to be the pod's VM, with what to do by hand. */
function legacyIdRefused({ settings }: Libvirt, { instanceId, podName }: RecordedId, found: string) {
  const vm = `podvm-${vmNamePodPart(podName)}-…`;
  const advice =
    `the VM was probably stopped or lost in a libvirtd restart (libvirtd reuses domain IDs). Check \`virsh -c ${settings.uri} list --all\` ` +
    `for ${vm}, delete it by hand if it is there, then \`steward cleanup peerpod <namespace>/<this PeerPod> --mode orphan --reason …\``;
  return cloudFailure(
    'CloudLegacyInstanceId',
    `libvirt: the PeerPod of pod ${podName} records domain ID ${instanceId} (cloud-api-adaptor before v0.20.0), and ${found}: ${advice}`,
    { provider: 'libvirt', operation: 'resolveRecordedId', instanceId },
  );
}
