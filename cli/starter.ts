import type { Command } from 'commander';
import { createLogger } from '../platform/log';
import { temporalSettings } from '../platform/temporal-config';
import { addSettingFlags, type Flags } from '../platform/settings';
import { loadStarterConfig, starterSettings } from '../starter/config';
import { runStarter, untilStopSignal } from '../starter/run';
import { lifecycleStates } from '../workflows/machines';

/** `steward starter`: the watcher alone (in a cluster, next to `steward worker`), until SIGINT or SIGTERM. */
export function registerStarterCommand(program: Command): void {
  const command = program
    .command('starter')
    .description(
      'run the starter: watch Nodes, Pods, Services, Endpoints and Translations and signal their workflows (one leader per Lease)',
    );
  addSettingFlags(addSettingFlags(command, temporalSettings), starterSettings).action(async (options: Flags) => {
    const config = loadStarterConfig(options);
    const log = createLogger(config.logLevel);
    const running = await runStarter(config, log, { lifecycleStates });
    const signal = await untilStopSignal();
    log.info({ signal }, 'stopping the starter');
    await running.stop();
  });
}
