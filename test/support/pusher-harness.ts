// The shared harness of the end-to-end tests: on the embedded stack that jest's global setup started, it runs the
// real worker (runWorker, configured by loadWorkerConfig) and the real starter (createStarter, Translations only) in
// the test process, next to a Temporal client, a Kubernetes client, the MidoNet client and the emulator's admin.
// Each test file gets its own Kubernetes namespace, its own Lease, and an emulator seeded as a deployer would.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { Command } from 'commander';
import pino from 'pino';
import { createMidonetClient, type MidonetClient } from '../../activities/midonet';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import { recordHistory } from '../replay/record';
import { EmulatorAdmin, type StateDump } from '../../deploy/local/midonet';
import {
  baseWorkerEnv,
  MIDONET_USER,
  startTestStarter,
  terminateRunning,
  waitFor as waitUntilValue,
  workerSettingsOn,
} from './index';
import { temporalEnv, type StackInfo } from '../../deploy/local/stack';
import type { Starter } from '../../starter/controller';
import { registerOperatorCommands, registerStatusCommand } from '../../cli/operator';
import { type RunningWorker } from '../../worker';
import { loadWorkerConfig, runWorker } from '../../cli/worker';
import { cleanupUpdate, stateQuery, type LifecycleStateView } from '../../model/messages';
import type { TranslationTimings } from '../../workflows/machines/translation';
import { TASK_QUEUE, workflowId, type ObjectRef } from '../../model/naming';
import { K8sKind, K8sName, K8sNamespace } from '../../model/search-attributes';
import { sampleCluster, sampleClusterTranslations } from '../../model/translation/sample-cluster';
import type { BackendResource, Translation } from '../../model/translation/types';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';
import type { translationLifecycle } from '../../workflows/translation-lifecycle';
import { executeUpdateWhenReady } from '../../platform/temporal-update';
import type { WorkerSettingValues } from '../../deploy/local/worker-process';

export const repoRoot = join(__dirname, '..', '..');
const TRANSLATIONS = { group: 'midonet.org', version: 'v1', plural: 'translations' } as const;
// The emulator accepts any well-formed credentials unless configured otherwise.
export const log = pino({ level: process.env.STEWARD_E2E_LOG ?? 'error' });

/** The deployer's cluster router (seed 001): seeded directly, never a Translation of ours, never removed. */
export const ROUTER_TRANSLATION = 'midonet-global.4.cluster-router';

export const waitFor = <T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
) => waitUntilValue(what, probe, timeoutMs);

/** The same settings as environment variables, for `steward worker` run as a process. */
export function workerEnv(info: StackInfo): NodeJS.ProcessEnv {
  return {
    ...baseWorkerEnv(info),
    MIDONET_API_URL: info.midonet.url,
    MIDONET_USERNAME: MIDONET_USER.username,
    MIDONET_PASSWORD: MIDONET_USER.password,
  };
}

export interface Harness {
  info: StackInfo;
  /** This file's Kubernetes namespace: every Translation of the file lives here. */
  namespace: string;
  kubeConfig: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
  client: Client;
  admin: EmulatorAdmin;
  midonet: MidonetClient;
  starter: Starter;
  /** The worker in this process, with these settings over the stack's (e.g. another kubeconfig). */
  startWorker(settings?: WorkerSettingValues): Promise<RunningWorker>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Starts this file's namespace name. */
  prefix: string;
  worker?: boolean;
}

/**
 * Starts the harness. `worker: false` leaves the worker to the test (e.g. one run as a process and killed).
 * The emulator is reset and seeded: the sample cluster's hosts (their agents register them) and the cluster router.
 */
