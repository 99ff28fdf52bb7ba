import { Connection } from '@temporalio/client';
import { google } from '@temporalio/proto';
import { Command } from 'commander';
import pino from 'pino';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { waitFor } from '../test/support';
import { searchAttributeKeys } from '../model/search-attributes';
import { missingSearchAttributes, MissingSearchAttributesError } from '../platform/search-attributes';
import { loadTemporalConfig } from '../platform/temporal-config';
import { connectClientWhenReachable } from '../platform/temporal-connection';
import { registerSetupCommand } from './setup';

const { address } = stackInfo().temporal;
const namespace = `setup-${Date.now()}`;
const names = searchAttributeKeys.map((key) => key.name);

async function steward(...args: string[]): Promise<string> {
  let out = '';
  const program = new Command('steward').exitOverride().configureOutput({ writeOut: (s) => (out += s) });
  registerSetupCommand(program);
  await program.parseAsync([...args, '--address', address, '--temporal-namespace', namespace], { from: 'user' });
  return out;
}

let connection: Connection;
beforeAll(async () => {
  connection = await Connection.connect({ address });
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: google.protobuf.Duration.fromObject({ seconds: 24 * 3600 }),
  });
  await waitFor('the new namespace served', () => missingSearchAttributes(connection, namespace), 60_000);
});
afterAll(() => connection?.close());

describe("Steward's search attributes in a Temporal namespace", () => {
  it('a worker or starter connecting to a namespace without them fails at once, naming them and the commands that register them; `steward setup` registers them, once', async () => {
    const config = loadTemporalConfig({ address, temporalNamespace: namespace });
    const log = pino({ level: 'silent' });
    const refused = await connectClientWhenReachable(config, { log }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(MissingSearchAttributesError);
    const message = (refused as Error).message;
    expect(message).toContain(`namespace ${namespace} lacks Steward's search attributes ${names.join(', ')}`);
    expect(message).toContain('`steward setup`');
    expect(message).toContain(
      `temporal operator search-attribute create --namespace ${namespace} --name K8sKind --type Keyword`,
    );

    expect(await steward('setup')).toBe(`registered in namespace ${namespace}: ${names.join(', ')}\n`);
    // The server's cache of search attributes may take a while to show them.
    await waitFor(
      'the search attributes listed',
      async () => (await missingSearchAttributes(connection, namespace)).length === 0,
      90_000,
    );
    expect(await steward('setup')).toBe(`namespace ${namespace} has all of Steward's search attributes\n`);
    const client = await connectClientWhenReachable(config, { log });
    await client.connection.close();
  });
});
