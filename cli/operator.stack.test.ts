import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { type RunningWorker } from '../worker';
import { runProbeWorker } from '../test/support';
import { finish, operatorStandIn } from '../test/support/probe-workflows';
import { runOperatorCommand } from '../test/support/pusher-harness';
import { parseObjectRef, workflowId } from '../model/naming';
import { isWorkflowNotReady } from '../platform/temporal-update';
import { cleanupUpdate, stateQuery, type LifecycleStateView } from '../model/messages';

const { address } = stackInfo().temporal;
const namespace = `cli-${Date.now()}`;
const target = `${namespace}/web`;
const id = workflowId(parseObjectRef('pod', target));

/** Runs `steward <args…>` in this process, against the stack's Temporal; resolves what it printed. */
const steward = (...args: string[]): Promise<string> => runOperatorCommand([...args, '--address', address]);

describe('operator commands against a stand-in lifecycle workflow', () => {
  let running: RunningWorker;
  let handle: WorkflowHandle<typeof operatorStandIn>;
  const standIns: WorkflowHandle[] = [];
  const taskQueue = `cli-test-${Date.now()}`;

  beforeAll(async () => {
    running = await runProbeWorker(taskQueue);
    handle = await running.client.workflow.start(operatorStandIn, {
      taskQueue,
      workflowId: id,
      args: [parseObjectRef('pod', target)],
    });
  });

  afterAll(async () => {
    await handle?.signal(finish);
    for (const standIn of standIns) await standIn.signal(finish);
    await running?.shutdown();
  });

  it('status prints the state, the resources, the last error and no actions yet', async () => {
    const out = await steward('status', 'pod', target);
    expect(out).toContain(`${id}  (uid uid-1)`);
    expect(out).toMatch(/state: +stuck/);
    expect(out).toContain('last error:  MidonetUnavailable: MidoNet API did not answer (2025-01-01T00:00:01Z)');
    expect(out).toMatch(/Port +3f2c0000-0000-5000-8000-000000000001 +synced +2025-01-01T00:00:00Z/);
    expect(out).toMatch(/HostInterfacePort +3f2c0000-0000-5000-8000-000000000002 +failed/);
    expect(out).toContain('recent operator actions: none');
  });

  it('cleanup --mode retry is accepted, prints the result, and status then shows who asked and why', async () => {
    expect(
      await steward('cleanup', 'pod', target, '--mode', 'retry', '--reason', 'MidoNet is back', '--by', 'alice'),
    ).toBe(`cleanup ${id}: accepted in state stuck: cleanup (retry) started\n`);
    const view = JSON.parse(await steward('status', 'Pod', target, '--json')) as LifecycleStateView;
    expect(view.state).toBe('pushing');
    expect(view.actions).toEqual([
      expect.objectContaining({ action: 'cleanup', mode: 'retry', requestedBy: 'alice', reason: 'MidoNet is back' }),
    ]);
    expect(await steward('status', 'pod', target)).toMatch(/cleanup +retry +alice +MidoNet is back/);
  });

  it('a cleanup the state does not allow is rejected with the validator reason', async () => {
    await expect(steward('cleanup', 'pod', target, '--reason', 'again')).rejects.toThrow(
      `cleanup ${id} rejected: cleanup is for a stuck Pod; ${id} is pushing`,
    );
  });

  it('pause, refresh and resume each go through, and resume is rejected when not paused', async () => {
    expect(await steward('pause', 'pod', target, '--reason', 'maintenance')).toMatch(
      /accepted in state pushing: paused/,
    );
    expect(await steward('refresh', 'pod', target, '--reason', 'check drift')).toMatch(/accepted in state paused/);
    expect(await steward('resume', 'pod', target, '--reason', 'done')).toMatch(/accepted in state paused: resumed/);
    await expect(steward('resume', 'pod', target, '--reason', 'twice')).rejects.toThrow(
      'resume is for a paused workflow; this one is pushing',
    );
    const view = await handle.query(stateQuery);
    expect(view.actions.map((a) => a.action)).toEqual(['cleanup', 'pause', 'refresh', 'resume']);
  });

  it('names the workflow when there is none; for a Translation, says that its owner may push it', async () => {
    await expect(steward('status', 'pod', `${namespace}/missing`)).rejects.toThrow(
      `no workflow pod/${namespace}/missing in namespace default at ${address}`,
    );
    await expect(steward('status', 'translation', `${namespace}/pod.4.db`)).rejects.toThrow(
      "a Translation a Node, Pod, Service or Endpoints owns has no workflow of its own: ask its owner's",
    );
  });

  it('a cleanup the server refuses while the workflow task fails is sent again until the task succeeds', async () => {
    const failingTarget = `${namespace}/failing`;
    const ref = parseObjectRef('pod', failingTarget);
    const failing = await running.client.workflow.start(operatorStandIn, {
      taskQueue,
      workflowId: workflowId(ref),
      args: [ref, { refuseCleanupTasksUntil: Date.now() + 5_000 }],
    });
    standIns.push(failing);
    // What the server answers the client in that window: refused, not ready.
    const refused = await failing
      .executeUpdate(cleanupUpdate, { args: [{ mode: 'retry', reason: 'raw', requestedBy: 'test' }] })
      .catch((error: unknown) => error);
    expect(isWorkflowNotReady(refused)).toBe(true);

    expect(await steward('cleanup', 'pod', failingTarget, '--reason', 'worker crashed')).toBe(
      `cleanup ${workflowId(ref)}: accepted in state stuck: cleanup (retry) started\n`,
    );
    expect((await failing.query(stateQuery)).actions).toEqual([
      expect.objectContaining({ action: 'cleanup', reason: 'worker crashed' }),
    ]);
  });

  it('works as a process: status exits 0 with the table, a rejected cleanup exits 1 with the reason', async () => {
    const bin = join(__dirname, '..', 'bin', 'steward.cjs');
    const run = promisify(execFile);
    const status = await run(process.execPath, [bin, 'status', 'pod', target, '--address', address]);
    expect(status.stdout).toMatch(/state: +pushing/);
    const rejected = await run(process.execPath, [
      bin,
      'cleanup',
      'pod',
      target,
      '--reason',
      'once more',
      '--address',
      address,
    ]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(rejected?.code).toBe(1);
    expect(rejected?.stderr).toContain(`cleanup ${id} rejected: cleanup is for a stuck Pod`);
  });
});
