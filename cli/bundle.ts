import type { Command } from 'commander';
import { resolve } from 'node:path';
import { writeWorkflowBundle } from '../worker/bundle';

/** `steward bundle --out <file>`: the workflow code bundled ahead, for workers given STEWARD_WORKFLOW_BUNDLE. */
export function registerBundleCommand(program: Command): void {
  program
    .command('bundle')
    .description(
      'bundle the workflow code ahead (an image build step): workers given it as --workflow-bundle / STEWARD_WORKFLOW_BUNDLE skip bundling at start',
    )
    .requiredOption('--out <file>', 'where to write the bundle')
    .action(async ({ out }: { out: string }) => {
      const file = resolve(out);
      const { bytes } = await writeWorkflowBundle(file);
      process.stdout.write(`wrote ${file} (${Math.round(bytes / 1024)} KiB)\n`);
    });
}
