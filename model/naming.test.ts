import {
  clusterFilter,
  clusterOfWorkflowId,
  LIFECYCLE_KINDS,
  lifecycleKindOf,
  objectOfWorkflowId,
  parseTarget,
  temporalUiLink,
  workflowId,
} from './naming';

describe('lifecycleKindOf', () => {
  it.each([
    ['pod', 'Pod'],
    ['Pods', 'Pod'],
    ['po', 'Pod'],
    ['no', 'Node'],
    ['svc', 'Service'],
    ['ep', 'Endpoints'],
    ['endpoints', 'Endpoints'],
    ['peerpods', 'PeerPod'],
    ['translation', 'Translation'],
    ['deployment', undefined],
  ])('takes %s as kubectl would (%s)', (word, kind) => expect(lifecycleKindOf(word)).toBe(kind));
});

describe('parseTarget', () => {
  it.each<[string, string[], string | undefined, object]>([
    ['kind/name with -n', ['pod/nginx'], 'web', { kind: 'Pod', namespace: 'web', name: 'nginx' }],
    ['kind/name without -n: the fallback', ['Pod/nginx'], undefined, { kind: 'Pod', namespace: 'ctx', name: 'nginx' }],
    ['the workflow id form', ['pod/default/nginx'], undefined, { kind: 'Pod', namespace: 'default', name: 'nginx' }],
    ['the older two words', ['Pod', 'default/nginx'], undefined, { kind: 'Pod', namespace: 'default', name: 'nginx' }],
    [
      'a namespace written twice alike',
      ['pod/default/nginx'],
      'default',
      { kind: 'Pod', namespace: 'default', name: 'nginx' },
    ],
    ['a Node, to which -n does not apply', ['node/node-1'], 'web', { kind: 'Node', name: 'node-1' }],
    ['a Node in two words', ['node', 'node-1'], undefined, { kind: 'Node', name: 'node-1' }],
  ])('%s', (_, words, namespace, ref) => expect(parseTarget(words, namespace, () => 'ctx')).toEqual(ref));

  it.each<[string, string[], string | undefined, string]>([
    ['an unknown kind', ['deployment/web'], undefined, 'unknown kind "deployment": expected one of Node, Pod'],
    ['no name', ['pod'], undefined, 'name the object as <kind>/<name>, e.g. pod/nginx -n default (got "pod")'],
    ['a word too many', ['pod', 'a', 'b'], undefined, 'name the object as'],
    ['the older two words without a namespace, as before', ['pod', 'web'], 'x', 'a Pod is named <namespace>/<name>'],
    [
      'namespaces that disagree',
      ['pod/default/nginx'],
      'web',
      '"pod/default/nginx" is in namespace default, but -n says web',
    ],
    ['a Node with a namespace', ['node/a/b'], undefined, 'a Node is named without a namespace'],
    ['too many parts', ['pod/a/b/c'], undefined, 'a Pod is named <namespace>/<name> (got "a/b/c")'],
  ])('refuses %s', (_, words, namespace, message) => expect(() => parseTarget(words, namespace)).toThrow(message));

  it('asks for the fallback only when the namespace is not given', () => {
    const fallback = jest.fn(() => 'ctx');
    parseTarget(['pod/web/nginx'], undefined, fallback);
    parseTarget(['pod/nginx'], 'web', fallback);
    expect(fallback).not.toHaveBeenCalled();
  });
});

describe('objectOfWorkflowId', () => {
  it("reads back every kind's workflow id", () => {
    for (const kind of LIFECYCLE_KINDS) {
      const ref = kind === 'Node' ? { kind, name: 'node-1' } : { kind, namespace: 'default', name: 'web' };
      expect(objectOfWorkflowId(workflowId(ref))).toEqual(ref);
    }
  });

  it('names no object for the other workflows and for ids no kind starts', () => {
    for (const id of [
      'global/midonet',
      'gc/sweep-2025-01-01T00:00:00Z',
      'gc/sweep/manual-x',
      'pod/web',
      'pod/a/b/c',
      'x',
    ])
      expect(objectOfWorkflowId(id)).toBeUndefined();
  });
});

describe('cluster IDs', () => {
  const ref = { kind: 'Pod', namespace: 'default', name: 'web' } as const;

  it('prefix the workflow id, and only when given', () => {
    expect(workflowId(ref, 'prod-eu')).toBe('prod-eu/pod/default/web');
    expect(workflowId({ kind: 'Node', name: 'n1' }, 'prod-eu')).toBe('prod-eu/node/n1');
    expect(workflowId(ref, undefined)).toBe('pod/default/web');
  });

  it('are read back from an id, and an id without one says so', () => {
    expect(clusterOfWorkflowId('prod-eu/pod/default/web')).toBe('prod-eu');
    expect(clusterOfWorkflowId('prod-eu/global/midonet')).toBe('prod-eu');
    for (const id of ['pod/default/web', 'node/n1', 'global/midonet', 'gc/sweep-x', 'translation/a/b', 'x'])
      expect(clusterOfWorkflowId(id)).toBeUndefined();
  });

  it("leave the object an id is about: every kind's, under a cluster ID or not", () => {
    for (const kind of LIFECYCLE_KINDS) {
      const object = kind === 'Node' ? { kind, name: 'node-1' } : { kind, namespace: 'default', name: 'web' };
      expect(objectOfWorkflowId(workflowId(object, 'east'))).toEqual(object);
    }
    expect(objectOfWorkflowId('east/global/midonet')).toBeUndefined();
  });

  it("keep a visibility query to the cluster's workflows", () => {
    expect(clusterFilter('east')).toBe("WorkflowId STARTS_WITH 'east/'");
    expect(clusterFilter(undefined)).toBeUndefined();
  });
});

describe('temporalUiLink', () => {
  it("is the UI's workflow page, the namespace and the id URL-encoded, a trailing slash of the UI's address dropped", () => {
    expect(temporalUiLink('http://ui:8233/', 'default', 'pod/web/nginx')).toBe(
      'http://ui:8233/namespaces/default/workflows/pod%2Fweb%2Fnginx',
    );
  });
});
