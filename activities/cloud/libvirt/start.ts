// Start: a pod VM found shut off (its host restarted, libvirtd with it, or someone ran `virsh shutdown`) is started
// again. Starting one that already runs changes nothing; one that is gone is `absent`, for the caller to make anew.
import { checkUuid, type Libvirt, missing, virshSays } from './virsh';

export async function startDomain(libvirt: Libvirt, instanceId: string): Promise<{ outcome: 'started' | 'absent' }> {
  checkUuid('start', instanceId);
  try {
    await libvirt.virsh('start', instanceId);
    return { outcome: 'started' };
  } catch (error) {
    if (virshSays(error, missing)) return { outcome: 'absent' };
    if (virshSays(error, /already active/)) return { outcome: 'started' };
    throw libvirt.failure('start', error, instanceId);
  }
}
