import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { acquireTracing, activeTracing, resourceAttributes, tracesExport } from './tracing';
import { stewardVersion } from './version';

// A declaration, hoisted with the mocks that use it.
function mockExporterModule() {
  return {
    OTLPTraceExporter: jest.fn(() => ({
      export: jest.fn((_spans, done: (result: { code: number }) => void) => done({ code: 0 })),
      forceFlush: jest.fn(() => Promise.resolve()),
      shutdown: jest.fn(() => Promise.resolve()),
    })),
  };
}
jest.mock('@opentelemetry/exporter-trace-otlp-proto', mockExporterModule);
jest.mock('@opentelemetry/exporter-trace-otlp-grpc', mockExporterModule);
jest.mock('@opentelemetry/exporter-trace-otlp-http', mockExporterModule);

const exporterMock = jest.mocked(OTLPTraceExporter);
const grpcMock = jest.mocked(GrpcExporter);
const jsonMock = jest.mocked(JsonExporter);

describe('tracing', () => {
  beforeEach(() => [exporterMock, grpcMock, jsonMock].forEach((mock) => mock.mockClear()));

  it('is off without an OTLP endpoint: no exporter, no interceptors for the clients', async () => {
    const lease = acquireTracing('steward-cli', { OTEL_SERVICE_NAME: 'ignored' });
    expect(lease.tracing).toBeUndefined();
    expect(activeTracing()).toBeUndefined();
    expect(exporterMock).not.toHaveBeenCalled();
    await lease.release();
  });

  it('is on with one: an OTLP/HTTP protobuf exporter to its /v1/traces, shared by the process until the last user releases it', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' };
    const worker = acquireTracing('steward-worker', env);
    const starter = acquireTracing('steward-starter', {});
    expect(exporterMock).toHaveBeenCalledTimes(1);
    expect(exporterMock).toHaveBeenCalledWith({ url: 'http://collector:4318/v1/traces' });
    expect(worker.tracing?.serviceName).toBe('steward-worker');
    expect(starter.tracing).toBe(worker.tracing);
    expect(worker.tracing?.worker.workflowModules).toHaveLength(1);
    await worker.release();
    await worker.release();
    expect(activeTracing()).toBe(starter.tracing);
    await starter.release();
    expect(activeTracing()).toBeUndefined();
    expect(acquireTracing('steward-cli', {}).tracing).toBeUndefined();
  });

  it('exports over gRPC or HTTP/JSON when OTEL_EXPORTER_OTLP_PROTOCOL says so, and refuses another protocol', async () => {
    const grpc = acquireTracing('steward-worker', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(grpcMock).toHaveBeenCalledWith({ url: 'http://collector:4317' });
    await grpc.release();
    const json = acquireTracing('steward-worker', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    });
    expect(jsonMock).toHaveBeenCalledWith({ url: 'http://collector:4318/v1/traces' });
    await json.release();
    expect(exporterMock).not.toHaveBeenCalled();
    expect(() =>
      acquireTracing('steward-worker', {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http',
      }),
    ).toThrow('OTEL_EXPORTER_OTLP_PROTOCOL: must be one of http/protobuf, grpc, http/json, got "http"');
    expect(activeTracing()).toBeUndefined();
  });

  it('names the service after OTEL_SERVICE_NAME when given', async () => {
    const lease = acquireTracing('steward-cli', {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_SERVICE_NAME: 's',
    });
    expect(lease.tracing?.serviceName).toBe('s');
    await lease.release();
  });
});

describe('resourceAttributes', () => {
  it("names the service and Steward's version, and takes OTEL_RESOURCE_ATTRIBUTES over them", () => {
    expect(resourceAttributes('steward-worker', {})).toEqual({
      'service.name': 'steward-worker',
      'service.version': stewardVersion(),
    });
    const env = {
      OTEL_RESOURCE_ATTRIBUTES:
        'k8s.cluster.name=prod%2Ceu, deployment.environment=staging,service.version=1.2.3,bad,=x',
    };
    expect(resourceAttributes('steward-starter', env)).toEqual({
      'service.name': 'steward-starter',
      'service.version': '1.2.3',
      'k8s.cluster.name': 'prod,eu',
      'deployment.environment': 'staging',
    });
  });
});

describe('tracesExport', () => {
  it('takes the traces endpoint as it is, else the general one with /v1/traces over HTTP and as it is over gRPC', () => {
    const http = 'http/protobuf';
    expect(tracesExport({})).toBeUndefined();
    expect(tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined();
    expect(tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      protocol: http,
      url: 'http://c:4318/v1/traces',
    });
    expect(
      tracesExport({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x',
      }),
    ).toEqual({ protocol: http, url: 'http://t:1/x' });
    expect(
      tracesExport({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317/', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toEqual({
      protocol: 'grpc',
      url: 'http://c:4317/',
    });
  });
});
