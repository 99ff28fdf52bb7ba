import { Command } from 'commander';
import { startStack, stackFile } from '../deploy/local';
import { registerOperatorCommands } from './commands';
import { registerDemoCommand } from './demo-command';
import { registerStarterCommand, runOnStack, untilStopSignal, type StewardOnStack } from './starter-command';
import { registerSweepCommand } from './sweep-command';

/** The `steward` command. Subcommands are added as the project grows (worker, starter, operator actions). */
const program = new Command('steward').description('Drive Kubernetes object lifecycles into backends, durably.');

program
  .command('up')
  .description(
    'start the embedded stack (Temporal with UI, Kubernetes control plane, libvirt, MidoNet API emulator) with the worker and the starter, and keep it up until Ctrl-C',
  )
  .option('--state-dir <dir>', 'where data, logs, the kubeconfig and stack.json go (default: .steward/)')
  .option('--free-ports', 'use any free ports instead of the well-known ones')
  .option('--no-steward', 'start only the stack: no cluster router, worker or starter')
  .action(async (options: { stateDir?: string; freePorts?: boolean; steward: boolean }) => {
    const stack = await startStack({ stateDir: options.stateDir, ports: options.freePorts ? 'free' : 'default' });
    const { info } = stack;
    let steward: StewardOnStack | undefined;
    try {
      if (options.steward) steward = await runOnStack(info, { freePorts: options.freePorts ?? false });
    } catch (error) {
      await stack.stop();
      throw error;
    }
    const lines = [
      '',
      `Steward embedded stack is up${steward ? ', with the worker and the starter' : ''}.`,
      `  Temporal UI:       ${info.temporal.uiUrl ?? '(external server: see its own UI)'}`,
      `  Temporal address:  ${info.temporal.address} (namespace ${info.temporal.namespace})`,
      `  kubeconfig:        ${info.kubernetes.kubeconfig}`,
      `  libvirt URI:       ${info.libvirt.uri}`,
      `  MidoNet API:       ${info.midonet.url}${info.midonet.adminUrl ? ` (emulator admin: ${info.midonet.adminUrl})` : ''}`,
      `  EC2 endpoint:      ${info.ec2.endpoint} (region ${info.ec2.region}${info.ec2.external ? '' : ', moto test server'})`,
      `  stack.json:        ${stackFile(info.stateDir)}`,
      ...(steward?.summary ?? []),
      'Press Ctrl-C to stop.',
    ];
    process.stdout.write(lines.join('\n') + '\n');
    // The worker ending on its own (it failed) stops everything too, with exit code 1.
    const workerEnded = steward?.done.then(
      () => 'the worker stopped',
      (error: unknown) => `the worker failed: ${error instanceof Error ? error.message : String(error)}`,
    );
    const why = await Promise.race([untilStopSignal(), ...(workerEnded ? [workerEnded] : [])]);
    const signalled = why === 'SIGINT' || why === 'SIGTERM';
    process.stdout.write(`\n${why}: stopping ${steward ? 'the starter, the worker and ' : ''}the stack…\n`);
    await steward?.stop().catch((error: unknown) => process.stderr.write(`stopping Steward: ${String(error)}\n`));
    await stack.stop().catch((error: unknown) => process.stderr.write(`stopping the stack: ${String(error)}\n`));
    if (!signalled) process.exitCode = 1;
  });

registerOperatorCommands(program);
registerStarterCommand(program);
registerDemoCommand(program);
registerSweepCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
