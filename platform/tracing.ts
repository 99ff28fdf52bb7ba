/**
 * Traces (OpenTelemetry), off unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set. Then
 * Temporal's interceptors trace the clients' calls (StartWorkflow, SignalWorkflow …), the workflow runs and the
 * activities, one trace from a client's call down, and the spans go there by OTLP (gRPC, HTTP/protobuf or HTTP/JSON, as
 * OTEL_EXPORTER_OTLP_PROTOCOL says; HTTP/protobuf by default, as the specification has it). Off, none of the
 * OpenTelemetry packages is even loaded. One per process, as OpenTelemetry's global provider is: `steward up` runs
 * the worker and the starter in one process, and the first to start names the service.
 */
import type * as Api from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as GrpcExporter from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as JsonExporter from '@opentelemetry/exporter-trace-otlp-http';
import type * as ProtobufExporter from '@opentelemetry/exporter-trace-otlp-proto';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import { objectOfWorkflowId } from '../model/naming';
import { stewardVersion } from './version';

/** What Temporal's clients and workers add when tracing is on. */
export interface Tracing {
  serviceName: string;
  /** For every Client the process makes (platform/temporal-connection.ts gives them). */
  client: ClientInterceptors;
  worker: {
    /** Activity interceptors: RunActivity spans, children of the workflow's StartActivity. */
    activity: NonNullable<WorkerInterceptors['activity']>;
    /** Where the workflow sandbox's spans leave it: the package's exporter sink. */
    sinks: InjectedSinks<TemporalOtel.OpenTelemetrySinks>;
    /** Workflow interceptor modules, bundled with the workflows: RunWorkflow and StartActivity spans. */
    workflowModules: string[];
  };
}

/** The attributes that say which object a span is about; every span of a lifecycle workflow has them. */
export const OBJECT_ATTRIBUTES = {
  kind: 'steward.object.kind',
  namespace: 'steward.object.namespace',
  name: 'steward.object.name',
} as const;

