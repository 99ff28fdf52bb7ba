import { Command } from 'commander';
import { startStack, stackFile } from '../deploy/local';
import { registerOperatorCommands } from './commands';

/** The `steward` command. Subcommands are added as the project grows (worker, starter, operator actions). */
const program = new Command('steward').description('Drive Kubernetes object lifecycles into backends, durably.');

program
  .command('up')
  .description('start the embedded stack (Temporal with UI, Kubernetes control plane, libvirt, MidoNet API emulator) and keep it up until Ctrl-C')
  .option('--state-dir <dir>', 'where data, logs, the kubeconfig and stack.json go (default: .steward/)')
  .option('--free-ports', 'use any free ports instead of the well-known ones')
  .action(async (options: { stateDir?: string; freePorts?: boolean }) => {
    const stack = await startStack({ stateDir: options.stateDir, ports: options.freePorts ? 'free' : 'default' });
    const { info } = stack;
    const lines = [
      '',
      'Steward embedded stack is up.',
      `  Temporal UI:       ${info.temporal.uiUrl ?? '(external server: see its own UI)'}`,
      `  Temporal address:  ${info.temporal.address} (namespace ${info.temporal.namespace})`,
      `  kubeconfig:        ${info.kubernetes.kubeconfig}`,
      `  libvirt URI:       ${info.libvirt.uri}`,
      `  MidoNet API:       ${info.midonet.url}${info.midonet.adminUrl ? ` (emulator admin: ${info.midonet.adminUrl})` : ''}`,
      `  stack.json:        ${stackFile(info.stateDir)}`,
      'Press Ctrl-C to stop.',
    ];
    process.stdout.write(lines.join('\n') + '\n');
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        process.stdout.write(`\n${signal}: stopping the stack…\n`);
        stack.stop().then(resolve, resolve);
      };
      process.once('SIGINT', () => shutdown('SIGINT'));
      process.once('SIGTERM', () => shutdown('SIGTERM'));
    });
  });

registerOperatorCommands(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
