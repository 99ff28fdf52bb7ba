import { readFile } from 'node:fs/promises';
import { Client, Connection, type ConnectionLike, type TLSConfig } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { TemporalConnectionConfig, TlsFiles } from './temporal-config';

/**
 * The project's one way to connect to Temporal (worker, starter, CLI, tests): plaintext, TLS, mTLS or API key, from
 * a TemporalConnectionConfig. Connections are checked on the spot, because a Worker created against a server that is
 * not there keeps the process alive forever instead of failing.
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

async function tlsOptions(tls: TlsFiles | undefined): Promise<TLSConfig | undefined> {
  if (!tls) return undefined;
  const { clientCertFile, clientKeyFile, caFile, serverName } = tls;
  return {
    serverNameOverride: serverName,
    serverRootCACertificate: caFile ? await readFile(caFile) : undefined,
    clientCertPair:
      clientCertFile && clientKeyFile
        ? { crt: await readFile(clientCertFile), key: await readFile(clientKeyFile) }
        : undefined,
  };
}

async function connectionOptions(config: TemporalConnectionConfig) {
  // An empty TLSConfig means "TLS with the system's roots", which is what an API key alone needs.
  return { address: config.address, tls: await tlsOptions(config.tls), apiKey: config.apiKey };
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
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...(await connectionOptions(config)), connectTimeout: checkTimeoutMs });
  } catch (error) {
    throw new TemporalUnreachableError(config, error);
  }
  try {
    await checkTemporal(connection, config);
  } catch (error) {
    await connection.close();
    throw error;
  }
  return new Client({ connection, namespace: config.namespace });
}

/** The worker's connection (Rust core). Connect the client first: its check gives the clearer error. */
export async function connectWorker(config: TemporalConnectionConfig): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect(await connectionOptions(config));
  } catch (error) {
    throw new TemporalUnreachableError(config, error);
  }
}
