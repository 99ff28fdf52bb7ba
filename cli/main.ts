import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerAdoptCommand } from './adopt';
import { registerBundleCommand } from './bundle';
import { registerCompletionCommand } from './completion';
import { registerDemoCommand } from './demo';
import { registerListCommand } from './list';
import { registerOperatorCommands } from './operator';
import { registerStarterCommand } from './starter';
import { registerSweepCommand } from './sweep';
import { registerUpCommand } from './up';
import { registerWorkerCommand } from './worker';

/**
 * The `steward` command line (bin/steward.cjs runs this file): one module per command. `up` and `demo` load the
 * embedded development stack only when they run, so the other commands work where it is absent (the image).
 */
const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
const program = new Command('steward')
  .description('Drive Kubernetes object lifecycles into backends, durably.')
  .version(version, '--version', 'print the version');

registerUpCommand(program);
registerWorkerCommand(program);
registerListCommand(program);
registerOperatorCommands(program);
registerStarterCommand(program);
registerDemoCommand(program);
registerSweepCommand(program);
registerAdoptCommand(program);
registerBundleCommand(program);
registerCompletionCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
