import { join } from 'node:path';
import { ensureMoto } from '../ec2';
import { ensureKubernetesBinaries } from '../kubernetes';
import { ensureLibvirtInstalled } from '../libvirt';
import { cacheRoot } from '../paths';
import { step, type Reporter } from '../progress';
import { ensureTemporalCli } from '../temporal';
import { ensureTemporalServerBinaries } from '../temporal-cluster';

/**
 * Every tool a stack test may start, built or installed once per machine (minutes on a fresh one, about a second
 * after): here, before any test, so that no test times out building one and no two stacks build one at once.
 */
export async function ensureStackTools(report: Reporter): Promise<void> {
  await step(report, 'Temporal cluster binaries (built once per machine)', () => ensureTemporalServerBinaries(report));
  await ensureTemporalCli(report);
  await ensureKubernetesBinaries(report);
  await ensureLibvirtInstalled(report, join(cacheRoot, 'logs', 'provision-libvirt.log'));
  await ensureMoto(report);
}
