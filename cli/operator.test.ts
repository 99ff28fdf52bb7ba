import { Command } from 'commander';
import type { LifecycleStateView } from '../model/messages';
import { formatStatus, registerOperatorCommands, registerStatusCommand } from './operator';
import { registerWorkerCommand } from './worker';
import { startWorker } from '../worker';
import { connectClient } from '../platform/temporal-connection';

jest.mock('../platform/temporal-connection', () => ({
  connectClient: jest.fn(() => Promise.reject(new Error('no server in unit tests'))),
}));
jest.mock('../worker', () => ({ ...jest.requireActual<object>('../worker'), startWorker: jest.fn() }));

function steward(...args: string[]): Promise<unknown> {
  const program = new Command('steward').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  registerOperatorCommands(program);
  registerStatusCommand(program);
  registerWorkerCommand(program);
  return program.parseAsync(args, { from: 'user' });
}

describe('operator command arguments, checked before any call to Temporal', () => {
  afterEach(() => {
    expect(connectClient).not.toHaveBeenCalled();
    expect(startWorker).not.toHaveBeenCalled();
  });

  it.each<[string, string[], string | RegExp]>([
    [
      'an unknown kind lists the kinds',
      ['cleanup', 'pods', 'default/web', '--reason', 'r'],
      'unknown kind "pods": expected one of Node, Pod, Service, Endpoints, Translation, PeerPod',
    ],
    ['an unknown kind is rejected by status too', ['status', 'deployment', 'default/web'], 'unknown kind "deployment"'],
    [
      'a Pod needs <namespace>/<name>',
      ['pause', 'pod', 'web', '--reason', 'r'],
      'a Pod is named <namespace>/<name> (got "web")',
    ],
    [
      'a Node has no namespace',
      ['refresh', 'node', 'default/node-1', '--reason', 'r'],
      'a Node is named without a namespace',
    ],
    [
      'an unknown cleanup mode lists the modes',
      ['cleanup', 'pod', 'default/web', '--mode', 'nuke', '--reason', 'r'],
      'pod/default/web: --mode: mode must be one of retry, orphan, force',
    ],
    [
      'a cleanup without a reason is refused',
      ['cleanup', 'pod', 'default/web', '--mode', 'orphan'],
      'pod/default/web: --reason: a reason is required',
    ],
    [
      'a blank reason counts as none',
      ['pause', 'service', 'default/web', '--reason', '   '],
      'service/default/web: --reason: a reason is required',
    ],
    [
      'both problems are reported at once',
      ['cleanup', 'pod', 'default/web', '--mode', 'x'],
      /--reason: a reason is required; --mode: mode must be one of/,
    ],
    [
      'an empty requester is refused',
      ['resume', 'pod', 'default/web', '--reason', 'r', '--via', 'temporal', '--by', ''],
      'pod/default/web: --by: requestedBy is required',
    ],
    [
      'a requester is named only on the administrator path: through Kubernetes it is the authenticated user',
      ['pause', 'pod', 'default/web', '--reason', 'r', '--by', 'cluster-admin@prod'],
      '--by is for --via temporal; through Kubernetes, who asks is the user the API server authenticates',
    ],
    ['an unknown path is named', ['refresh', 'pod', 'default/web', '--via', 'ssh'], '--via: kubernetes or temporal'],
    [
      'through Kubernetes, a kubeconfig is needed',
      ['pause', 'pod', 'default/web', '--reason', 'r', '--kubeconfig', '/nonexistent/kubeconfig'],
      /kubeconfig/,
    ],
    [
      'a bad Temporal address is named by its flag and variable',
      ['status', 'pod', 'default/web', '--address', 'nowhere'],
      /--address \/ TEMPORAL_ADDRESS: must be host:port/,
    ],
    [
      'a bad worker setting stops the worker before it starts',
      ['worker', '--http-port', 'eighty'],
      /--http-port \/ STEWARD_HTTP_PORT: must be a whole number, got "eighty"/,
    ],
  ])('%s', async (_sentence, args, expected) => {
    await expect(steward(...args)).rejects.toThrow(expected);
  });

  it('rejects an unknown flag through commander', async () => {
    await expect(steward('status', 'pod', 'default/web', '--mode', 'retry')).rejects.toThrow(/unknown option '--mode'/);
  });
});