export async function startHarness({ prefix, worker = true }: HarnessOptions): Promise<Harness> {
  const stack = await startPrivateStack();
  const { info } = stack;
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const namespace = `${prefix}-${Date.now().toString(36)}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });

  if (!info.midonet.adminUrl) throw new Error('the end-to-end tests need the MidoNet emulator (its admin endpoint)');
  const admin = new EmulatorAdmin(info.midonet.adminUrl);
  const midonet = createMidonetClient({ baseUrl: info.midonet.url, ...MIDONET_USER });
  await seedEmulator(admin, midonet);

  const connection = await Connection.connect({ address: info.temporal.address });
  const client = new Client({ connection, namespace: info.temporal.namespace });
  const starter = startTestStarter({
    kubeConfig,
    temporalClient: client,
    namespace,
    kinds: ['Translation'],
    identity: `e2e-${namespace}`,
    debounceMs: 100,
    logger: log,
  });

  let running: RunningWorker | undefined;
  const harness: Harness = {
    info,
    namespace,
    kubeConfig,
    core,
    custom,
    client,
    admin,
    midonet,
    starter,
    async startWorker(settings = {}) {
      running = await runWorker(
        loadWorkerConfig({ ...workerSettingsOn(info), ...settings }, { MIDONET_PASSWORD: MIDONET_USER.password }),
        { log },
      );
      return running;
    },
    async stopWorker() {
      await running?.shutdown();
      running = undefined;
    },
    async stop() {
      await starter.stop();
      await terminateRunning(
        client,
        'end-to-end test file done',
        `K8sNamespace="${namespace}" AND ExecutionStatus="Running"`,
      );
      await harness.stopWorker();
      await connection.close();
      await stack.stop();
    },
  };
  if (worker)
    await harness.startWorker().catch(async (error: unknown) => {
      await harness.stop();
      throw error;
    });
  return harness;
}

/**
 * Starts one harness for this test file and stops it after the file, `beforeStop` first (e.g. to lift a fault the
 * shutdown would wait on). The harness is returned before it starts (hooks run later) and filled in by beforeAll,
 * so read its fields inside hooks and tests only.
 */
export function harnessForFile(options: HarnessOptions, beforeStop?: (h: Harness) => Promise<unknown>): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    Object.assign(h, await startHarness(options));
  });
  afterAll(async () => {
    // Not started: startHarness has stopped whatever it had started.
    if (!h.stop) return;
    await beforeStop?.(h);
    await h.stop();
  });
  return h;
}

/** As a deployer would: an empty MidoNet with the agents' hosts registered and the cluster router created. */
export async function seedEmulator(admin: EmulatorAdmin, midonet: MidonetClient): Promise<void> {
  await admin.reset();
  for (const host of sampleCluster().hosts) await admin.seedHost(host);
  await midonet.ensure(routerResource());
}

export function routerResource(): BackendResource {
  return sampleClusterTranslations().find((t) => t.name === ROUTER_TRANSLATION)!.resources[0]!;
}

/**
 * The sample cluster's Translations in `namespace`, grouped in the order a cluster converges in (globals, Nodes, Pods,
 * the Service, its Endpoints: each group's parents exist once the previous group is synced). Without their
 * ownerReferences: the sample owners do not exist here and the garbage collector would delete the Translations.
 */
export function sampleGroups(namespace: string): { group: string; translations: Translation[] }[] {
  const order = ['Global', 'Node', 'Pod', 'Service', 'Endpoints'];
  const all = sampleClusterTranslations()
    .filter((t) => t.name !== ROUTER_TRANSLATION)
    .map((t) => ({ ...t, namespace, ownerReferences: [], group: t.ownerReferences[0]?.kind ?? 'Global' }));
  return order.map((group) => ({
    group,
    translations: all.filter((t) => t.group === group).map(({ group: _, ...t }) => t),
  }));
}

/** A small Translation of Bridges with the given IDs. */
export function bridgeTranslation(namespace: string, name: string, bridgeIds: string[]): Translation {
  return {
    name,
    namespace,
    labels: {},
    ownerReferences: [],
    finalizers: [TRANSLATION_FINALIZER],
    resources: bridgeIds.map((id, i) => ({
      kind: 'Bridge',
      parent: '',
      body: JSON.stringify({ id, name: `${name}-${i}`, tenantId: 'midonetkube' }),
    })),
  };
}

/** The `n`th ID of a test file's own series (`prefix`: four hex digits), so that no two files share an ID. */
export const seriesId = (prefix: string, n: number) => `${prefix}0000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
export const bridgeId = (n: number) => seriesId('e2e0', n);

/** Chains named `<name>-<n>` and accepting Rules in them, with IDs of the file's own series. */
export function chainsAndRules(series: { chain: string; rule: string }, name: string) {
  const chainId = (n: number) => seriesId(series.chain, n);
  const ruleId = (n: number) => seriesId(series.rule, n);
  const chain = (n: number): BackendResource => ({
    kind: 'Chain',
    parent: '',
    body: JSON.stringify({ id: chainId(n), name: `${name}-${n}`, tenantId: 'midonetkube' }),
  });
  const rule = (chainN: number, n: number): BackendResource => ({
    kind: 'Rule',
    parent: chainId(chainN),
    body: JSON.stringify({ id: ruleId(n), type: 'accept' }),
  });
  return { chainId, ruleId, chain, rule };
}

/** Creates `t`; `owners` replace its ownerReferences (any kind, e.g. a ConfigMap). */
export async function createTranslation(
  h: Pick<Harness, 'custom'>,
  t: Translation,
  owners: k8s.V1OwnerReference[] = t.ownerReferences,
): Promise<void> {
  await h.custom.createNamespacedCustomObject({
    ...TRANSLATIONS,
    namespace: t.namespace,
    body: {
      apiVersion: `${TRANSLATIONS.group}/${TRANSLATIONS.version}`,
      kind: 'Translation',
      metadata: {
        name: t.name,
        namespace: t.namespace,
        labels: t.labels,
        finalizers: t.finalizers,
        ownerReferences: owners,
      },
      resources: t.resources,
    },
  });
}

export interface TranslationObject {
  metadata: { name: string; uid: string; generation: number; finalizers?: string[]; deletionTimestamp?: string };
  resources: BackendResource[];
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
    childResources?: { kind: string; id: string; state: string }[];
  };
}

