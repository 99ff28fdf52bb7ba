// Runs the emulator as a process (the embedded stack starts it this way). Prints one JSON line when ready
// and writes pending state before exiting on SIGTERM/SIGINT.
import { Command, InvalidArgumentError, Option } from 'commander';
import { startMidonetEmulator } from './index';

function portNumber(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('not a port number');
  return port;
}

async function main(): Promise<void> {
  const opts = new Command('midonet-emulator')
    .description('MidoNet v5 REST API emulator')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', portNumber, 8181)
    .option('--data-file <path>', 'persist state to this JSON file')
    .addOption(
      new Option('--auth <mode>', 'token: require POST /login tokens; mock: accept anything')
        .choices(['token', 'mock'])
        .default('token'),
    )
    .parse()
    .opts<{ host: string; port: number; dataFile?: string; auth: 'token' | 'mock' }>();

  const emulator = await startMidonetEmulator(opts);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    emulator.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(
    `${JSON.stringify({ ready: true, url: emulator.url, adminUrl: emulator.adminUrl, pid: process.pid })}\n`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
