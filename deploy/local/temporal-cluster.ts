import { dumpYaml } from '@kubernetes/client-node';
import { Connection } from '@temporalio/client';
import { google } from '@temporalio/proto';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerSearchAttributes } from '../../platform/search-attributes';
import { freePort } from '../../worker/ports';
import { inGoScratch } from './go';
import { cachedTool } from './tool-cache';
import { cacheRoot } from './paths';
import { retryWhenPortTaken } from './ports';
import { startPostgres, type Postgres, type PostgresRestart } from './postgres';
import { capture, commandExists, ManagedProcess, runLogged, waitUntil } from './process';
import { MissingPrerequisite, ProvisionError, type Reporter, step } from './progress';
import { temporalHealthy } from './temporal';

/**
 * The cluster profile of Temporal: the server built from its Go module (wrapper module in ./toolchain/temporal-server)
 * with persistence and visibility in PostgreSQL, run as several server processes on this machine the way several
 * hosts would run it (one with frontend, matching and worker, others with history only), and the Temporal UI server
 * in front of the frontend.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
export const TEMPORAL_UI_SERVER_VERSION = 'v2.56.0';
// Both modules ask for Go 1.26.10, newer than the machine's 1.26.8; the go command fetches this toolchain from the
// module proxy. (ui-server is at v2.56.0: later ones need go.temporal.io/api or echo versions the proxy refuses.)
const GO_TOOLCHAIN = 'go1.27.3';
/** Fixed when the database is created: every host, and every later start on the same state dir, uses this number. */
export const HISTORY_SHARDS = 16;

export interface TemporalServerBinaries {
  server: string;
  sqlTool: string;
  uiServer: string;
  /** schema/postgresql/v12 of the server module, copied so that starting needs no Go module cache. */
  schemaDir: string;
}

export async function ensureTemporalServerBinaries(report: Reporter): Promise<TemporalServerBinaries> {
  const dir = join(cacheRoot, `temporal-server-${TEMPORAL_SERVER_VERSION}-ui-${TEMPORAL_UI_SERVER_VERSION}`);
  const layout = (root: string): TemporalServerBinaries => ({
    server: join(root, 'bin', 'temporal-server'),
    sqlTool: join(root, 'bin', 'temporal-sql-tool'),
    uiServer: join(root, 'bin', 'temporal-ui-server'),
    schemaDir: join(root, 'schema', 'postgresql', 'v12'),
  });
  return layout(
    await cachedTool(
      dir,
      async (staging) => {
        if (!(await commandExists('go'))) {
          throw new MissingPrerequisite(
            `Go is needed once to build Temporal server ${TEMPORAL_SERVER_VERSION} and UI server ${TEMPORAL_UI_SERVER_VERSION}.`,
            'install Go >= 1.21 (official tarball into /usr/local/go, then PATH=/usr/local/go/bin:$PATH); it fetches the Go it needs itself',
          );
        }
        await buildTemporalServer(staging, layout(staging), report);
      },
      { report },
    ),
  );
}

