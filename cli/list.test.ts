import { TypedSearchAttributes } from '@temporalio/common';
import { Command } from 'commander';
import { K8sKind, K8sName, K8sNamespace, K8sUID, LifecycleState } from '../model/search-attributes';
import { connectClient } from '../platform/temporal-connection';
import { formatList, listedObject, listRequest, registerListCommand, visibilityQuery, type ListedObject } from './list';
import type { ObjectFlags } from './object-flags';

jest.mock('../platform/temporal-connection', () => ({
  connectClient: jest.fn(() => Promise.reject(new Error('no server in unit tests'))),
}));

const flags = (own: Partial<ObjectFlags> = {}): ObjectFlags => ({
  defaultNamespace: () => 'ctx',
  link: () => undefined,
  ...own,
});

describe('visibilityQuery', () => {
  it('asks for running workflows of namespaced kinds in the namespace, Nodes wherever they are', () => {
    expect(visibilityQuery({ kinds: ['Node', 'Pod', 'Service'], namespace: 'web', states: [] })).toBe(
      "ExecutionStatus = 'Running' AND ((K8sKind IN ('Pod', 'Service') AND K8sNamespace = 'web') OR K8sKind IN ('Node'))",
    );
  });

  it('asks for every namespace and some states', () => {
    expect(visibilityQuery({ kinds: ['Pod'], states: ['stuck', 'paused'] })).toBe(
      "ExecutionStatus = 'Running' AND K8sKind IN ('Pod') AND LifecycleState IN ('stuck', 'paused')",
    );
  });

  it('asks for Nodes alone whatever the namespace', () => {
    expect(visibilityQuery({ kinds: ['Node'], namespace: 'web', states: [] })).toBe(
      "ExecutionStatus = 'Running' AND (K8sKind IN ('Node'))",
    );
  });
});

describe('listRequest', () => {
  const namespaced = ['Pod', 'Service', 'Endpoints', 'Translation', 'PeerPod'];
  it.each<[string, string[], Record<string, unknown>, ObjectFlags, object]>([
    [
      'the namespaced kinds of the context namespace',
      [],
      {},
      flags(),
      { filter: { kinds: namespaced, namespace: 'ctx', states: [] }, named: [] },
    ],
    ['-n', [], {}, flags({ namespace: 'web' }), { filter: { kinds: namespaced, namespace: 'web', states: [] } }],
    [
      '-A: every kind, Nodes too, every namespace',
      [],
      { allNamespaces: true },
      flags(),
      { filter: { kinds: ['Node', ...namespaced], states: [] } },
    ],
    [
      'kinds as words, plural or short',
      ['pods,no'],
      {},
      flags(),
      { filter: { kinds: ['Pod', 'Node'], namespace: 'ctx', states: [] } },
    ],
    [
      '--kind and --state, any case',
      [],
      { kind: 'Svc', state: 'Stuck,paused' },
      flags(),
      { filter: { kinds: ['Service'], namespace: 'ctx', states: ['stuck', 'paused'] } },
    ],
    [
      'named objects, with -n or their own namespace',
      ['pod/nginx', 'pod/db/pg', 'node/n1'],
      {},
      flags(),
      { named: ['pod/ctx/nginx', 'pod/db/pg', 'node/n1'] },
    ],
    ['a named object with -n', ['pod/nginx'], {}, flags({ namespace: 'web' }), { named: ['pod/web/nginx'] }],
  ])('%s', (_, words, options, objectFlags, expected) =>
    expect(listRequest(words, options as never, objectFlags)).toMatchObject(expected),
  );

  it.each<[string, string[], Record<string, unknown>, ObjectFlags, string]>([
    [
      'an unknown kind, with the kinds',
      [],
      { kind: 'pod,deployment' },
      flags(),
      '--kind: unknown kind "deployment": expected one of Node, Pod',
    ],
    [
      'an unknown state, with the states',
      [],
      { state: 'broken' },
      flags(),
      '--state: unknown state "broken": expected one of observing',
    ],
    [
      '-A with -n',
      [],
      { allNamespaces: true },
      flags({ namespace: 'web' }),
      'give -n/--namespace or -A/--all-namespaces, not both',
    ],
    [
      'kinds and objects together',
      ['pods', 'pod/x'],
      {},
      flags(),
      'give kinds (pods,nodes) or objects (pod/nginx …), not both',
    ],
    [
      'a namespace that disagrees with -n',
      ['pod/db/pg'],
      {},
      flags({ namespace: 'web' }),
      'is in namespace db, but -n says web',
    ],
  ])('refuses %s', (_, words, options, objectFlags, message) =>
    expect(() => listRequest(words, options as never, objectFlags)).toThrow(message),
  );

  it('does not read the kubeconfig with -n or -A', () => {
    const defaultNamespace = jest.fn(() => 'ctx');
    listRequest([], {}, flags({ namespace: 'web', defaultNamespace }));
    listRequest([], { allNamespaces: true }, flags({ defaultNamespace }));
    expect(defaultNamespace).not.toHaveBeenCalled();
  });
});

