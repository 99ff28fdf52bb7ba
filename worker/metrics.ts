import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The worker's Prometheus metrics: backend call latency and errors (every activity, timed by an interceptor),
 * process metrics, and the SDK's own
 * `temporal_*` metrics, which Rust core serves on a loopback port and `/metrics` appends (one scrape target).
 */
export interface WorkerMetrics {
  registry: Registry;
  backendCallSeconds: Histogram<'backend' | 'operation'>;
  backendCallErrors: Counter<'backend' | 'operation' | 'type'>;
  buildInfo: Gauge<'build_id' | 'version'>;
}

export function createMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    backendCallSeconds: new Histogram({
      name: 'steward_backend_call_duration_seconds',
      help: 'Duration of backend calls (one activity execution, failed ones included), by backend and activity',
      labelNames: ['backend', 'operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    backendCallErrors: new Counter({
      name: 'steward_backend_call_errors_total',
      help: 'Failed backend calls, by backend, activity and failure type (e.g. MidonetUnavailable)',
      labelNames: ['backend', 'operation', 'type'],
      registers: [registry],
    }),
    buildInfo: new Gauge({
      name: 'steward_worker_build_info',
      help: 'Always 1: the build ID this worker reports to Temporal, and its Steward version',
      labelNames: ['build_id', 'version'],
      registers: [registry],
    }),
  };
}

/** The failure vocabulary (ApplicationFailure types) keeps the `type` label's cardinality small. */
const failureType = (error: unknown) => {
  if (error instanceof ApplicationFailure) return error.type ?? 'ApplicationFailure';
  if (error instanceof CancelledFailure) return 'Cancelled';
  return error instanceof Error ? error.name : 'Unknown';
};

/** Times every activity (local ones too) under the backend its factory belongs to. */
export function activityMetricsInterceptor(
  metrics: WorkerMetrics,
  backendOf: (activityType: string) => string,
): ActivityInterceptorsFactory {
  return (ctx) => {
    const operation = ctx.info.activityType;
    const labels = { backend: backendOf(operation), operation };
    return {
      inbound: {
        execute: async (input, next) => {
          const end = metrics.backendCallSeconds.startTimer(labels);
          try {
            return await next(input);
          } catch (error) {
            metrics.backendCallErrors.inc({ ...labels, type: failureType(error) });
            throw error;
          } finally {
            end();
          }
        },
      },
    };
  };
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A Prometheus page with every label name in snake_case. The metrics a workflow emits through the SDK's meter (the
 * sweep's) carry the tags the SDK adds in TypeScript, `taskQueue` and `workflowType`, where Rust core's own metrics
 * and Prometheus' convention say `task_queue` and `workflow_type`. Each `name="value"` pair is matched whole, so a
 * value is never rewritten.
 */
export function snakeCaseLabels(page: string): string {
  return page.replace(/^([a-zA-Z_:][\w:]*)\{(.*)\}/gm, (_line, metric: string, labels: string) => {
    const renamed = labels.replace(/(\w+)="((?:[^"\\]|\\.)*)"/g, (_pair, name: string, value: string) => {
      return `${snakeCase(name)}="${value}"`;
    });
    return `${metric}{${renamed}}`;
  });
}

/** Our registry followed by the SDK's metrics, when Rust core exports them; a core that does not answer costs only its part. */
export async function metricsText(
  metrics: WorkerMetrics,
  sdkMetricsUrl: string | undefined,
  log: Logger,
): Promise<string> {
  const own = await metrics.registry.metrics();
  if (!sdkMetricsUrl) return own;
  try {
    const reply = await fetch(sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) });
    return `${own}\n${snakeCaseLabels(await reply.text())}`;
  } catch (error) {
    log.warn({ err: error }, 'SDK metrics unavailable');
    return own;
  }
}
