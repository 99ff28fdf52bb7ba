// Delete: destroy, then undefine with everything a domain may own. A domain already gone is `absent`.
import { checkUuid, type Libvirt, missing, virshSays } from './virsh';

export async function deleteDomain(
  { virsh, failure }: Libvirt,
  instanceId: string,
): Promise<{ outcome: 'deleted' | 'absent' }> {
  checkUuid('delete', instanceId);
  try {
    try {
      await virsh('destroy', instanceId);
    } catch (error) {
      if (virshSays(error, missing)) return { outcome: 'absent' };
      if (!virshSays(error, /not running/)) throw error;
    }
    // --nvram and storage: a domain cloud-api-adaptor made has an EFI store and per-VM volumes (§6).
    await virsh('undefine', '--nvram', '--remove-all-storage', instanceId).catch((error: unknown) => {
      if (!virshSays(error, missing)) throw error;
    });
    return { outcome: 'deleted' };
  } catch (error) {
    throw failure('delete', error, instanceId);
  }
}
