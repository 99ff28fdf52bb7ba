import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from '../../worker/ports';
import { installDebianPackages } from './apt';
import { retryWhenPortTaken } from './ports';
import { capture, ManagedProcess, runLogged, sleep, waitUntil } from './process';
import { MissingPrerequisite, type Reporter, step } from './progress';

/**
 * PostgreSQL 15 from Debian for the cluster profile: one server initialised in `<stateDir>/postgres`, run as a child
 * of the stack on its own port on 127.0.0.1, as the `postgres` system user when the stack runs as root (PostgreSQL
 * refuses to run as root).
 */
export const POSTGRES_BIN_DIR = process.env.POSTGRES_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const TOOLS = ['initdb', 'postgres', 'pg_isready', 'psql'] as const;
const SERVER_USER = 'postgres';

export interface PostgresOptions {
  stateDir: string;
  report: Reporter;
  /** 0 picks a free port. */
  port?: number;
}

export interface Postgres {
  host: '127.0.0.1';
  port: number;
  /** Superuser reached over the Unix socket (trust; the socket's folder is the server user's alone). */
  superuser: string;
  socketDir: string;
  readonly process: ManagedProcess;
  /** Runs SQL as the superuser and returns psql's unaligned output. */
  sql(statement: string, database?: string): Promise<string>;
  /** Creates (once) a login role with this name, its password kept in the state dir; returns the password. */
  ensureRole(name: string, attributes?: string): Promise<string>;
  /** Shutdown, then the same server on the same data dir and port (failover and chaos tests). */
  restart(how?: PostgresRestart): Promise<void>;
  stop(): Promise<void>;
}

/**
 * PostgreSQL's shutdown modes that do not wait for clients: `fast` rolls back open transactions and checkpoints;
 * `immediate` aborts every process as a crash would, so the next start replays the WAL.
 */
export type PostgresShutdown = 'fast' | 'immediate';
const SHUTDOWN_SIGNAL: Record<PostgresShutdown, NodeJS.Signals> = { fast: 'SIGINT', immediate: 'SIGQUIT' };

export interface PostgresRestart {
  /** Default `fast`. */
  shutdown?: PostgresShutdown;
  /** How long the server stays down, as a replaced Pod would; default 0. */
  downMs?: number;
}

export async function startPostgres(options: PostgresOptions): Promise<Postgres> {
  if (TOOLS.some((tool) => !existsSync(join(POSTGRES_BIN_DIR, tool)))) {
    await installDebianPackages({
      what: 'PostgreSQL 15 (for the cluster profile)',
      packages: ['postgresql-15'],
      report: options.report,
      logFile: join(options.stateDir, 'logs', 'provision-postgres.log'),
    });
  }
  const dir = join(options.stateDir, 'postgres');
  const dataDir = join(dir, 'data');
  const socketDir = join(dir, 'run');
  const logFile = join(options.stateDir, 'logs', 'postgres.log');
  const runAs = await serverUser();
  mkdirSync(dir, { recursive: true });
  for (const owned of [dataDir, socketDir]) {
    mkdirSync(owned, { recursive: true, mode: 0o700 });
    if (runAs) chownSync(owned, runAs.uid, runAs.gid);
  }
  if (runAs) await checkReachable(runAs, [options.stateDir, dir], dataDir);

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    await step(options.report, `initialise PostgreSQL in ${dataDir}`, () =>
      runLogged(
        ...asServerUser(runAs, join(POSTGRES_BIN_DIR, 'initdb'), [
          '-D',
          dataDir,
          '-U',
          SERVER_USER,
          '-E',
          'UTF8',
          '--locale=C',
          // Local socket: trust, as only the server user can open its folder. TCP: passwords.
          '--auth-local=trust',
          '--auth-host=scram-sha-256',
        ]),
        { step: 'initdb', logFile },
      ),
    );
  }

  const launch = (port: number) => {
    const server = ManagedProcess.start(
      'postgres',
      ...asServerUser(runAs, join(POSTGRES_BIN_DIR, 'postgres'), [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        socketDir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_permissions=0700',
        // Three Temporal hosts keep pools of 10-20 connections per service.
        '-c',
        'max_connections=300',
        // Writes still reach the kernel at each commit, so killed processes (what the failover tests do) lose
        // nothing; only a machine crash could, and this is a test stack.
        '-c',
        'fsync=off',
      ]),
      { logFile },
    );
    return server;
  };
  // The arguments pg_isready and psql share: the server's socket, port and superuser, and a database.
  const connection = (port: number, database: string) => [
    '-h',
    socketDir,
    '-p',
    String(port),
    '-U',
    SERVER_USER,
    '-d',
    database,
  ];
  const ready = (server: ManagedProcess, port: number) =>
    waitUntil(
      'PostgreSQL accepting connections',
      async () => {
        await capture(join(POSTGRES_BIN_DIR, 'pg_isready'), ['-q', ...connection(port, 'postgres')]);
        return true;
      },
      { timeoutMs: 60_000, process: server },
    );

  let port = 0;
  let server = await retryWhenPortTaken(logFile, async () => {
    port = await freePort(options.port ?? 0);
    const started = launch(port);
    try {
      await ready(started, port);
    } catch (error) {
      await started.stop();
      throw error;
    }
    return started;
  });

  // Never SIGTERM, PostgreSQL's smart shutdown: it would wait for every client (Temporal never lets go).
  const stop = async (shutdown: PostgresShutdown = 'fast') => {
    if (server.running) process.kill(server.pid, SHUTDOWN_SIGNAL[shutdown]);
    await server.stop(30_000);
  };
  const sql = (statement: string, database = 'postgres') =>
    capture(join(POSTGRES_BIN_DIR, 'psql'), [
      '-X',
      '-q',
      '-At',
      '-v',
      'ON_ERROR_STOP=1',
      ...connection(port, database),
      '-c',
      statement,
    ]);

  return {
    host: '127.0.0.1',
    get port() {
      return port;
    },
    superuser: SERVER_USER,
    socketDir,
    get process() {
      return server;
    },
    sql,
    async ensureRole(name, attributes = '') {
      const passwordFile = join(dir, `${name}.password`);
      if (!existsSync(passwordFile)) writeFileSync(passwordFile, randomBytes(18).toString('hex'), { mode: 0o600 });
      const password = readFileSync(passwordFile, 'utf8');
      const exists = (await sql(`SELECT 1 FROM pg_roles WHERE rolname = '${name}'`)).trim() === '1';
      await sql(`${exists ? 'ALTER' : 'CREATE'} ROLE "${name}" LOGIN ${attributes} PASSWORD '${password}'`);
      return password;
    },
    async restart({ shutdown, downMs = 0 } = {}) {
      await stop(shutdown);
      await sleep(downMs);
      server = launch(port);
      await ready(server, port);
    },
    stop: () => stop(),
  };
}

