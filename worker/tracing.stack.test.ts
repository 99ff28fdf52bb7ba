import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { inCluster } from '../model/naming';
import { OBJECT_ATTRIBUTES } from '../platform/tracing';
import { baseWorkerEnv, runProbeWorker, terminateRunning, waitFor } from '../test/support';
import { echoOnce, finish, operatorStandIn } from '../test/support/probe-workflows';

/** A span as OTLP/HTTP JSON carries it, with what the test reads. */
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string } }[];
}
interface ExportRequest {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: JsonSpan[] }[];
  }[];
}

interface Received {
  service: string | undefined;
  span: JsonSpan;
  attribute(key: string): string | undefined;
}

interface ProtoAttribute {
  key: string;
  value?: { stringValue?: string | null } | null;
}
interface ProtoRequest {
  resourceSpans: {
    resource?: { attributes: ProtoAttribute[] } | null;
    scopeSpans: {
      spans: {
        traceId: Uint8Array;
        spanId: Uint8Array;
        parentSpanId?: Uint8Array | null;
        name: string;
        attributes: ProtoAttribute[];
      }[];
    }[];
  }[];
}
/* eslint-disable @typescript-eslint/no-require-imports -- the static protobuf code the exporters encode with, typed only as a Root */
const TraceRequest = (
  require('@opentelemetry/otlp-transformer/build/src/generated/root') as {
    opentelemetry: {
      proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(b: Buffer): ProtoRequest } } } } };
    };
  }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
/* eslint-enable @typescript-eslint/no-require-imports */

/** An OTLP/HTTP protobuf request in the shape of OTLP/HTTP JSON (ids in hex), so one reader serves both. */
function fromProtobuf(body: Buffer): ExportRequest {
  const hex = (bytes: Uint8Array | null | undefined) =>
    bytes?.length ? Buffer.from(bytes).toString('hex') : undefined;
  const attributes = (list: ProtoAttribute[]) =>
    list.map(({ key, value }) => ({ key, value: { stringValue: value?.stringValue ?? undefined } }));
  return {
    resourceSpans: TraceRequest.decode(body).resourceSpans.map(({ resource, scopeSpans }) => ({
      resource: { attributes: attributes(resource?.attributes ?? []) },
      scopeSpans: scopeSpans.map(({ spans }) => ({
        spans: spans.map((span) => ({
          traceId: hex(span.traceId)!,
          spanId: hex(span.spanId)!,
          parentSpanId: hex(span.parentSpanId),
          name: span.name,
          attributes: attributes(span.attributes),
        })),
      })),
    })),
  };
}

/**
 * An OTLP receiver (POST /v1/traces, protobuf or JSON, as the exporter's content type says), keeping every span it is
 * sent with its resource's service name and the protocols it was sent by.
 */
function otlpReceiver(): Promise<{ server: Server; url: string; spans: Received[]; contentTypes: Set<string> }> {
  const spans: Received[] = [];
  const contentTypes = new Set<string>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const contentType = req.headers['content-type'] ?? '';
      contentTypes.add(contentType);
      const request =
        contentType === 'application/x-protobuf'
          ? fromProtobuf(body)
          : (JSON.parse(body.toString('utf8')) as ExportRequest);
      for (const { resource, scopeSpans } of request.resourceSpans) {
        const service = resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
        for (const span of scopeSpans.flatMap((s) => s.spans))
          spans.push({
            service,
            span,
            attribute: (key) => span.attributes.find((a) => a.key === key)?.value.stringValue,
          });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes }),
    ),
  );
}

/** The object attributes of a span, beside its name so that a failure says which span lacks them. */
const objectOf = (s: Received) => ({
  span: s.span.name,
  kind: s.attribute(OBJECT_ATTRIBUTES.kind),
  namespace: s.attribute(OBJECT_ATTRIBUTES.namespace),
  name: s.attribute(OBJECT_ATTRIBUTES.name),
});

