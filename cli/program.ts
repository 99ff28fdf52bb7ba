import { Command } from 'commander';
import { stewardVersion } from '../platform/version';
import { acquireTracing, type TracingLease } from '../platform/tracing';
import { registerAdoptCommand } from './adopt';
import { registerBundleCommand } from './bundle';
import { registerCheckCommand } from './check';
import { registerCompletionCommand } from './completion';
import { registerDemoCommand } from './demo';
import { registerListCommand } from './list';
import { registerOperatorCommands, registerStatusCommand } from './operator';
import { registerSetupCommand } from './setup';
import { registerStarterCommand } from './starter';
import { registerSweepCommand } from './sweep';
import { registerUninstallCommand } from './uninstall';
import { registerUpCommand } from './up';
import { registerVersionCommand } from './version';
import { registerWorkerCommand } from './worker';

/** Commands that run a worker or a starter: those trace as steward-worker and steward-starter (platform/tracing.ts). */
const PROCESS_COMMANDS = new Set(['worker', 'starter', 'up']);

/** The other commands' Temporal clients trace as steward-cli, their spans sent before the command returns. */
function traceClientCommands(program: Command): void {
  let lease: TracingLease | undefined;
  program.hook('preAction', (_, command) => {
    if (!PROCESS_COMMANDS.has(command.name())) lease = acquireTracing('steward-cli');
  });
  program.hook('postAction', () => lease?.release());
}

/**
 * The commands under four headings, by what a person comes to do: run and act on Steward (operate), look at it
 * (inspect), move a cluster onto it or off it (migrate), or work on Steward itself (develop). `setup` is an
 * installation step (deploy/README.md), so it is operated, though `steward up` runs it too.
 */
const COMMAND_GROUPS: [heading: string, register: ((program: Command) => void)[]][] = [
  [
    'Operate:',
    [
      registerWorkerCommand,
      registerStarterCommand,
      registerSetupCommand,
      registerOperatorCommands,
      registerSweepCommand,
    ],
  ],
  [
    'Inspect:',
    [
      registerListCommand,
      registerStatusCommand,
      registerVersionCommand,
      registerCheckCommand,
      registerCompletionCommand,
      // `help` among the commands that only tell, not under whichever heading comes last.
      (program) => program.helpCommand(true),
    ],
  ],
  ['Migrate:', [registerAdoptCommand, registerUninstallCommand]],
  ['Develop:', [registerUpCommand, registerDemoCommand, registerBundleCommand]],
];

/**
 * The `steward` command line, one module per command; apart from main.ts so that tests (completion) see every
 * command as registered. `up` and `demo` load the embedded development stack only when they run, so the other
 * commands work where it is absent (the image).
 */
export function stewardProgram(): Command {
  const program = new Command('steward')
    .description('Drive Kubernetes object lifecycles into backends, durably.')
    .version(stewardVersion(), '--version', 'print the version');
  traceClientCommands(program);
  for (const [heading, registers] of COMMAND_GROUPS) {
    program.commandsGroup(heading);
    for (const register of registers) register(program);
  }
  return program;
}
