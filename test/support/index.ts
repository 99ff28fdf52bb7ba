// Test helpers used by more than one folder (stack tests, end-to-end suites, bench/). A helper used by one folder's
// tests only lives next to them, in that folder's testing/ (workflows/machines/testing/, starter/controller/testing/,
// deploy/local/midonet/testing/, deploy/local/testing/, workflows/testing/). Nothing here is imported by product code.
import { DEFAULT_WAVE } from '../../model/deletion-guard';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import pino from 'pino';
import type { ActivityGroups } from '../../activities/compose';
import { loadWorkerConfig, runWorker, type RunWorkerOptions } from '../../cli/worker';
import { stackInfo } from '../../deploy/local/jest/stack-info';
import { sleep } from '../../deploy/local/process';
import { STACK_STEWARD_SETTINGS, temporalEnv, type StackInfo } from '../../deploy/local/stack';
import type { WorkerSettingValues } from '../../deploy/local/worker-process';
import { createStarter, type Starter, type StarterOptions } from '../../starter/controller';
import type { Observation } from '../../model/messages';
import { peerPodTaskQueue } from '../../model/naming';
import type { RunningWorker } from '../../worker';
import { testActivities } from './probe-activities';

/**
 * Polls `probe` until it gives a value (not undefined or false) and returns it; on timeout the error names what was
 * awaited and the probe's last error. Shared by the end-to-end harnesses.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`,
      );
    await sleep(intervalMs);
  }
}

/** The MidoNet user the harnesses seed in the emulator and give the worker. */
export const MIDONET_USER = { username: 'admin', password: 'secret' };

/** The real worker's settings on a stack; the password has no setting of its own (MIDONET_PASSWORD, a secret). */
export function workerSettingsOn(info: StackInfo): WorkerSettingValues {
  return {
    address: info.temporal.address,
    temporalNamespace: info.temporal.namespace,
    kubeconfig: info.kubernetes.kubeconfig,
    midonetUrl: info.midonet.url,
    midonetUsername: MIDONET_USER.username,
    httpHost: '127.0.0.1',
    httpPort: '0',
    logLevel: 'error',
  };
}

/** The real worker in the test process on the stack, polling `taskQueue`, with these cloud activities (none: undefined). */
export function runStackWorker(
  info: StackInfo,
  taskQueue: string,
  cloud: ActivityGroups['cloud'],
): Promise<RunningWorker> {
  const config = loadWorkerConfig(
    { ...workerSettingsOn(info), taskQueue },
    { MIDONET_PASSWORD: MIDONET_USER.password },
  );
  return runWorker(config, { activities: { cloud }, log: pino({ level: 'error' }) });
}

/**
 * The real worker in the test process on the stack's Temporal and cluster, polling `taskQueue`, with the probe
 * workflows and activities (test/support/probe-*) in place of Steward's.
 */
export function runProbeWorker(taskQueue: string, options: Pick<RunWorkerOptions, 'log'> = {}): Promise<RunningWorker> {
  const { temporal, kubernetes } = stackInfo();
  // The stack's cluster too: the worker is ready only when the cluster of its Kubernetes activities answers.
  const config = loadWorkerConfig(
    { address: temporal.address, kubeconfig: kubernetes.kubeconfig, taskQueue, httpHost: '127.0.0.1', httpPort: '0' },
    {},
  );
  return runWorker(config, {
    activities: { test: testActivities },
    workflowsPath: require.resolve('./probe-workflows'),
    log: pino({ level: 'error' }),
    ...options,
  });
}

/** The stack's Temporal and Kubernetes, as `steward worker` and `steward starter` read them from the environment. */
const clusterEnv = (info: StackInfo) => ({
  ...temporalEnv(info.temporal),
  ...STACK_STEWARD_SETTINGS,
  KUBECONFIG: info.kubernetes.kubeconfig,
});