/** The Translation, or undefined once it is gone from the API server. */
export async function readTranslation(h: Harness, name: string): Promise<TranslationObject | undefined> {
  try {
    return (await h.custom.getNamespacedCustomObject({
      ...TRANSLATIONS,
      namespace: h.namespace,
      name,
    })) as TranslationObject;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

export async function readyCondition(h: Harness, name: string) {
  return (await readTranslation(h, name))?.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Waits until the Translation is gone from the API server and its workflow has ended. */
export async function expectGone(h: Harness, name: string): Promise<void> {
  await waitFor(`${name} to be gone from the API server`, async () => (await readTranslation(h, name)) === undefined);
  await handleOf(h, name).result();
}

export async function patchResources(
  h: Pick<Harness, 'custom' | 'namespace'>,
  name: string,
  resources: BackendResource[],
): Promise<void> {
  await h.custom.patchNamespacedCustomObject(
    { ...TRANSLATIONS, namespace: h.namespace, name, body: { resources } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

export async function deleteTranslation(h: Pick<Harness, 'custom' | 'namespace'>, name: string): Promise<void> {
  await h.custom.deleteNamespacedCustomObject({ ...TRANSLATIONS, namespace: h.namespace, name });
}

export const translationRef = (h: Harness, name: string): ObjectRef => ({
  kind: 'Translation',
  namespace: h.namespace,
  name,
});
export const handleOf = (h: Harness, name: string): WorkflowHandle<typeof translationLifecycle> =>
  h.client.workflow.getHandle(workflowId(translationRef(h, name)));
export const stateOf = (h: Harness, name: string): Promise<LifecycleStateView> => handleOf(h, name).query(stateQuery);

/** Waits until the workflow's `state` query answers `state`; on timeout, says what it answered last. */
export async function waitForState(
  h: Harness,
  name: string,
  state: string,
  timeoutMs = 60_000,
): Promise<LifecycleStateView> {
  let last: LifecycleStateView | undefined;
  try {
    return await waitFor(
      `translation ${name} in state ${state}`,
      async () => ((last = await stateOf(h, name)).state === state ? last : undefined),
      timeoutMs,
    );
  } catch (error) {
    throw new Error(
      `${(error as Error).message}; last answer: ${JSON.stringify(last && { state: last.state, lastError: last.lastError })}`,
    );
  }
}

/**
 * Starts a Translation's workflow before the starter sees the object, as its signal-with-start would, but with
 * `timings`: the only way to shorten (or lengthen) the machine's timers is the workflow's input.
 */
export async function startWithTimings(h: Harness, name: string, timings: Partial<TranslationTimings>): Promise<void> {
  const ref = translationRef(h, name);
  await h.client.workflow.start('translationLifecycle', {
    workflowId: workflowId(ref),
    taskQueue: TASK_QUEUE,
    args: [{ ref, timings }],
    typedSearchAttributes: [
      { key: K8sKind, value: ref.kind },
      { key: K8sNamespace, value: h.namespace },
      { key: K8sName, value: name },
    ],
  });
}

/** MidoNet refuses to delete `path` (403 `message`, as a policy would) until the returned fault is removed. */
export const refuseDeletion = (h: Pick<Harness, 'admin'>, path: string, message: string) =>
  h.admin.injectFault({ method: 'DELETE', path, action: 'error', status: 403, message });

/** `cleanup --mode force` through the workflow's update, as the on-call operator would run it. */
export const forceCleanup = (h: Harness, name: string, reason: string) =>
  executeUpdateWhenReady(handleOf(h, name), cleanupUpdate, { mode: 'force', reason, requestedBy: 'oncall' });

/** Workflow ids that visibility lists for `query` (eventually consistent: poll). */
export async function listWorkflowIds(h: Harness, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of h.client.workflow.list({ query })) ids.push(wf.workflowId);
  return ids.sort();
}

export async function eventsOf(h: Harness, name: string): Promise<k8s.CoreV1Event[]> {
  const list = await h.core.listNamespacedEvent({
    namespace: h.namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items;
}

/** IDs per kind in the emulator, sorted; Routes MidoNet adds itself (`Local`) are left out. */
export async function emulatorIds(h: Harness): Promise<Record<string, string[]>> {
  const dump: StateDump = await h.admin.dump();
  const out: Record<string, string[]> = {};
  for (const [kind, entries] of Object.entries(dump)) {
    const kept = kind === 'Route' ? entries.filter((e) => e.type !== 'Local') : entries;
    out[kind] = kept.map((e) => (typeof e.id === 'string' ? e.id : JSON.stringify(e))).sort();
  }
  return out;
}

/** The IDs `translations` give each kind that has IDs of its own (what the admin dump is checked against). */
export function expectedIds(translations: Translation[], extra: BackendResource[] = []): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const r of [...translations.flatMap((t) => t.resources), ...extra]) {
    const id = (JSON.parse(r.body) as { id?: string }).id;
    if (id) (out[r.kind] ??= []).push(id);
  }
  for (const ids of Object.values(out)) ids.sort();
  return out;
}

/** Number of entries per kind in the emulator (for kinds without IDs: links, bindings, table entries). */
export async function emulatorCounts(h: Harness): Promise<Record<string, number>> {
  const dump = await h.admin.dump();
  return Object.fromEntries(
    Object.entries(dump).map(([kind, entries]) => [
      kind,
      kind === 'Route' ? entries.filter((e) => e.type !== 'Local').length : entries.length,
    ]),
  );
}

/** The operator commands (`steward <args…>`) run in this process by the commander program; resolves their output. */
export async function runOperatorCommand(args: string[]): Promise<string> {
  let out = '';
  const program = new Command('steward')
    .exitOverride()
    .configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  registerOperatorCommands(program);
  registerStatusCommand(program);
  await program.parseAsync(args, { from: 'user' });
  return out;
}

/** `steward <args…>` in this process, against the stack's Temporal; resolves its output. */
export const steward = (h: Harness, ...args: string[]): Promise<string> =>
  runOperatorCommand([...args, '--address', h.info.temporal.address]);

/** `node bin/steward.cjs <args…>` as a process with TEMPORAL_ADDRESS set: exit code, stdout and stderr. */
export async function stewardProcess(
  h: Pick<Harness, 'info'>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const run = promisify(execFile);
  try {
    const { stdout, stderr } = await run(process.execPath, [join(repoRoot, 'bin', 'steward.cjs'), ...args], {
      env: { ...process.env, ...temporalEnv(h.info.temporal) },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `steward worker` as a child process (so a test can SIGKILL it). Resolves once it polls. */
export async function spawnWorker(
  h: Pick<Harness, 'info' | 'client'>,
  env: NodeJS.ProcessEnv = workerEnv(h.info),
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'steward.cjs'), 'worker'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`steward worker exited (${code}): ${stderr}`))),
  );
  // Polling shows as a worker on the task queue's pollers.
  const polling = waitFor('the worker process to poll', async () => {
    const { pollers } = await h.client.workflowService.describeTaskQueue({
      namespace: h.info.temporal.namespace,
      taskQueue: { name: TASK_QUEUE },
      taskQueueType: 1,
    });
    return (pollers ?? []).some((p) => p.identity?.startsWith(`${child.pid}@`)) || undefined;
  });
  try {
    await Promise.race([polling, exited]);
  } catch (error) {
    // One that never polled in time must not live on as an extra worker (a chaos run retries the start: seed 92 left
    // 23 such processes, each ~500 MB, polling its stack and then a dead one).
    child.kill('SIGKILL');
    throw error;
  }
  return child;
}

export const recordTranslationHistory = (h: Harness, name: string, translation: string) =>
  recordHistory(h.client, handleOf(h, translation).workflowId, name);

/** Number of events in the history of the workflow's latest run. */
export async function historyLength(h: Harness, translation: string): Promise<number> {
  return (await handleOf(h, translation).fetchHistory()).events?.length ?? 0;
}
