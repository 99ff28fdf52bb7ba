import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { acquireTracing, activeTracing, resourceAttributes, tracesUrl } from './tracing';
import { stewardVersion } from './version';

jest.mock('@opentelemetry/exporter-trace-otlp-http', () => ({
  OTLPTraceExporter: jest.fn(() => ({
    export: jest.fn((_spans, done: (result: { code: number }) => void) => done({ code: 0 })),
    forceFlush: jest.fn(() => Promise.resolve()),
    shutdown: jest.fn(() => Promise.resolve()),
  })),
}));

const exporterMock = jest.mocked(OTLPTraceExporter);

describe('tracing', () => {
  beforeEach(() => exporterMock.mockClear());

  it('is off without an OTLP endpoint: no exporter, no interceptors for the clients', async () => {
    const lease = acquireTracing('steward-cli', { OTEL_SERVICE_NAME: 'ignored' });
    expect(lease.tracing).toBeUndefined();
    expect(activeTracing()).toBeUndefined();
    expect(exporterMock).not.toHaveBeenCalled();
    await lease.release();
  });

  it('is on with one: an exporter to its /v1/traces, shared by the process until the last user releases it', async () => {
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

describe('tracesUrl', () => {
  it('takes the traces endpoint as it is, else the general one with /v1/traces', () => {
    expect(tracesUrl({})).toBeUndefined();
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBeUndefined();
    expect(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBe('http://c:4318/v1/traces');
    expect(
      tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x' }),
    ).toBe('http://t:1/x');
  });
});
