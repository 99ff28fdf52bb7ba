import { bundleWorkflowCode } from '@temporalio/worker';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Steward's workflows: the worker's only workflow entry. */
export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Bundles the workflow code once, as every worker would at its start, and writes it to `out` (through a temporary
 * file, so a worker never reads half of one). Workers given the file (STEWARD_WORKFLOW_BUNDLE) skip webpack: less
 * memory kept after it and no bundling CPU at each start. The bundle is only right for the sources it came from.
 */
export async function writeWorkflowBundle(out: string, workflowsPath = WORKFLOWS_PATH): Promise<{ bytes: number }> {
  const { code } = await bundleWorkflowCode({ workflowsPath });
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.partial`;
  writeFileSync(partial, code);
  renameSync(partial, out);
  return { bytes: Buffer.byteLength(code) };
}
