import type { Command } from 'commander';
import { cloudSettings } from '../../activities/cloud/config';
import { runWorker } from '../../worker';
import { loadWorkerConfig, workerSettings } from '../../worker/config';
import { addSettingFlags, type Flags } from '../../worker/settings';

/** `steward worker`: polls Temporal, runs the workflows and activities, serves /healthz, /readyz and /metrics. */
export function registerWorkerCommand(program: Command): void {
  const command = program
    .command('worker')
    .description('run the worker: poll Temporal, run the workflows and activities, serve /healthz, /readyz, /metrics');
  addSettingFlags(addSettingFlags(command, workerSettings), cloudSettings).action(async (options: Flags) => {
    const running = await runWorker(loadWorkerConfig(options));
    await running.done;
  });
}