export const OTLP_PROTOCOLS = ['http/protobuf', 'grpc', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** Where spans go, and how, as OTLP's variables say; undefined when no endpoint is set (tracing off). */
export interface TracesExport {
  protocol: OtlpProtocol;
  url: string;
}

/**
 * The traces endpoint as it is, else the general one: with its /v1/traces over HTTP, as it is over gRPC (a gRPC
 * collector serves every signal at one address). The protocol is the traces' own, else the general one, else
 * HTTP/protobuf; any other value is refused with the variable named, rather than spans silently sent nowhere.
 */
export function tracesExport(env: NodeJS.ProcessEnv = process.env): TracesExport | undefined {
  const named = (['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'] as const).find((name) =>
    env[name]?.trim(),
  );
  const given = named && env[named]!.trim();
  if (given !== undefined && !(OTLP_PROTOCOLS as readonly string[]).includes(given))
    throw new Error(`${named}: must be one of ${OTLP_PROTOCOLS.join(', ')}, got "${given}"`);
  const protocol = (given ?? 'http/protobuf') as OtlpProtocol;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return { protocol, url: traces };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return { protocol, url: protocol === 'grpc' ? base : `${base.replace(/\/+$/, '')}/v1/traces` };
}

/**
 * The resource every span carries: the service's name and Steward's version, then OTEL_RESOURCE_ATTRIBUTES (key=value
 * pairs, comma-separated, percent-encoded, as the specification has them), which may add to or override them. Read
 * here from the settings' environment: the SDK's own detector reads only process.env.
 */
export function resourceAttributes(serviceName: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const given = (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',').flatMap((pair): [string, string][] => {
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at).trim() : '';
    if (!key) return [];
    try {
      return [[decodeURIComponent(key), decodeURIComponent(pair.slice(at + 1).trim())]];
    } catch {
      return []; // not percent-decodable: left out, as the SDK leaves out what it cannot parse
    }
  });
  return { 'service.name': serviceName, 'service.version': stewardVersion(), ...Object.fromEntries(given) };
}

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on: off, it costs nothing */
const load = () => ({
  api: require('@opentelemetry/api') as typeof Api,
  asyncHooks: require('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks,
  exporters: {
    'http/protobuf': () => require('@opentelemetry/exporter-trace-otlp-proto') as typeof ProtobufExporter,
    grpc: () => require('@opentelemetry/exporter-trace-otlp-grpc') as typeof GrpcExporter,
    'http/json': () => require('@opentelemetry/exporter-trace-otlp-http') as typeof JsonExporter,
  },
  resources: require('@opentelemetry/resources') as typeof Resources,
  sdk: require('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase,
  temporal: require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel,
});
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Adds the object's kind, namespace and name to each span that carries a lifecycle workflow's id: Temporal's
 * interceptors write it on client and activity spans (temporalWorkflowId), the workflow sink on the sandbox's
 * (workflowId, with the rest of the WorkflowInfo). At the end, because the interceptors set it only once the span
 * runs; the sink does the same to the sandbox's spans.
 */
function withObjectAttributes(next: SdkTraceBase.SpanProcessor): SdkTraceBase.SpanProcessor {
  return {
    onStart: (span, context) => next.onStart(span, context),
    onEnd: (span) => {
      const id = span.attributes.temporalWorkflowId ?? span.attributes.workflowId;
      const ref = typeof id === 'string' ? objectOfWorkflowId(id) : undefined;
      if (ref) {
        Object.assign(span.attributes, {
          [OBJECT_ATTRIBUTES.kind]: ref.kind,
          [OBJECT_ATTRIBUTES.name]: ref.name,
          ...(ref.namespace ? { [OBJECT_ATTRIBUTES.namespace]: ref.namespace } : {}),
        });
      }
      next.onEnd(span);
    },
    forceFlush: () => next.forceFlush(),
    shutdown: () => next.shutdown(),
  };
}

interface Active {
  tracing: Tracing;
  provider: SdkTraceBase.BasicTracerProvider;
  api: typeof Api;
  users: number;
}

let active: Active | undefined;

function start(serviceName: string, { protocol, url }: TracesExport, env: NodeJS.ProcessEnv): Active {
  const { api, asyncHooks, exporters, resources, sdk, temporal } = load();
  const resource = new resources.Resource(resourceAttributes(serviceName, env));
  const exporter = new (exporters[protocol]().OTLPTraceExporter)({ url });
  const processor = withObjectAttributes(new sdk.BatchSpanProcessor(exporter));
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [processor] });
  // Spans follow async calls (a client's StartWorkflow around its gRPC call); W3C trace context in Temporal's headers.
  provider.register({ contextManager: new asyncHooks.AsyncLocalStorageContextManager().enable() });
  const tracing: Tracing = {
    serviceName,
    client: { workflow: [new temporal.OpenTelemetryWorkflowClientInterceptor()] },
    worker: {
      activity: [
        (ctx) => ({
          inbound: new temporal.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new temporal.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
      sinks: { exporter: temporal.makeWorkflowExporter(processor, resource) },
      workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    },
  };
  return { tracing, provider, api, users: 0 };
}

export interface TracingLease {
  /** Undefined when tracing is off. */
  tracing: Tracing | undefined;
  /** Once every user released it, the provider shuts down: the spans still buffered are sent first. */
  release: () => Promise<void>;
}

/**
 * Tracing for a part of the process (`steward-worker`, `steward-starter`, `steward-cli`; OTEL_SERVICE_NAME overrides
 * it), started by the first user, shared by the next ones: release it when done.
 */
export function acquireTracing(defaultServiceName: string, env: NodeJS.ProcessEnv = process.env): TracingLease {
  if (!active) {
    const traces = tracesExport(env);
    if (!traces) return { tracing: undefined, release: () => Promise.resolve() };
    active = start(env.OTEL_SERVICE_NAME?.trim() || defaultServiceName, traces, env);
  }
  const lease = active;
  lease.users++;
  let released = false;
  return {
    tracing: lease.tracing,
    release: async () => {
      if (released) return;
      released = true;
      if (--lease.users > 0) return;
      if (active === lease) active = undefined;
      await lease.provider.shutdown();
      // A later start in this process (tests) registers afresh: the API keeps its first registration otherwise.
      lease.api.trace.disable();
      lease.api.context.disable();
      lease.api.propagation.disable();
    },
  };
}

/** The process's tracing, if on: what its Temporal clients add. */
export const activeTracing = (): Tracing | undefined => active?.tracing;

/** Sends the spans buffered so far: before a command exits on an error, which skips the release. */
export async function flushTracing(): Promise<void> {
  await active?.provider.forceFlush();
}
