import { readFile } from 'node:fs/promises';
import { Client, Connection, type ConnectionLike, type TLSConfig } from '@temporalio/client';
import { requireSearchAttributes } from './search-attributes';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import { backoffDelay, sleep, type Backoff } from './backoff';
import type { TemporalConnectionConfig, TemporalTls } from './temporal-config';
import { activeTracing } from './tracing';

/**
 * The project's one way to connect to Temporal (worker, starter, CLI, tests): plaintext, TLS, mTLS or API key, from
 * a TemporalConnectionConfig. Connections are checked on the spot, because a Worker created against a server that is
 * not there keeps the process alive forever instead of failing. Its clients are traced when the process's tracing is
 * on (tracing.ts).
 */

export class TemporalUnreachableError extends Error {
  constructor(config: TemporalConnectionConfig, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      `Temporal at ${config.address} (namespace ${config.namespace}${config.tls ? ', TLS' : ''}) is not reachable: ${reason}`,
      { cause },
    );
    this.name = 'TemporalUnreachableError';
  }
}

/** A process was told to stop while it waited for Temporal: nothing had started yet. */
export class StoppedWaitingError extends Error {
  constructor(config: TemporalConnectionConfig) {
    super(`stopped while waiting for Temporal at ${config.address}`);
    this.name = 'StoppedWaitingError';
  }
}

/** A PEM from its file, else as the profile wrote it. */
const pem = async (file?: string, written?: string) =>
  file ? await readFile(file) : written === undefined ? undefined : Buffer.from(written);

async function tlsOptions(tls: TemporalTls | undefined): Promise<TLSConfig | undefined> {
  if (!tls) return undefined;
  const crt = await pem(tls.clientCertFile, tls.clientCertPem);
  const key = await pem(tls.clientKeyFile, tls.clientKeyPem);
  return {
    serverNameOverride: tls.serverName,
    serverRootCACertificate: await pem(tls.caFile, tls.caPem),
    clientCertPair: crt && key ? { crt, key } : undefined,
  };
}

/** The options both connections (client and worker) take. Exported for its test. */
export async function connectionOptions(config: TemporalConnectionConfig) {
  // An empty TLSConfig means "TLS with the system's roots", which is what an API key alone needs.
  return {
    address: config.address,
    tls: await tlsOptions(config.tls),
    apiKey: config.apiKey,
    metadata: config.metadata,
  };
}

const checkTimeoutMs = 5_000;

/** Answers within a few seconds whether the frontend serves this namespace; throws TemporalUnreachableError if not. */
export async function checkTemporal(
  connection: ConnectionLike,
  config: TemporalConnectionConfig,
  timeoutMs = checkTimeoutMs,
): Promise<void> {
  try {
    await connection.withDeadline(Date.now() + timeoutMs, () =>
      connection.workflowService.describeNamespace({ namespace: config.namespace }),
    );
  } catch (error) {
    throw new TemporalUnreachableError(config, error);
  }
}

/** A Client on a checked connection; close it with `client.connection.close()`. */
export async function connectClient(config: TemporalConnectionConfig): Promise<Client> {
  // Lazy, so that a connection that fails is closed too: a process retrying would otherwise keep every failed one.
  const connection = Connection.lazy({ ...(await connectionOptions(config)), connectTimeout: checkTimeoutMs });
  try {
    await connection.ensureConnected();
    await checkTemporal(connection, config);
  } catch (error) {
    await connection.close();
    throw error instanceof TemporalUnreachableError ? error : new TemporalUnreachableError(config, error);
  }
  return new Client({ connection, namespace: config.namespace, interceptors: activeTracing()?.client });
}

/** The worker's connection (Rust core). Connect the client first: its check gives the clearer error. */
export async function connectWorker(config: TemporalConnectionConfig): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(await connectionOptions(config));
  } catch (error) {
    throw new TemporalUnreachableError(config, error);
  }
}

/** How far a process got with Temporal: its client once connected, else why the last attempt failed. */
export interface TemporalReach {
  client?: Client;
  unreachable?: Error;
}

/** Readiness check of a process's Temporal: its client's check (2 s) once connected, else why it is not yet. */
export const temporalReadiness = (config: TemporalConnectionConfig, reach: TemporalReach) => (): Promise<void> =>
  reach.client
    ? checkTemporal(reach.client.connection, config, 2_000)
    : Promise.reject(reach.unreachable ?? new Error(`connecting to Temporal at ${config.address}`));

export interface WaitForTemporalOptions {
  log: Logger;
  /** Ends the wait: it then rejects with StoppedWaitingError. */
  signal?: AbortSignal;
  backoff?: Backoff;
  /** Told each failed attempt, e.g. so that readiness says why. */
  onUnreachable?: (error: TemporalUnreachableError) => void;
}

const WAIT_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000 };

/**
 * A Client as `connectClient` makes it, once Temporal answers. A process started during a Temporal outage waits,
 * with backoff, instead of exiting: exiting would only have it restarted over and over until Temporal is back. Each
 * failed attempt is logged once, with why; any other error (a TLS file that cannot be read, Steward's search
 * attributes missing from the namespace: search-attributes.ts) fails at once.
 */
export async function connectClientWhenReachable(
  config: TemporalConnectionConfig,
  { log, signal, backoff = WAIT_BACKOFF, onUnreachable }: WaitForTemporalOptions,
): Promise<Client> {
  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) throw new StoppedWaitingError(config);
    try {
      const client = await connectClient(config);
      await requireSearchAttributes(client.connection as Connection, config.namespace, (reason) =>
        log.warn({ reason }, "could not check Steward's search attributes: taken as registered"),
      ).catch(async (error: unknown) => {
        await client.connection.close();
        throw error;
      });
      return client;
    } catch (error) {
      if (!(error instanceof TemporalUnreachableError)) throw error;
      onUnreachable?.(error);
      const delayMs = backoffDelay(backoff, attempt);
      log.warn({ attempt: attempt + 1, delayMs, reason: error.message }, 'Temporal is not reachable: waiting for it');
      await sleep(delayMs, signal);
    }
  }
}
