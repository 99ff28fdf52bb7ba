import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Runtime, DefaultLogger, Worker, makeTelemetryFilterString } from '@temporalio/worker';
import * as activities from './activities';

let runtimeInstalled = false;

/** Connects a client and a worker for the test workflows; the connection is checked before the worker exists. */
export async function testWorker(address: string, taskQueue: string) {
  if (!runtimeInstalled) {
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
    });
    runtimeInstalled = true;
  }
  // A Worker against an unreachable server keeps the process alive forever; NativeConnection fails fast instead.
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities,
  });
  return {
    client,
    worker,
    close: async () => {
      await connection.close();
      await nativeConnection.close();
    },
  };
}
