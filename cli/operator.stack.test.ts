import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
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
import { requestAnnotations } from '../model/operator-request';
import { OPERATOR_RESULT_ANNOTATION } from '../model/vocabulary';
import { createServiceAccountKubeconfig, serverSideApply } from '../deploy/local/identities';
import { RBAC_FILES } from '../deploy/local/steward-processes';
import { createStarter, type Starter } from '../starter/controller/starter';

const { address } = stackInfo().temporal;
const namespace = `cli-${Date.now()}`;
const target = `${namespace}/web`;
const id = workflowId(parseObjectRef('pod', target));

/** The administrator's path, straight to the workflow (these cases are about the workflow's answers). */
const asAdmin = ['--via', 'temporal'];

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
      await steward(
        'cleanup',
        'pod',
        target,
        '--mode',
        'retry',
        '--reason',
        'MidoNet is back',
        ...asAdmin,
        '--by',
        'alice',
      ),
    ).toBe(`cleanup ${id}: accepted in state stuck: cleanup (retry) started\n`);
    const view = JSON.parse(await steward('status', 'Pod', target, '--json')) as LifecycleStateView;
    expect(view.state).toBe('pushing');
    expect(view.actions).toEqual([
      expect.objectContaining({ action: 'cleanup', mode: 'retry', requestedBy: 'alice', reason: 'MidoNet is back' }),
    ]);
    expect(await steward('status', 'pod', target)).toMatch(/cleanup +retry +alice +MidoNet is back/);
  });

  it('a cleanup the state does not allow is rejected with the validator reason', async () => {
    await expect(steward('cleanup', 'pod', target, '--reason', 'again', ...asAdmin)).rejects.toThrow(
      `${id} rejected: cleanup is for a stuck Pod; ${id} is pushing`,
    );
  });

  it('pause, refresh and resume each go through, and resume is rejected when not paused', async () => {
    expect(await steward('pause', 'pod', target, '--reason', 'maintenance', ...asAdmin)).toMatch(
      /accepted in state pushing: paused/,
    );
    expect(await steward('refresh', 'pod', target, '--reason', 'check drift', ...asAdmin)).toMatch(
      /accepted in state paused/,
    );
    expect(await steward('resume', 'pod', target, '--reason', 'done', ...asAdmin)).toMatch(
      /accepted in state paused: resumed/,
    );
    await expect(steward('resume', 'pod', target, '--reason', 'twice', ...asAdmin)).rejects.toThrow(
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

    expect(await steward('cleanup', 'pod', failingTarget, '--reason', 'worker crashed', ...asAdmin)).toBe(
      `cleanup ${workflowId(ref)}: accepted in state stuck: cleanup (retry) started\n`,
    );
    expect((await failing.query(stateQuery)).actions).toEqual([
      expect.objectContaining({ action: 'cleanup', reason: 'worker crashed' }),
    ]);
  });

  describe("through Kubernetes: the object's RBAC decides, and the actor is who the API server authenticated", () => {
    const guarded = parseObjectRef('pod', `${namespace}/guarded`);
    const guardedId = workflowId(guarded);
    const admin = new k8s.KubeConfig();
    const dir = mkdtempSync(join(tmpdir(), 'steward-cli-'));
    const kubeconfigOf = (name: string) => join(dir, `${name}.kubeconfig`);
    let starter: Starter;
    let standIn: WorkflowHandle<typeof operatorStandIn>;
    const podAnnotations = async () =>
      (await admin.makeApiClient(k8s.CoreV1Api).readNamespacedPod({ namespace, name: 'guarded' })).metadata
        ?.annotations ?? {};
    const asUser = (name: string) => ['pod/guarded', '-n', namespace, '--kubeconfig', kubeconfigOf(name)];

    beforeAll(async () => {
      const { kubernetes } = stackInfo();
      admin.loadFromFile(kubernetes.kubeconfig);
      // Users who may read the Pod, and one of them patch it too: the verb an operator's request needs.
      const user = (name: string, verbs: string[]) =>
        createServiceAccountKubeconfig(
          kubernetes.kubeconfig,
          { namespace, name, rules: [{ apiGroups: [''], resources: ['pods'], verbs }] },
          kubeconfigOf(name),
        );
      await user('viewer', ['get', 'list', 'watch']);
      await user('operator', ['get', 'list', 'watch', 'patch']);
      await admin.makeApiClient(k8s.CoreV1Api).createNamespacedPod({
        namespace,
        body: { metadata: { name: 'guarded' }, spec: { containers: [{ name: 'c', image: 'none' }] } },
      });
      await installRequestsPolicy(admin, namespace);
      standIn = await running.client.workflow.start(operatorStandIn, {
        taskQueue,
        workflowId: guardedId,
        args: [guarded],
      });
      standIns.push(standIn);
      starter = createStarter({
        kubeConfig: admin,
        temporalClient: running.client,
        taskQueue,
        namespace,
        kinds: ['Pod'],
        identity: 'cli-test',
        debounceMs: 100,
        lease: { namespace: 'kube-system', name: `steward-${namespace}`, leaseDurationSeconds: 3, renewSeconds: 1 },
        logger: pino({ level: 'silent' }),
      });
      starter.start();
    });

    afterAll(async () => {
      await starter?.stop();
      await admin
        .makeApiClient(k8s.CoreV1Api)
        .deleteNamespace({ name: namespace })
        .catch(() => undefined);
    });

    it('a user who may not patch the Pod is refused by Kubernetes, and the workflow is not paused', async () => {
      await expect(steward('pause', ...asUser('viewer'), '--reason', 'not mine')).rejects.toThrow(
        new RegExp(
          `Kubernetes refused system:serviceaccount:${namespace}:viewer the request on Pod ${namespace}/guarded: .*cannot patch resource "pods"`,
        ),
      );
      expect(await podAnnotations()).toEqual({});
      const view = await standIn.query(stateQuery);
      expect(view.state).toBe('stuck');
      expect(view.actions).toEqual([]);
    });

    it('a user who may patch it is accepted, and the workflow records the authenticated user, not a name typed', async () => {
      await expect(
        steward('pause', ...asUser('operator'), '--reason', 'maintenance', '--by', 'cluster-admin@prod'),
      ).rejects.toThrow('--by is for --via temporal');
      const operator = `system:serviceaccount:${namespace}:operator`;
      expect(await steward('pause', ...asUser('operator'), '--reason', 'maintenance')).toBe(
        `pause ${guardedId}: accepted in state stuck: paused (asked by ${operator})\n`,
      );
      expect((await standIn.query(stateQuery)).actions).toEqual([
        expect.objectContaining({ action: 'pause', requestedBy: operator, reason: 'maintenance' }),
      ]);
      // The request is replaced by its result on the Pod.
      expect(Object.keys(await podAnnotations())).toEqual([OPERATOR_RESULT_ANNOTATION]);
      await expect(steward('resume', ...asUser('operator'), '--reason', 'done')).resolves.toContain('resumed');
      await expect(steward('resume', ...asUser('operator'), '--reason', 'twice')).rejects.toThrow(
        `${guardedId} rejected: resume is for a paused workflow; this one is stuck`,
      );
    });

    it('the admission policy refuses a request that names another user than the one writing it', async () => {
      const operator = new k8s.KubeConfig();
      operator.loadFromFile(kubeconfigOf('operator'));
      const forged = requestAnnotations({ id: 'forged-1', action: 'pause', reason: 'r' }, 'cluster-admin@prod');
      const written = await operator
        .makeApiClient(k8s.CoreV1Api)
        .patchNamespacedPod(
          { namespace, name: 'guarded', body: { metadata: { annotations: forged } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        )
        .catch((error: { code?: number; body?: string }) => error);
      expect(written).toMatchObject({ code: 403 });
      expect((written as { body: string }).body).toContain(
        `steward.dev/requested-by: system:serviceaccount:${namespace}:operator, not \\"cluster-admin@prod\\"`,
      );
      expect((await standIn.query(stateQuery)).actions.map((a) => a.requestedBy)).not.toContain('cluster-admin@prod');
    });
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
      ...asAdmin,
      '--address',
      address,
    ]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(rejected?.code).toBe(1);
    expect(rejected?.stderr).toContain(`${id} rejected: cleanup is for a stuck Pod`);
  });
});

/**
 * Steward's admission policy for operators' requests, as its installation applies it (RBAC_FILES), and the wait until
 * the API server enforces it (a forged request refused in a dry run of the Pod's patch).
 */
async function installRequestsPolicy(admin: k8s.KubeConfig, namespace: string) {
  const file = RBAC_FILES.find((f) => f.endsWith('steward-operator-requests.yaml'))!;
  const apply = serverSideApply(admin);
  for (const object of k8s.loadAllYaml(readFileSync(file, 'utf8')) as k8s.KubernetesObject[]) await apply(object);
  const forged = requestAnnotations({ id: 'probe', action: 'pause', reason: 'r' }, 'nobody');
  const core = admin.makeApiClient(k8s.CoreV1Api);
  for (let tries = 0; ; tries++) {
    const refused = await core
      .patchNamespacedPod(
        { namespace, name: 'guarded', dryRun: 'All', body: { metadata: { annotations: forged } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      )
      .then(
        () => false,
        (error: { code?: number }) => error.code === 403,
      );
    if (refused) return;
    if (tries >= 60) throw new Error('the admission policy steward-operator-requests is not enforced after 30 s');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