/** The server, its SQL tool and the UI server built into `staging` (as `built` lays them out), with the SQL schemas. */
async function buildTemporalServer(staging: string, built: TemporalServerBinaries, report: Reporter) {
  const srcDir = join(staging, 'src');
  mkdirSync(srcDir, { recursive: true });
  for (const file of ['go.mod', 'go.sum', 'tools.go'])
    copyFileSync(join(__dirname, 'toolchain', 'temporal-server', file), join(srcDir, file));
  const logFile = join(cacheRoot, 'logs', `temporal-server-${TEMPORAL_SERVER_VERSION}-build.log`);
  report(
    `Building Temporal server ${TEMPORAL_SERVER_VERSION}, its SQL tool and UI server ${TEMPORAL_UI_SERVER_VERSION} once (about 10 min on 2 cores); full log: ${logFile}`,
  );
  const settings = { GOTOOLCHAIN: GO_TOOLCHAIN, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly' };
  // The schemas are copied out of the module cache before the scratch folder goes.
  await inGoScratch(`temporal-server-${TEMPORAL_SERVER_VERSION}`, settings, async (env) => {
    const go = (what: string, args: string[]) => runLogged('go', args, { step: what, logFile, cwd: srcDir, env });
    await step(report, 'download Go modules for Temporal server', () => go('go mod download', ['mod', 'download']));
    // The tag of the server's own Makefile: it leaves out the gRPC transport of Google Cloud Storage, which the
    // server's archiver does not use (it talks HTTP).
    const serverFlags = ['build', '-trimpath', '-tags', 'disable_grpc_modules', '-ldflags', '-s -w', '-o'];
    await step(report, 'build temporal-server', () =>
      go('build temporal-server', [...serverFlags, built.server, 'go.temporal.io/server/cmd/server']),
    );
    await step(report, 'build temporal-sql-tool', () =>
      go('build temporal-sql-tool', [...serverFlags, built.sqlTool, 'go.temporal.io/server/cmd/tools/sql']),
    );
    await step(report, 'build temporal-ui-server', () =>
      go('build temporal-ui-server', [
        'build',
        '-trimpath',
        '-ldflags',
        '-s -w',
        '-o',
        built.uiServer,
        'github.com/temporalio/ui-server/v2/cmd/server',
      ]),
    );
    // `go list` must run inside the wrapper module, and capture takes no working directory.
    const moduleDir = (
      await capture('sh', ['-c', 'cd "$1" && go list -m -f "{{.Dir}}" go.temporal.io/server', 'sh', srcDir], env)
    ).trim();
    mkdirSync(join(built.schemaDir, '..'), { recursive: true });
    // A writable copy, whatever the module cache's mode: a later cleanup of Steward's cache can remove it.
    const schemas = join(moduleDir, 'schema', 'postgresql', 'v12');
    await runLogged('cp', ['-R', '--no-preserve=mode', schemas, built.schemaDir], {
      step: 'copy SQL schemas',
      logFile,
    });
  });
}

export type TemporalService = 'frontend' | 'matching' | 'worker' | 'history';
/** Role numbers of the services in the cluster_membership table (the server's persistence.ServiceType). */
const MEMBERSHIP_ROLE: Record<TemporalService, number> = { frontend: 1, history: 2, matching: 3, worker: 4 };

/** A server process of the cluster, as one host would run it: its name and the services it runs. */
export interface ClusterHostLayout {
  name: string;
  services: readonly TemporalService[];
}

/** Host A answers clients; hosts B and C share the history shards, so when one dies the other takes its shards over. */
export const DEFAULT_LAYOUT: readonly ClusterHostLayout[] = [
  { name: 'temporal-a', services: ['frontend', 'matching', 'worker'] },
  { name: 'temporal-b', services: ['history'] },
  { name: 'temporal-c', services: ['history'] },
];

export interface ClusterHost {
  name: string;
  services: readonly TemporalService[];
  pid: number;
  running: boolean;
  /** `<service>.grpc`, `<service>.membership`, and `frontend.http`. */
  ports: Record<string, number>;
}

export interface TemporalCluster {
  address: string;
  namespace: string;
  uiUrl: string;
  postgres: Postgres;
  hosts(): ClusterHost[];
  /** kill -9 of one server process, as a host that dies. */
  killHost(name: string): Promise<void>;
  /** Starts a host again (stopping it first if it runs) on its ports, and waits until its services joined. */
  restartHost(name: string): Promise<void>;
  /** Every host stopped (SIGTERM), then started again in the order of the first start; PostgreSQL keeps running. */
  restartAll(): Promise<void>;
  restartPostgres(how?: PostgresRestart): Promise<void>;
  /** Every process of the cluster as it runs now (restarts replace them). */
  processes(): ManagedProcess[];
  stop(): Promise<void>;
}

export interface TemporalClusterOptions {
  /** Data (PostgreSQL), configuration and logs. */
  stateDir: string;
  report: Reporter;
  /** 0 picks a free port; otherwise the port is used when free. */
  port?: number;
  uiPort?: number;
  /** The server processes; default DEFAULT_LAYOUT. The first runs the frontend (it is started alone, first). */
  layout?: readonly ClusterHostLayout[];
}

interface Host {
  name: string;
  services: readonly TemporalService[];
  ports: Record<string, number>;
  configFile: string;
  logFile: string;
  process?: ManagedProcess;
}

const NAMESPACE = 'default';
const GRPC_ALREADY_EXISTS = 6;

export async function startTemporalCluster(options: TemporalClusterOptions): Promise<TemporalCluster> {
  const layout = options.layout ?? DEFAULT_LAYOUT;
  if (!layout[0]?.services.includes('frontend'))
    throw new Error(`the first host of a cluster layout runs the frontend (got ${layout[0]?.name ?? 'no host'})`);
  const binaries = await ensureTemporalServerBinaries(options.report);
  const dir = join(options.stateDir, 'temporal-cluster');
  const logs = join(options.stateDir, 'logs');
  mkdirSync(dir, { recursive: true });
  const postgres = await step(options.report, 'start PostgreSQL', () =>
    startPostgres({ stateDir: options.stateDir, report: options.report }),
  );
  const hosts: Host[] = [];
  let ui: ManagedProcess | undefined;
  const stop = async () => {
    await ui?.stop();
    for (const host of [...hosts].reverse()) await host.process?.stop();
    await postgres.stop();
  };
  try {
    const password = await postgres.ensureRole('temporal');
    await step(options.report, 'set up Temporal schemas in PostgreSQL', () =>
      setUpSchemas(postgres, password, binaries, join(logs, 'temporal-schema.log')),
    );
    const dynamicConfig = join(dir, 'dynamicconfig.yaml');
    writeFileSync(dynamicConfig, dumpYaml(DYNAMIC_CONFIG));

    for (const { name, services } of layout) {
      const ports = await pickPorts(services, services.includes('frontend') ? (options.port ?? 0) : 0);
      hosts.push({ name, services, ports, configFile: join(dir, `${name}.yaml`), logFile: join(logs, `${name}.log`) });
    }
    const frontend = () => `127.0.0.1:${hosts.find((h) => h.services.includes('frontend'))?.ports['frontend.grpc']}`;
    const startHost = async (host: Host, fresh: boolean) => {
      let attempt = 0;
      const launch = async () => {
        // A restart keeps the ports, as a restarted machine keeps its address; only a port taken meanwhile moves.
        if (attempt++ > 0) host.ports = await pickPorts(host.services, 0);
        const startedAt = new Date();
        writeFileSync(
          host.configFile,
          dumpYaml(serverConfig(host, hosts, frontend(), postgres, password, dynamicConfig)),
          { mode: 0o600 },
        );
        host.process = ManagedProcess.start(
          host.name,
          binaries.server,
          [
            '--config-file',
            host.configFile,
            '--allow-no-auth',
            'start',
            ...host.services.flatMap((service) => ['--service', service]),
          ],
          { logFile: host.logFile, env: { TEMPORAL_VERSION_CHECK_DISABLED: '1' } },
        );
        try {
          await waitJoined(host, postgres, startedAt);
          if (host.services.includes('frontend')) {
            await waitUntil('Temporal frontend ready', () => temporalHealthy(frontend()), {
              timeoutMs: 120_000,
              intervalMs: 500,
              process: host.process,
            });
          }
        } catch (error) {
          await host.process.stop();
          throw error;
        }
      };
      await (fresh ? retryWhenPortTaken(host.logFile, launch) : launch());
    };

    const [first, ...others] = hosts as [Host, ...Host[]];
    await step(options.report, `start Temporal host ${first.name} (${first.services.join(', ')})`, () =>
      startHost(first, true),
    );
    const otherServices = [...new Set(others.flatMap((h) => h.services))].join(', ');
    await step(options.report, `start Temporal hosts ${others.map((h) => h.name).join(', ')} (${otherServices})`, () =>
      Promise.all(others.map((h) => startHost(h, true))),
    );
    await step(options.report, `register namespace ${NAMESPACE} and search attributes`, () =>
      registerNamespace(frontend()),
    );

    const uiLog = join(logs, 'temporal-ui.log');
    let uiUrl = '';
    await step(options.report, 'start Temporal UI server', () =>
      retryWhenPortTaken(uiLog, async () => {
        const uiPort = await freePort(options.uiPort ?? 0);
        uiUrl = `http://127.0.0.1:${uiPort}`;
        const uiDir = join(dir, 'ui');
        mkdirSync(uiDir, { recursive: true });
        writeFileSync(join(uiDir, 'base.yaml'), dumpYaml(uiConfig(frontend(), uiPort)));
        ui = ManagedProcess.start(
          'temporal-ui',
          binaries.uiServer,
          ['--root', uiDir, '--config', '.', '--env', 'steward', 'start'],
          { logFile: uiLog },
        );
        await waitUntil('Temporal UI ready', async () => (await fetch(uiUrl)).ok, { timeoutMs: 30_000, process: ui });
      }),
    );

    const find = (name: string) => {
      const host = hosts.find((h) => h.name === name);
      if (!host) throw new Error(`no Temporal host ${name} (hosts: ${hosts.map((h) => h.name).join(', ')})`);
      return host;
    };
    return {
      address: frontend(),
      namespace: NAMESPACE,
      uiUrl,
      postgres,
      hosts: () =>
        hosts.map((h) => ({
          name: h.name,
          services: h.services,
          pid: h.process?.pid ?? -1,
          running: h.process?.running ?? false,
          ports: { ...h.ports },
        })),
      async killHost(name) {
        const host = find(name).process;
        if (!host?.running) return;
        process.kill(host.pid, 'SIGKILL');
        await host.exited;
      },
      async restartHost(name) {
        const host = find(name);
        await host.process?.stop();
        await startHost(host, false);
      },
      async restartAll() {
        for (const host of [...hosts].reverse()) await host.process?.stop();
        await startHost(first, false);
        await Promise.all(others.map((h) => startHost(h, false)));
      },
      restartPostgres: (how) => postgres.restart(how),
      processes: () => [postgres.process, ...hosts.flatMap((h) => (h.process ? [h.process] : [])), ...(ui ? [ui] : [])],
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function pickPorts(services: readonly TemporalService[], frontendPort: number): Promise<Record<string, number>> {
  const ports: Record<string, number> = {};
  for (const service of services) {
    ports[`${service}.grpc`] = await freePort(service === 'frontend' ? frontendPort : 0);
    ports[`${service}.membership`] = await membershipPort();
    if (service === 'frontend') ports['frontend.http'] = await freePort();
  }
  return ports;
}

/**
 * The membership table keeps a member's port as SMALLINT, so a membership port above 32767 (any port the kernel
 * hands out for port 0) makes the host fail to join: pick one below.
 */
async function membershipPort(): Promise<number> {
  for (;;) {
    const candidate = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await freePort(candidate)) === candidate) return candidate;
  }
}

/** Creates the two databases once, then brings both schemas to the newest version the server ships. */
async function setUpSchemas(
  postgres: Postgres,
  password: string,
  binaries: TemporalServerBinaries,
  logFile: string,
): Promise<void> {
  for (const [database, schema] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const created = (await postgres.sql(`SELECT 1 FROM pg_database WHERE datname = '${database}'`)).trim() === '1';
    if (!created) await postgres.sql(`CREATE DATABASE ${database} OWNER temporal`);
    const tool = (args: string[]) => sqlTool(binaries.sqlTool, postgres, password, database, args, logFile);
    if (!created) await tool(['setup-schema', '-v', '0.0']);
    await tool(['update-schema', '-d', join(binaries.schemaDir, schema, 'versioned')]);
  }
}

/** The password goes through the environment, and the output into the log only on failure, so no log holds it. */
async function sqlTool(
  tool: string,
  postgres: Postgres,
  password: string,
  database: string,
  args: string[],
  logFile: string,
): Promise<void> {
  const flags = [
    '--plugin',
    'postgres12',
    '--endpoint',
    postgres.host,
    '--port',
    String(postgres.port),
    '--user',
    'temporal',
    '--database',
    database,
  ];
  try {
    await capture(tool, [...flags, ...args], { SQL_PASSWORD: password });
  } catch (error) {
    mkdirSync(join(logFile, '..'), { recursive: true });
    writeFileSync(logFile, String(error instanceof Error ? error.message : error), { flag: 'a' });
    throw new ProvisionError(
      `temporal-sql-tool ${args[0] ?? ''} on ${database}`,
      'temporal-sql-tool failed',
      logFile,
      `SQL_PASSWORD=… ${tool} ${[...flags, ...args].join(' ')}`,
    );
  }
}

/** Search attributes visible as soon as they are registered (tests register and use them at once). */
const DYNAMIC_CONFIG = {
  'system.forceSearchAttributesCacheRefreshOnRead': [{ value: true }],
  // No internet here: the frontend must not try to reach the version-check service.
  'frontend.enableServerVersionCheck': [{ value: false }],
};

function serverConfig(
  host: Host,
  hosts: readonly Host[],
  frontend: string,
  postgres: Postgres,
  password: string,
  dynamicConfig: string,
): object {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${postgres.host}:${postgres.port}`,
      connectProtocol: 'tcp',
      user: 'temporal',
      password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  // Every host lists every service: a process tracks the membership only of services in its config. Those it runs
  // get its own ports; the others, the ports of a host that runs them (members advertise their own ports anyway).
  const all = [...new Set(hosts.flatMap((h) => h.services))];
  const services = Object.fromEntries(
    all.map((service) => {
      const owner = host.services.includes(service) ? host : (hosts.find((h) => h.services.includes(service)) ?? host);
      return [
        service,
        {
          rpc: {
            grpcPort: owner.ports[`${service}.grpc`],
            membershipPort: owner.ports[`${service}.membership`],
            bindOnIP: '127.0.0.1',
            ...(service === 'frontend' ? { httpPort: owner.ports['frontend.http'] } : {}),
          },
        },
      ];
    }),
  );
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      numHistoryShards: HISTORY_SHARDS,
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: { default: store('temporal', 10), visibility: store('temporal_visibility', 5) },
    },
    global: {
      // Members find each other through the cluster_membership table, then gossip on their membership ports.
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
    },
    services,
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontend },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfig, pollInterval: '10s' },
  };
}

function uiConfig(frontend: string, port: number): object {
  return {
    temporalGrpcAddress: frontend,
    host: '127.0.0.1',
    port,
    enableUi: true,
    defaultNamespace: NAMESPACE,
    // No internet here: no news feed, no version notice.
    disableNewsFetch: true,
    notifyOnNewVersion: false,
  };
}

/** A host has joined when each of its services wrote a membership row of this session (its port, since startedAt). */
async function waitJoined(host: Host, postgres: Postgres, startedAt: Date): Promise<void> {
  const since = startedAt.toISOString().replace('T', ' ').replace('Z', '');
  for (const service of host.services) {
    await waitUntil(
      `${host.name} ${service} joined the cluster`,
      async () => {
        const rows = await postgres.sql(
          `SELECT count(*) FROM cluster_membership WHERE role = ${MEMBERSHIP_ROLE[service]} AND rpc_port = ${host.ports[`${service}.membership`]} AND session_start >= '${since}'`,
          'temporal',
        );
        return Number(rows.trim()) > 0;
      },
      { timeoutMs: 120_000, intervalMs: 500, ...(host.process ? { process: host.process } : {}) },
    );
  }
}

/**
 * Registers the namespace and the search attributes Steward's workflows set, each only when missing. The frontend
 * learns of a new namespace when its registry refreshes (every few seconds), hence the wait in between.
 */
async function registerNamespace(address: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const { workflowService, operatorService } = connection;
    const registered = await workflowService.describeNamespace({ namespace: NAMESPACE }).then(
      () => true,
      () => false,
    );
    if (!registered) {
      await workflowService
        .registerNamespace({
          namespace: NAMESPACE,
          workflowExecutionRetentionPeriod: google.protobuf.Duration.fromObject({ seconds: 24 * 3600 }),
        })
        .catch((error: unknown) => {
          // Another start of this state dir registered it meanwhile.
          if ((error as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw error;
        });
    }
    await waitUntil(
      `namespace ${NAMESPACE} served`,
      async () => (await operatorService.listSearchAttributes({ namespace: NAMESPACE }), true),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    await registerSearchAttributes(connection, NAMESPACE);
  } finally {
    await connection.close();
  }
}
