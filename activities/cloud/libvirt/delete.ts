// Delete: the domain with everything it owns (deletion-plan.ts says what), for Steward's domains and for
// cloud-api-adaptor's alike. The volumes go before the domain is undefined: while the domain is defined, its XML still
// names them, so a delete interrupted halfway is finished by the next attempt (a volume already gone is done). Once
// undefined, nothing would name them any more. A domain already gone is `absent`.
import { cloudFailure } from '../errors';
import { describeVolume, planDeletion, type VolumeRef } from './deletion-plan';
import { listPoolDirs, poolHolding } from './pools';
import { checkUuid, type Libvirt, missing, virshSays } from './virsh';

const volumeMissing = /Storage volume not found|no storage vol with matching/;
const poolMissing = /Storage pool not found|no storage pool with matching/;

export async function deleteDomain(
  libvirt: Libvirt,
  instanceId: string,
): Promise<{ outcome: 'deleted' | 'absent'; kept?: string[] }> {
  checkUuid('delete', instanceId);
  try {
    const xmls = await domainXmls(libvirt, instanceId);
    if (xmls === undefined) return { outcome: 'absent' };
    const plan = planDeletion(xmls);
    await destroy(libvirt, instanceId);
    const kept = [...plan.kept];
    for (const volume of plan.volumes) {
      const why = await deleteVolume(libvirt, volume);
      if (why) kept.push(`${describeVolume(volume)}: ${why}`);
    }
    // --nvram: cloud-api-adaptor's UEFI domains have an NVRAM file, which a plain undefine refuses to leave behind.
    // Managed-save images and snapshot and checkpoint metadata would each refuse the undefine too.
    await libvirt
      .virsh('undefine', '--nvram', '--managed-save', '--snapshots-metadata', '--checkpoints-metadata', instanceId)
      .catch((error: unknown) => {
        if (!virshSays(error, missing)) throw error;
      });
    return { outcome: 'deleted', ...(kept.length ? { kept } : {}) };
  } catch (error) {
    throw libvirt.failure('delete', error, instanceId);
  }
}

/** The live XML and the persistent one (they differ by hot-plugged disks); undefined when the domain is gone. */
async function domainXmls({ virsh }: Libvirt, uuid: string): Promise<string[] | undefined> {
  try {
    return [await virsh('dumpxml', uuid), await virsh('dumpxml', '--inactive', uuid)];
  } catch (error) {
    if (virshSays(error, missing)) return undefined;
    throw error;
  }
}

async function destroy({ virsh }: Libvirt, uuid: string) {
  try {
    await virsh('destroy', uuid);
  } catch (error) {
    // A transient domain is gone once destroyed; its volumes are still deleted from the plan.
    if (!virshSays(error, /not running|domain is not running/) && !virshSays(error, missing)) throw error;
  }
}

/**
 * Deletes one volume; a volume or pool already gone is done. Answers why a volume was left, if it was. A path no pool
 * volume has is done only when an active pool's directory holds it: in an inactive pool's directory it is a volume
 * libvirt cannot see until the pool is started (a retryable failure: the domain stays defined, so the retry still
 * knows the path); outside every pool it is a file libvirt cannot delete, and it may be shared, so it stays.
 */
async function deleteVolume(libvirt: Libvirt, volume: VolumeRef): Promise<string | undefined> {
  try {
    // A path as the volume: virsh finds the pool volume whose key or path it is (vol-delete's lookup).
    if ('path' in volume) await libvirt.virsh('vol-delete', '--vol', volume.path);
    else await libvirt.virsh('vol-delete', '--pool', volume.pool, '--vol', volume.volume);
    return undefined;
  } catch (error) {
    if ('path' in volume && virshSays(error, volumeMissing)) return unfoundPath(libvirt, volume.path);
    if (virshSays(error, volumeMissing) || virshSays(error, poolMissing)) return undefined;
    throw error;
  }
}

async function unfoundPath(libvirt: Libvirt, path: string): Promise<string | undefined> {
  const pool = poolHolding(await listPoolDirs(libvirt), path);
  if (!pool) return 'in no libvirt storage pool (libvirt deletes only pool volumes): left as it is';
  if (pool.active) return undefined;
  throw cloudFailure(
    'CloudUnavailable',
    `libvirt delete (${libvirt.settings.uri}): ${path} is in storage pool "${pool.name}", which is not active, so ` +
      `libvirt cannot find or delete it; the domain is kept until the pool is started (virsh pool-start ${pool.name})`,
    { provider: 'libvirt', operation: 'delete' },
  );
}