interface Account {
  uid: number;
  gid: number;
}

/** The account PostgreSQL runs as: the `postgres` system user when we are root, else ourselves (undefined). */
async function serverUser(): Promise<Account | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const [uid, gid] = await Promise.all([capture('id', ['-u', SERVER_USER]), capture('id', ['-g', SERVER_USER])]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  } catch {
    throw new MissingPrerequisite(
      `PostgreSQL must not run as root, and there is no '${SERVER_USER}' system user to run it as.`,
      'apt-get install -y postgresql-15   (it creates that user)',
    );
  }
}

/**
 * `cmd args` as the server user. setpriv changes the IDs first and then asks for SIGKILL on the stack's death again,
 * since the kernel forgets that request when a process changes its user.
 */
function asServerUser(account: Account | undefined, cmd: string, args: string[]): [string, string[]] {
  if (!account) return [cmd, args];
  return [
    '/usr/bin/setpriv',
    [`--reuid=${account.uid}`, `--regid=${account.gid}`, '--init-groups', '--pdeathsig=SIGKILL', '--', cmd, ...args],
  ];
}

/**
 * The server user must pass through every folder above its data dir. Folders of our own (the state dir) are opened
 * for passing (not listing); a closed folder above them is the user's to decide on, so it is named with the fix.
 */
async function checkReachable(account: Account, ownFolders: string[], dataDir: string): Promise<void> {
  for (const folder of ownFolders) chmodSync(folder, statSync(folder).mode | 0o001);
  const canEnter = (folder: string) =>
    capture(...asServerUser(account, 'test', ['-x', folder])).then(
      () => true,
      () => false,
    );
  if (await canEnter(dataDir)) return;
  const closed: string[] = [];
  for (let folder = dirname(dataDir); ; folder = dirname(folder)) {
    if (!(await canEnter(folder))) closed.push(folder);
    if (folder === dirname(folder)) break;
  }
  const outermost = closed[closed.length - 1] ?? dirname(dataDir);
  throw new MissingPrerequisite(
    `PostgreSQL runs as the '${SERVER_USER}' user, who cannot reach ${dataDir}: ${outermost} is closed to other users.`,
    `chmod o+x ${closed.reverse().join(' ')}   (or give --state-dir a folder outside it)`,
  );
}
