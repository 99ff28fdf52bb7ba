// The cloud-init NoCloud seed as an ISO 9660 image with the volume label `cidata` (cloud-api-adaptor builds the same
// in memory with a Go library, cloudinit.go). Made here by xorriso (GNU, maintained, in Debian), run where the worker
// runs: the image is then uploaded over the libvirt connection, so a remote libvirt host needs nothing of it. No npm
// ISO 9660 writer is well kept enough to carry instead.
import { exec, ExecError } from '../../../platform/exec';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cloudFailure } from '../errors';

/** Writes `files` into `dir` and makes `<dir>/cidata.iso` of them (Joliet and Rock Ridge, as cloud-localds does). */
export async function writeNoCloudIso(dir: string, files: Record<string, string>): Promise<string> {
  const names = Object.keys(files);
  for (const name of names) await writeFile(join(dir, name), files[name]!);
  const iso = join(dir, 'cidata.iso');
  const args = ['-as', 'mkisofs', '-quiet', '-output', iso, '-volid', 'cidata', '-joliet', '-rock', ...names];
  try {
    await exec('xorriso', args, { cwd: dir, timeoutMs: 30_000 });
  } catch (error) {
    const missing = error instanceof ExecError && error.code === 'ENOENT';
    const message = missing
      ? 'xorriso is not installed where the worker runs (Debian: apt-get install xorriso); it makes the cloud-init ISO'
      : `xorriso: ${(error instanceof ExecError && error.stderr.trim()) || (error as Error).message}`;
    throw cloudFailure(missing ? 'CloudInvalidRequest' : 'CloudUnavailable', message, {
      provider: 'libvirt',
      operation: 'create',
    });
  }
  return iso;
}
