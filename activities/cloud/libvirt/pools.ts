// libvirt's storage pools as the delete and the leak listing need them: each pool's target directory, and whether it is
// active. A pool that is not active answers "no such volume" for every path in it, so "not found" means "deleted" only
// where the pool holding the path is active.
import type { Libvirt } from './virsh';
import { child, parseXml, text } from './xml';

export interface PoolDir {
  name: string;
  active: boolean;
  /** The pool's target directory; undefined for a pool with none (e.g. an iSCSI or RBD pool). */
  dir?: string;
}

/** The target directory in `virsh pool-dumpxml`. */
export const poolTargetDir = (xml: string) => text(child(parseXml(xml), 'pool', 'target', 'path')) || undefined;

const names = async ({ virsh }: Libvirt, which: '--inactive' | '--all') =>
  (await virsh('pool-list', which, '--name'))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

export async function listPoolDirs(libvirt: Libvirt): Promise<PoolDir[]> {
  const [all, inactive] = await Promise.all([names(libvirt, '--all'), names(libvirt, '--inactive')]);
  return Promise.all(
    all.map(async (name) => ({
      name,
      active: !inactive.includes(name),
      dir: poolTargetDir(await libvirt.virsh('pool-dumpxml', name)),
    })),
  );
}

/** The pool whose directory holds `path`, if any. */
export const poolHolding = (pools: PoolDir[], path: string) =>
  pools.find(({ dir }) => dir !== undefined && path.startsWith(`${dir.replace(/\/+$/, '')}/`));
