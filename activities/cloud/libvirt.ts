// The libvirt provider: `virsh` against a configured URI (ref/peerpods.md §12: no native build, the whole API,
// errors recognisable from stderr). A VM is a tiny diskless domain (§11.5); its identity lives in the domain's
// <metadata> under Steward's own XML namespace, and its instance ID is the domain UUID (stable across crashes).
// One module per concern in libvirt/: virsh and its errors, the domain XML, lookups, create, delete, recorded IDs.
import { keptOnceRead } from './limit';
import type { CloudProvider } from './provider';
import { domainCreator } from './libvirt/create';
import { deleteDomain } from './libvirt/delete';
import { createPowerReader, getDomain, listDomains, listUpstreamDomains, readHostIdentity } from './libvirt/lookup';
import { resolveRecordedId } from './libvirt/recorded-id';
import { startDomain } from './libvirt/start';
import { connectLibvirt, type LibvirtSettings } from './libvirt/virsh';

export { domainXml, METADATA_NAMESPACE, parseHostUuid, parseMetadata } from './libvirt/domain-xml';
export { upstreamVmName } from './libvirt/recorded-id';
export type { LibvirtSettings } from './libvirt/virsh';

export function createLibvirtProvider(settings: LibvirtSettings): CloudProvider {
  const libvirt = connectLibvirt(settings);
  const list = () => listDomains(libvirt);
  return {
    name: 'libvirt',
    identity: keptOnceRead(() => readHostIdentity(libvirt)),
    resolveRecordedId: (input) => resolveRecordedId(libvirt, input),
    create: domainCreator(libvirt),
    delete: ({ instanceId }) => deleteDomain(libvirt, instanceId),
    get: ({ instanceId }) => getDomain(libvirt, instanceId),
    start: ({ instanceId }) => startDomain(libvirt, instanceId),
    list,
    powerStates: createPowerReader(libvirt),
    listUpstream: () => listUpstreamDomains(libvirt),
    findByPodUid: async (podUid) => (await list()).filter((instance) => instance.podUid === podUid),
  };
}