/** The stack's Temporal and Kubernetes for a worker run from the environment (`steward worker`, `loadWorkerConfig`). */
export function baseWorkerEnv(info: StackInfo): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...clusterEnv(info),
    STEWARD_HTTP_HOST: '127.0.0.1',
    STEWARD_HTTP_PORT: '0',
    STEWARD_LOG_LEVEL: 'error',
  };
}

/** Everything of the stack a `steward` process reads from the environment: Temporal, Kubernetes and MidoNet. */
export const stackEnv = (info: StackInfo): Record<string, string> => ({
  ...clusterEnv(info),
  MIDONET_API_URL: info.midonet.url,
  MIDONET_USERNAME: 'admin',
  MIDONET_PASSWORD: 'admin',
});

/**
 * A started starter for a harness, with a Lease named after `identity`, so no other starter (nor a previous run's)
 * delays this one. Short (4 s, renewed every second) unless `lease` says otherwise.
 */
export function startTestStarter(options: StarterOptions): Starter {
  const starter = createStarter({
    // Tests delete much of their small clusters at once, with no operator to give the guard against mass deletion its
    // go-ahead: its wave trigger is off unless a test sets it (a share of 1 is never exceeded); the CRD's stays.
    massDeletion: { ...DEFAULT_WAVE, share: 1 },
    ...options,
    lease: {
      name: `steward-${options.identity}`,
      namespace: 'kube-system',
      leaseDurationSeconds: 4,
      renewSeconds: 1,
      ...options.lease,
    },
  });
  starter.start();
  return starter;
}

/**
 * Terminates the running workflows `query` selects: left running (ready ones wait on a drift timer), they would act
 * on the backends of the next run.
 */
export async function terminateRunning(
  client: Client,
  reason: string,
  query = 'ExecutionStatus="Running"',
): Promise<void> {
  for await (const wf of client.workflow.list({ query })) {
    await client.workflow
      .getHandle(wf.workflowId, wf.runId)
      .terminate(reason)
      .catch(() => undefined);
  }
}

/** A Worker in the test process on the stack's Temporal, with the activities a test fakes, and a client beside it. */
export interface InProcessWorker {
  client: Client;
  /** Stops polling, waits for the worker to finish and closes both connections. */
  stop(): Promise<void>;
}

export async function startInProcessWorker(
  options: { taskQueue: string; workflowsPath: string; activities: object } & Pick<
    WorkerOptions,
    'workflowFailureErrorTypes' | 'maxCachedWorkflows'
  >,
): Promise<InProcessWorker> {
  const { address } = stackInfo().temporal;
  // Connect first: a Worker against an unreachable server would keep jest alive.
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  // As `steward worker` polls: the workflows' queue, and the peer pods' VM creations on theirs (activities only; a
  // Worker with none at all is refused).
  const workers = [await Worker.create({ connection: nativeConnection, ...options })];
  if (Object.keys(options.activities).length > 0)
    workers.push(
      await Worker.create({
        connection: nativeConnection,
        taskQueue: peerPodTaskQueue(options.taskQueue),
        activities: options.activities,
      }),
    );
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    client: new Client({ connection }),
    async stop() {
      workers.forEach((w) => w.shutdown());
      await running;
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/**
 * The observations a lifecycle workflow was given, oldest first: the one it was started with (the starter puts an
 * incarnation's first observation in the input) and every `observed` signal after.
 */
export function observationsIn(history: temporal.api.history.v1.IHistory): Observation[] {
  return (history.events ?? []).flatMap((event) => {
    const started = event.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (started) {
      const { observation } = defaultPayloadConverter.fromPayload<{ observation?: Observation }>(started);
      return observation ? [observation] : [];
    }
    const signal = event.workflowExecutionSignaledEventAttributes;
    return signal?.signalName === 'observed'
      ? [defaultPayloadConverter.fromPayload<Observation>(signal.input!.payloads![0]!)]
      : [];
  });
}
