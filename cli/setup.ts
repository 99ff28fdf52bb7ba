import type { Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { registerSearchAttributes } from '../platform/search-attributes';
import { loadTemporalConfig, temporalSettings } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';
import { addSettingFlags, type Flags } from '../platform/settings';

/**
 * `steward setup`: what a Temporal namespace needs before Steward's workers and starter run in it, registered once
 * (idempotent): its search attributes. Temporal Cloud registers them with `tcld` instead; the worker says which.
 */
export function registerSetupCommand(program: Command): void {
  const command = program
    .command('setup')
    .description("register Steward's search attributes in the Temporal namespace (idempotent; done by `steward up`)");
  addSettingFlags(command, temporalSettings).action(async (options: Flags, self: Command) => {
    const config = loadTemporalConfig(options);
    const client = await connectClient(config);
    try {
      const added = await registerSearchAttributes(client.connection as Connection, config.namespace);
      self
        .configureOutput()
        .writeOut?.(
          added.length > 0
            ? `registered in namespace ${config.namespace}: ${added.join(', ')}\n`
            : `namespace ${config.namespace} has all of Steward's search attributes\n`,
        );
    } finally {
      await client.connection.close();
    }
  });
}