describe('listedObject', () => {
  it('reads the search attributes; a Node has no namespace, a workflow not yet published has no state', () => {
    const startTime = new Date('2026-01-01T00:00:00Z');
    const of = (pairs: ConstructorParameters<typeof TypedSearchAttributes>[0]) =>
      listedObject({ workflowId: 'id', startTime, typedSearchAttributes: new TypedSearchAttributes(pairs) });
    expect(
      of([
        { key: K8sKind, value: 'Pod' },
        { key: K8sNamespace, value: 'web' },
        { key: K8sName, value: 'nginx' },
        { key: K8sUID, value: 'u1' },
        { key: LifecycleState, value: 'ready' },
      ]),
    ).toEqual({
      kind: 'Pod',
      namespace: 'web',
      name: 'nginx',
      uid: 'u1',
      state: 'ready',
      workflowId: 'id',
      startTime: startTime.toISOString(),
    });
    expect(
      of([
        { key: K8sKind, value: 'Node' },
        { key: K8sName, value: 'n1' },
      ]),
    ).toEqual({ kind: 'Node', name: 'n1', workflowId: 'id', startTime: startTime.toISOString() });
  });
});

describe('formatList', () => {
  const now = new Date('2026-01-01T01:00:00Z');
  const objects: ListedObject[] = [
    { kind: 'Node', name: 'n1', state: 'ready', workflowId: 'node/n1', startTime: '2026-01-01T00:00:00Z' },
    {
      kind: 'Pod',
      namespace: 'web',
      name: 'nginx',
      state: 'stuck',
      reason: 'MidonetUnavailable',
      workflowId: 'pod/web/nginx',
      startTime: '2026-01-01T00:59:30Z',
      ui: 'http://ui/x',
    },
  ];
  const plain = { color: false };

  it('prints kind, namespace, name, state and age in aligned columns', () => {
    expect(formatList(objects, undefined, plain, now)).toBe(
      [
        'KIND   NAMESPACE   NAME    STATE   AGE',
        'Node               n1      ready   60m',
        'Pod    web         nginx   stuck   30s',
        '',
      ].join('\n'),
    );
    expect(formatList(objects, undefined, { ...plain, headers: false }, now).split('\n')[0]).toMatch(/^Node /);
  });

  it('-o wide adds the reason and, where known, the Temporal UI link', () => {
    expect(formatList(objects, 'wide', plain, now).split('\n')[2]?.split(/ {3,}/)).toEqual([
      'Pod',
      'web',
      'nginx',
      'stuck',
      '30s',
      'MidonetUnavailable',
      'http://ui/x',
    ]);
  });

  it('-o jsonpath= reads the list as -o json prints it, with no newline added, as kubectl', () => {
    expect(formatList(objects, 'jsonpath={.items[*].name}', plain, now)).toBe('n1 nginx');
    expect(formatList([], 'jsonpath={range .items[*]}{.name}{"\\n"}{end}', plain, now)).toBe('');
  });

  it('-o name prints the workflow ids, which status takes back', () => {
    expect(formatList(objects, 'name', plain, now)).toBe('node/n1\npod/web/nginx\n');
  });

  it('-o json is the items, an empty list included', () => {
    expect(JSON.parse(formatList(objects, 'json', plain, now))).toEqual({ items: objects });
    expect(JSON.parse(formatList([], 'json', plain, now))).toEqual({ items: [] });
  });
});

describe('steward list flags, checked before any call to Temporal', () => {
  const run = (...args: string[]) => {
    const program = new Command('steward').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
    registerListCommand(program);
    return program.parseAsync(args, { from: 'user' });
  };
  afterEach(() => expect(connectClient).not.toHaveBeenCalled());

  it.each<[string, string[], string | RegExp]>([
    [
      'an unknown output format',
      ['list', '-o', 'table'],
      "argument 'table' is invalid. Allowed choices are wide, json, yaml, name, jsonpath=<template>.",
    ],
    ['a namespace that is no namespace name', ['get', '-n', 'Web_1'], '-n/--namespace: must be a namespace name'],
    [
      'an unreadable kubeconfig, named by flag and variable',
      ['list', '--kubeconfig', '/nonexistent'],
      /--kubeconfig \/ KUBECONFIG: cannot read file "\/nonexistent"/,
    ],
    [
      'a UI address that is no URL',
      ['list', '-A', '--temporal-ui-url', 'ui'],
      /--temporal-ui-url \/ STEWARD_TEMPORAL_UI_URL: must be an http\(s\) URL/,
    ],
    [
      'a bad Temporal address',
      ['list', '-A', '--address', 'nowhere'],
      /--address \/ TEMPORAL_ADDRESS: must be host:port/,
    ],
  ])('%s', async (_, args, expected) => {
    await expect(run(...args)).rejects.toThrow(expected);
  });

  it('has no --namespace meaning Temporal: -n is the Kubernetes namespace', async () => {
    await expect(run('list', '--namespace', 'Not_A_Name')).rejects.toThrow('-n/--namespace: must be a namespace name');
  });
});
