// `steward list` as a process against the shared stack's Temporal: stand-in lifecycle workflows carrying the search
// attributes the starter and the workflows keep, in a Kubernetes namespace of this file's own, so that whatever else
// runs on the stack does not show here.
import { execFile } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { ensureKubectl } from '../deploy/testing/kubectl';
import type { LifecycleStateView } from '../model/messages';
import { workflowId, type ObjectRef } from '../model/naming';
import { K8sKind, K8sName, K8sNamespace, K8sUID, LifecycleState } from '../model/search-attributes';
import { runProbeWorker, waitFor } from '../test/support';
import { finish, stateStandIn } from '../test/support/probe-workflows';
import type { RunningWorker } from '../worker';
import type { ListedObject } from './list';

const { address, namespace: temporalNamespace } = stackInfo().temporal;
const ns = `list-${Date.now()}`;
const ui = 'http://ui.example:8233';
const bin = join(__dirname, '..', 'bin', 'steward.cjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `steward <args…> --address <stack>` as a process, piped (plain output); never rejects. */
async function steward(...args: string[]): Promise<Run> {
  const env = { ...process.env, STEWARD_TEMPORAL_UI_URL: ui, NO_COLOR: '1' };
  return promisify(execFile)(process.execPath, [bin, ...args, '--address', address], { env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: Run) => error,
  );
}

const objects: { ref: ObjectRef; state: string; lastError?: LifecycleStateView['lastError'] }[] = [
  {
    ref: { kind: 'Pod', namespace: ns, name: 'web' },
    state: 'stuck',
    lastError: { reason: 'MidonetUnavailable', message: 'MidoNet API did not answer', at: '2025-01-01T00:00:01Z' },
  },
  { ref: { kind: 'Pod', namespace: ns, name: 'db' }, state: 'ready' },
  { ref: { kind: 'Service', namespace: ns, name: 'web' }, state: 'ready' },
  { ref: { kind: 'Node', name: `${ns}-node` }, state: 'ready' },
];

const attributes = ({ ref, state }: (typeof objects)[number]): SearchAttributePair[] => [
  { key: K8sKind, value: ref.kind },
  ...(ref.namespace ? [{ key: K8sNamespace, value: ref.namespace }] : []),
  { key: K8sName, value: ref.name },
  { key: K8sUID, value: `uid-${ref.name}` },
  { key: LifecycleState, value: state },
];

describe('steward list against stand-in lifecycle workflows', () => {
  let running: RunningWorker;
  const handles: WorkflowHandle[] = [];
  const taskQueue = `list-test-${Date.now()}`;

  beforeAll(async () => {
    running = await runProbeWorker(taskQueue);
    for (const object of objects) {
      const view: LifecycleStateView = { ref: object.ref, state: object.state, resources: [], actions: [] };
      if (object.lastError) view.lastError = object.lastError;
      handles.push(
        await running.client.workflow.start(stateStandIn, {
          taskQueue,
          workflowId: workflowId(object.ref),
          args: [view],
          typedSearchAttributes: attributes(object),
        }),
      );
    }
    // Visibility lags the start a little: wait until every namespaced one is listed.
    await waitFor(
      'the stand-ins in visibility',
      async () => (await steward('list', '-n', ns, '-o', 'name')).stdout.split('\n').length > 3,
      30_000,
      500,
    );
  });

  afterAll(async () => {
    for (const handle of handles) await handle.signal(finish);
    await running?.shutdown();
  });

  it("lists the namespace's objects (not the Node) with kind, namespace, name, state and age, in aligned columns when piped", async () => {
    const { code, stdout } = await steward('list', '-n', ns);
    expect(code).toBe(0);
    const [header, ...rows] = stdout.trimEnd().split('\n');
    expect(header?.split(/ {3,}/)).toEqual(['KIND', 'NAMESPACE', 'NAME', 'STATE', 'AGE']);
    expect(rows.map((row) => row.split(/ {3,}/).slice(0, 4))).toEqual([
      ['Pod', ns, 'db', 'ready'],
      ['Pod', ns, 'web', 'stuck'],
      ['Service', ns, 'web', 'ready'],
    ]);
    expect(rows[0]).toMatch(/ {3}\d+s$/);
    expect(rows.map((row) => row.indexOf(ns))).toEqual(rows.map(() => header?.indexOf('NAMESPACE')));
    const [first] = (await steward('list', '-n', ns, '--no-headers')).stdout.split('\n');
    expect(first?.split(/ {3,}/).slice(0, 4)).toEqual(['Pod', ns, 'db', 'ready']);
  });

  it(
    'runs as a kubectl plugin: `kubectl steward list` once npm install -g put kubectl-steward on the PATH',
    async () => {
      const kubectl = await ensureKubectl();
      // What `npm install -g` makes of package.json's bin: a kubectl-steward link to bin/steward.cjs on the PATH.
      const globalBin = mkdtempSync(join(tmpdir(), 'steward-global-bin-'));
      symlinkSync(bin, join(globalBin, 'kubectl-steward'));
      const env = { ...process.env, NO_COLOR: '1', PATH: [globalBin, dirname(process.execPath)].join(':') };
      const { stdout } = await promisify(execFile)(
        kubectl,
        ['steward', 'list', '-n', ns, '-o', 'name', '--address', address],
        {
          env,
        },
      );
      expect(stdout).toBe(`pod/${ns}/db\npod/${ns}/web\nservice/${ns}/web\n`);
    },
    15 * 60_000,
  );

  it('filters by --state and --kind; a Node is listed when asked for by kind', async () => {
    expect((await steward('get', '-n', ns, '--state', 'stuck', '-o', 'name')).stdout).toBe(`pod/${ns}/web\n`);
    expect((await steward('get', 'pods', '-n', ns, '-o', 'name')).stdout).toBe(`pod/${ns}/db\npod/${ns}/web\n`);
    expect((await steward('list', '--kind', 'node', '-n', ns, '-o', 'name')).stdout).toContain(`node/${ns}-node\n`);
  });

  it('-o json gives the items with their workflow ids', async () => {
    const { items } = JSON.parse((await steward('list', '-n', ns, '-o', 'json')).stdout) as { items: ListedObject[] };
    expect(items.map((o) => o.workflowId)).toEqual([`pod/${ns}/db`, `pod/${ns}/web`, `service/${ns}/web`]);
    expect(items[1]).toMatchObject({ kind: 'Pod', namespace: ns, name: 'web', uid: 'uid-web', state: 'stuck' });
  });

  it('get pod/web -n <ns> and get pod/<ns>/web name the same object; -o wide adds the reason and the UI link', async () => {
    const link = `${ui}/namespaces/${temporalNamespace}/workflows/${encodeURIComponent(`pod/${ns}/web`)}`;
    for (const args of [['pod/web', '-n', ns], [`pod/${ns}/web`]]) {
      const { code, stdout } = await steward('get', ...args, '-o', 'wide');
      expect(code).toBe(0);
      const [header, row] = stdout.trimEnd().split('\n');
      expect(header?.split(/ {3,}/)).toEqual(['KIND', 'NAMESPACE', 'NAME', 'STATE', 'AGE', 'REASON', 'TEMPORAL UI']);
      expect(row?.split(/ {3,}/)).toEqual([
        'Pod',
        ns,
        'web',
        'stuck',
        expect.stringMatching(/s$/),
        'MidonetUnavailable',
        link,
      ]);
    }
    expect((await steward('status', 'pod/web', '-n', ns)).stdout).toContain(`  temporal ui: ${link}\n`);
  });

  it('an empty list exits 0 with "No resources found" on stderr; a named object with no workflow exits 1', async () => {
    const empty = await steward('list', '-n', `${ns}-empty`);
    expect(empty).toMatchObject({ code: 0, stdout: '', stderr: `No resources found in ${ns}-empty namespace.\n` });
    expect((await steward('list', '-n', `${ns}-empty`, '-o', 'json')).stdout).toBe('{\n  "items": []\n}\n');
    const missing = await steward('get', 'pod/missing', '-n', ns);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`error: list: no running workflow pod/${ns}/missing\n`);
  });
});
