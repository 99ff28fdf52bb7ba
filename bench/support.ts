// What the benchmarks share: their stack (their own, or a running one's stack.json), the cost of a workflow in history
// events and state transitions, and the tables they print.
import { readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { statusOf } from '../activities/kubernetes/errors';
import { startStack, type StackInfo, type TemporalProfile } from '../deploy/local';
import { compileSteward } from '../deploy/local/compiled';
import { repoRoot } from '../deploy/local/paths';
import { writeWorkflowBundle } from '../worker/bundle';

/**
 * The stack of `stackJson` (a running stack's stack.json) when given, else one of the benchmark's own (free ports,
 * Temporal's `temporal` profile) in $STEWARD_BENCH_STATE_DIR/<name> (default in the temporary directory), started afresh.
 */
export async function benchStack(
  name: string,
  { stackJson, temporal }: { stackJson?: string; temporal?: TemporalProfile } = {},
): Promise<{ info: StackInfo; stop: () => Promise<void> }> {
  if (stackJson)
    return { info: JSON.parse(readFileSync(stackJson, 'utf8')) as StackInfo, stop: () => Promise.resolve() };
  const stateDir = join(process.env.STEWARD_BENCH_STATE_DIR ?? tmpdir(), name);
  rmSync(stateDir, { recursive: true, force: true });
  const stack = await startStack({ ports: 'free', stateDir, ...(temporal ? { temporal } : {}) });
  return { info: stack.info, stop: () => stack.stop() };
}

export interface RunCost {
  runs: number;
  events: number;
  stateTransitions: number;
}

/** Events and state transitions of every run of a workflow id (continue-as-new and incarnations included). */
export async function costOf(client: Client, workflowId: string): Promise<RunCost> {
  const cost: RunCost = { runs: 0, events: 0, stateTransitions: 0 };
  for await (const run of client.workflow.list({ query: `WorkflowId="${workflowId}"` })) {
    const described = await client.workflow.getHandle(workflowId, run.runId).describe();
    cost.runs++;
    cost.events += described.historyLength;
    cost.stateTransitions += Number(described.raw.workflowExecutionInfo?.stateTransitionCount ?? 0);
  }
  return cost;
}

export async function noneRunning(client: Client, query: string): Promise<boolean> {
  for await (const _ of client.workflow.list({ query: `${query} AND ExecutionStatus="Running"` })) return false;
  return true;
}

export function printTable(title: string, header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ');
  console.log(
    `\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${cells.slice(1).map(line).join('\n')}`,
  );
}

export const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** Runs `work` over `items`, `width` at a time. */
export async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/**
 * Deletes every Pod of `namespace` at once. A delete of thousands on a busy API server may outlast its 60 s request
 * timeout (504: it stopped partway, the burst of 5,000 on 2026-12-04), or the connection may close under it with no
 * reply (`fetch failed`, the burst of 5,000 on 2026-12-06); the same delete again takes the rest.
 */
export async function deleteAllPods(core: k8s.CoreV1Api, namespace: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await core.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
      return;
    } catch (error) {
      const status = statusOf(error);
      if ((status !== undefined && status !== 504) || attempt === 5) throw error;
    }
  }
}

/** Runs a benchmark's `main`: a failure is printed and ends the process with a failing exit code. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}

/**
 * Steward as the image holds it, for the workers a bench starts in processes of their own: compiled (through tsx a
 * worker holds every module's rewritten source and its source map besides, some 50 MB), with the workflow code
 * bundled once (no webpack in each worker). Compiled once a state directory for the bench process's life (`npm run
 * bench` runs a burst, then peer pods).
 */
const compiled = new Map<string, Promise<{ appRoot: string; workflowBundle: string }>>();

export function compiledWorkerApp(info: StackInfo): Promise<{ appRoot: string; workflowBundle: string }> {
  let app = compiled.get(info.stateDir);
  if (!app) {
    app = compileWorkerApp(info.stateDir);
    compiled.set(info.stateDir, app);
    // A failed compile is tried again by the next scenario, not handed to it.
    app.catch(() => compiled.delete(info.stateDir));
  }
  return app;
}

async function compileWorkerApp(stateDir: string): Promise<{ appRoot: string; workflowBundle: string }> {
  const workflowBundle = join(stateDir, 'bench', 'workflow-bundle.js');
  await writeWorkflowBundle(workflowBundle);
  const appRoot = join(stateDir, 'bench', 'app');
  rmSync(appRoot, { recursive: true, force: true });
  await compileSteward(appRoot, join(stateDir, 'logs', 'bench-compile.log'));
  symlinkSync(join(repoRoot, 'node_modules'), join(appRoot, 'node_modules'));
  return { appRoot, workflowBundle };
}