describe('the operator commands', () => {
  it('are the actions alone: status (which only tells) and the worker are commands of their own', () => {
    const program = new Command('steward');
    registerOperatorCommands(program);
    expect(program.commands.map((c) => c.name())).toEqual(['cleanup', 'pause', 'resume', 'refresh']);
  });
});

describe('status output', () => {
  const view: LifecycleStateView = {
    ref: { kind: 'Node', name: 'node-1' },
    state: 'synced',
    resources: [],
    actions: [],
  };

  it('says when there are no resources, no error and no actions', () => {
    expect(formatStatus('node/node-1', view)).toBe(
      [
        'node/node-1',
        '  state:       synced',
        '  last error:  none',
        '',
        'resources: none',
        '',
        'recent operator actions: none',
        '',
      ].join('\n'),
    );
  });

  it("leaves the tables' header rows out with --no-headers", () => {
    const resources = [{ kind: 'Router', id: 'r-1', state: 'ready' }] as LifecycleStateView['resources'];
    const out = (headers: boolean) => formatStatus('node/node-1', { ...view, resources }, { headers });
    expect(out(true)).toContain('resources\n  KIND    ID   STATE  SINCE\n  Router  r-1  ready\n');
    expect(out(false)).toContain('resources\n  Router  r-1  ready\n');
  });

  it('shows when an error happened, and a lasting condition (waiting for a dependency) without an empty time', () => {
    const failed = formatStatus('pod/ns/web', {
      ...view,
      lastError: { reason: 'KubernetesUnavailable', message: 'apply: down', at: '2026-11-26T06:00:00Z' },
    });
    expect(failed).toContain('  last error:  KubernetesUnavailable: apply: down (2026-11-26T06:00:00Z)\n');
    const waiting = formatStatus('pod/ns/web', {
      ...view,
      state: 'waitingForDependency',
      lastError: { reason: 'WaitingForDependency', message: 'Node node-1 does not exist (yet)', at: '' },
    });
    expect(waiting).toContain('  last error:  WaitingForDependency: Node node-1 does not exist (yet)\n');
  });

  it('shows only the ten most recent operator actions, oldest first', () => {
    const actions = Array.from({ length: 12 }, (_, i) => ({
      action: 'refresh' as const,
      requestedBy: 'bob',
      reason: `round ${i}`,
      at: `t${i}`,
    }));
    const out = formatStatus('node/node-1', { ...view, actions });
    expect(out).not.toContain('round 1\n');
    expect(out.indexOf('round 2')).toBeLessThan(out.indexOf('round 11'));
    expect(out.match(/refresh/g)).toHaveLength(10);
  });
});

describe("status of an object: its own workflow's view, since that workflow pushes its Translations", () => {
  const stuck = {
    reason: 'MidonetUnavailable',
    message: 'Translation ns/pod.4.web: MidoNet API did not answer',
    at: '2026-11-26T06:00:00Z',
  };
  const pod: LifecycleStateView = {
    ref: { kind: 'Pod', namespace: 'ns', name: 'web' },
    state: 'ready',
    resources: [
      { kind: 'Translation', id: 'ns/pod.4.web', state: 'applied' },
      { kind: 'MidoNet', id: "2 resources, listed in the Translations' status", state: 'synced' },
    ],
    actions: [],
  };

  it('a ready object says ready, with its Translations and what is in MidoNet', () => {
    const out = formatStatus('pod/ns/web', pod);
    expect(out).toContain('  state:       ready\n');
    expect(out).toContain('  last error:  none\n');
    expect(out).toMatch(/Translation +ns\/pod\.4\.web +applied\n/);
    expect(out).toMatch(/MidoNet +2 resources, listed in the Translations' status +synced\n/);
  });

  it('a stuck push shows the object stuck, its last error naming the Translation', () => {
    const out = formatStatus('pod/ns/web', { ...pod, state: 'stuck', lastError: stuck });
    expect(out).toContain('  state:       stuck\n');
    expect(out).toContain(
      '  last error:  MidonetUnavailable: Translation ns/pod.4.web: MidoNet API did not answer (2026-11-26T06:00:00Z)\n',
    );
  });
});
