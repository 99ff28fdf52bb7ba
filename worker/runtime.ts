import type { LogLevel as SdkLogLevel } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Logger } from 'pino';
import { freePort } from './ports';

let sdkMetrics: { url?: string } | undefined;

/**
 * Installs the SDK's process-wide Runtime once: its logs (Rust core's too) go through pino, SIGINT and SIGTERM shut
 * every Worker down gracefully, and core's Prometheus exporter listens on a loopback port that `/metrics` reads, so
 * operators scrape one port. Resolves that exporter's URL; undefined when another part of the process installed the
 * Runtime first (then the SDK's metrics are not served).
 */
export async function installRuntime(log: Logger): Promise<string | undefined> {
  if (sdkMetrics) return sdkMetrics.url;
  const bindAddress = `127.0.0.1:${await freePort()}`;
  const logger = new DefaultLogger(log.level.toUpperCase() as SdkLogLevel, ({ level, message, meta }) => {
    log[level.toLowerCase() as Lowercase<SdkLogLevel>]({ ...meta }, message);
  });
  try {
    Runtime.install({
      logger,
      shutdownSignals: ['SIGINT', 'SIGTERM'],
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        metrics: { prometheus: { bindAddress, countersTotalSuffix: true, useSecondsForDurations: true } },
      },
    });
    sdkMetrics = { url: `http://${bindAddress}/metrics` };
  } catch (error) {
    log.warn(
      { err: error },
      'the Temporal Runtime was installed elsewhere in this process: SDK metrics are not served',
    );
    sdkMetrics = {};
  }
  return sdkMetrics.url;
}