describe('traces of a worker given an OTLP endpoint', () => {
  const saved = { ...process.env };
  const taskQueue = `tracing-test-${Date.now()}`;
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;

  beforeAll(async () => {
    receiver = await otlpReceiver();
  });

  afterAll(async () => {
    process.env = saved;
    await new Promise((resolve) => receiver?.server.close(resolve));
  });

  it("links the client's StartWorkflow, the workflow run and its activity in one trace, each with the object, sent by OTLP's default protocol (HTTP/protobuf)", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL;
    delete process.env.OTEL_SERVICE_NAME;
    const running = await runProbeWorker(taskQueue, { log: pino({ level: 'error' }) });
    try {
      // The worker's client: made by the one connection factory, as the starter's and the CLI's are.
      const workflowId = `pod/${taskQueue}/traced`;
      expect(await running.client.workflow.execute(echoOnce, { taskQueue, workflowId, args: ['hi'] })).toBe('hi');
    } finally {
      // Shutting down sends what is buffered: nothing is read before.
      await running.shutdown();
    }

    const start = receiver.spans.find(
      (s) =>
        s.span.name === 'StartWorkflow:echoOnce' && s.attribute('temporalWorkflowId') === `pod/${taskQueue}/traced`,
    );
    expect(start).toBeDefined();
    const trace = receiver.spans.filter((s) => s.span.traceId === start!.span.traceId);
    const named = (name: string) => {
      const found = trace.filter((s) => s.span.name === name);
      expect(found.map((s) => s.span.name)).toEqual([name]);
      return found[0]!;
    };
    const run = named('RunWorkflow:echoOnce');
    const schedule = named('StartActivity:testEcho');
    const activity = named('RunActivity:testEcho');
    expect(run.span.parentSpanId).toBe(start!.span.spanId);
    expect(schedule.span.parentSpanId).toBe(run.span.spanId);
    expect(activity.span.parentSpanId).toBe(schedule.span.spanId);
    for (const s of [start!, run, schedule, activity]) {
      expect({ span: s.span.name, service: s.service }).toEqual({ span: s.span.name, service: 'steward-worker' });
      expect(objectOf(s)).toEqual({ span: s.span.name, kind: 'Pod', namespace: taskQueue, name: 'traced' });
    }
    expect([...receiver.contentTypes]).toEqual(['application/x-protobuf']);
  });
  it("traces a steward command's call as steward-cli, in one trace with the worker's handling of it, by OTLP/HTTP JSON when asked", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    receiver.contentTypes.clear();
    const cliQueue = `${taskQueue}-cli`;
    const ref = { kind: 'Pod' as const, namespace: cliQueue, name: 'paused' };
    const running = await runProbeWorker(cliQueue, { log: pino({ level: 'error' }) });
    try {
      const handle = await running.client.workflow.start(operatorStandIn, {
        taskQueue: cliQueue,
        workflowId: `pod/${cliQueue}/paused`,
        args: [ref],
      });
      // A process of its own, as an operator runs it: the command line's own tracing, sent before it exits.
      const bin = join(__dirname, '..', 'bin', 'steward.cjs');
      const args = [
        bin,
        'pause',
        `pod/${cliQueue}/paused`,
        '--via',
        'temporal',
        '--reason',
        'traced',
        '--address',
        stackInfo().temporal.address,
      ];
      await promisify(execFile)(process.execPath, args, { env: { ...process.env, NO_COLOR: '1' } });
      await handle.signal(finish);
    } finally {
      await running.shutdown();
    }

    const update = receiver.spans.find(
      (s) => s.service === 'steward-cli' && s.span.name === 'StartWorkflowUpdate:pause',
    );
    expect(update).toBeDefined();
    const handled = receiver.spans.filter(
      (s) => s.span.traceId === update!.span.traceId && s.span.name === 'HandleUpdate:pause',
    );
    expect(handled.map((s) => s.service)).toEqual(['steward-worker']);
    for (const s of [update!, handled[0]!]) expect(objectOf(s)).toEqual({ span: s.span.name, ...ref });
    expect([...receiver.contentTypes]).toEqual(['application/json']);
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
  });
  it("traces the starter's start of an object's workflow as steward-starter, in one trace with the worker's run", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    const info = stackInfo();
    // A cluster of its own: the global setup workflow, the sweeper's Schedule and the Nodes' workflows this starter
    // starts get its prefix, so none of them touches the stack's other tests.
    const cluster = `traced-${Date.now().toString(36)}`;
    const namespace = cluster;
    const kubeConfig = new k8s.KubeConfig();
    kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const running = await runProbeWorker(inCluster(taskQueue, cluster), { log: pino({ level: 'error' }) });
    const env: NodeJS.ProcessEnv = {
      ...baseWorkerEnv(info),
      STEWARD_CLUSTER_ID: cluster,
      STEWARD_TASK_QUEUE: taskQueue,
      STEWARD_WATCH_NAMESPACE: namespace,
      STEWARD_LEASE_NAME: `steward-${cluster}`,
      STEWARD_IDENTITY: cluster,
      STEWARD_DEBOUNCE_WINDOW: '50ms',
      STEWARD_SWEEP_BACKENDS: 'none',
      STEWARD_STARTER_HTTP_HOST: '127.0.0.1',
      STEWARD_STARTER_HTTP_PORT: '0',
    };
    delete env.OTEL_SERVICE_NAME;
    // A process of its own, as a cluster runs it: the service name is the starter's, not the worker's of this process.
    const starter = spawn(process.execPath, [join(__dirname, '..', 'bin', 'steward.cjs'), 'starter'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    starter.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
    const exited = once(starter, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const workflowId = inCluster(`pod/${namespace}/traced`, cluster);
    try {
      await core.createNamespacedPod({
        namespace,
        body: { metadata: { name: 'traced' }, spec: { containers: [{ name: 'c', image: 'registry.invalid/none' }] } },
      });
      await waitFor(
        `${workflowId} started by the starter and run by the worker`,
        async () => (await running.client.workflow.getHandle(workflowId).describe()).status.name === 'COMPLETED',
        120_000,
      );
    } finally {
      starter.kill('SIGTERM');
      await exited;
      // No worker of this cluster's kinds but the Pod's: its global setup and Nodes' workflows would wait forever.
      await terminateRunning(
        running.client,
        'tracing test done',
        `ExecutionStatus="Running" AND WorkflowId STARTS_WITH '${cluster}/'`,
      );
      await running.shutdown();
      await core.deleteNamespace({ name: namespace });
    }
    // Its spans are sent as it stops: a graceful stop is part of what is tested. Its log says why, if not.
    expect([...(await exited), log]).toEqual([0, null, log]);

    const start = receiver.spans.find(
      (s) => s.span.name === 'StartWorkflow:podLifecycle' && s.attribute('temporalWorkflowId') === workflowId,
    );
    expect(start?.service).toBe('steward-starter');
    expect(objectOf(start!)).toEqual({ span: start!.span.name, kind: 'Pod', namespace, name: 'traced' });
    const run = receiver.spans.filter(
      (s) => s.span.traceId === start!.span.traceId && s.span.name === 'RunWorkflow:podLifecycle',
    );
    expect(run.map((s) => [s.service, s.span.parentSpanId])).toEqual([['steward-worker', start!.span.spanId]]);
    expect(objectOf(run[0]!)).toEqual({ span: run[0]!.span.name, kind: 'Pod', namespace, name: 'traced' });
  });
});
