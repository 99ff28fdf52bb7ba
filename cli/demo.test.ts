import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import * as k8s from '@kubernetes/client-node';
import { sampleCluster } from '../model/translation/sample-cluster';
import { project } from '../starter/controller';
import { demoObjects, parseDemoOptions, registerDemoCommand } from './demo';

const dir = mkdtempSync(join(tmpdir(), 'steward-demo-test-'));
const stackJson = (content: unknown) => {
  const file = join(dir, `stack-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
};
const stack = {
  stateDir: dir,
  temporal: { address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://127.0.0.1:8233', external: false },
  kubernetes: { kubeconfig: join(dir, 'kubeconfig'), external: false },
  libvirt: { uri: 'qemu:///system', external: true },
  midonet: { url: 'http://127.0.0.1:8181/midonet-api', adminUrl: 'http://127.0.0.1:8181/_emulator', external: false },
  pids: {},
};

function steward(...args: string[]): Promise<unknown> {
  const program = new Command('steward').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  registerDemoCommand(program);
  return program.parseAsync(args, { from: 'user' });
}

describe('steward demo arguments, checked before anything is created', () => {
  it.each<[string, string[], string | RegExp]>([
    [
      'a missing stack.json says to start the stack',
      ['demo', '--stack', join(dir, 'none.json')],
      /--stack .*none\.json: no such file; start the stack with `npm start` first/,
    ],
    ['a file that is not JSON', ['demo', '--stack', stackJson('not json')], /--stack .*: .*JSON/],
    [
      'JSON that is not a stack.json names what is missing',
      ['demo', '--stack', stackJson({ temporal: {} })],
      /not a stack\.json written by `steward up`[^]*kubernetes/,
    ],
    [
      'the timeout is a duration',
      ['demo', '--timeout', '1.5', '--stack', stackJson(stack)],
      '--timeout: must be a duration of at least 1s, such as 90s or 5m (got "1.5")',
    ],
    [
      'a timeout under a second could never succeed',
      ['demo', '--cleanup', '--timeout', '500ms'],
      '--timeout: must be a duration of at least 1s, such as 90s or 5m (got "500ms")',
    ],
    [
      'a timeout of 0 could never succeed',
      ['demo', '--cleanup', '--timeout', '0'],
      '--timeout: must be a duration of at least 1s, such as 90s or 5m (got "0")',
    ],
    ['unknown flags are refused', ['demo', '--namespace', 'x'], /unknown option '--namespace'/],
  ])('%s', async (_sentence, args, expected) => {
    await expect(steward(...args)).rejects.toThrow(expected);
  });

  it('reads a valid stack.json with the defaults', () => {
    const file = stackJson(stack);
    expect(parseDemoOptions({ stack: file })).toMatchObject({
      stackFile: file,
      timeoutMs: 180_000,
      cleanup: false,
      stack: { temporal: { uiUrl: 'http://127.0.0.1:8233' } },
    });
  });

  it.each([
    ['a duration, as adopt --timeout takes it', '5m', 300_000],
    ['seconds', '90s', 90_000],
    ['a bare number, still seconds as before', '45', 45_000],
  ])('takes --timeout as %s', (_sentence, timeout, timeoutMs) => {
    expect(parseDemoOptions({ stack: stackJson(stack), timeout }).timeoutMs).toBe(timeoutMs);
  });
});

describe('demo objects', () => {
  const objects = demoObjects();
  const withUid = <T extends k8s.KubernetesObject>(object: T, uid: string): T => ({
    ...object,
    metadata: { ...object.metadata, uid },
  });

  it('project exactly as the sample cluster, except the Service, whose ClusterIP the API server picks', () => {
    const cluster = sampleCluster();
    // The sample Pods projected: of their status only what their translation reads (no Running, no IP without a MAC).
    const pods = cluster.pods.map((p) => project('Pod', p as k8s.KubernetesObject));
    expect(objects.nodes.map((n, i) => project('Node', withUid(n, cluster.nodes[i]!.metadata.uid)))).toEqual(
      cluster.nodes,
    );
    expect(objects.pods.map((p, i) => project('Pod', withUid(p, cluster.pods[i]!.metadata.uid)))).toEqual(pods);
    expect(project('Endpoints', withUid(objects.endpoints, cluster.endpoints.metadata.uid))).toEqual(cluster.endpoints);
    const service = structuredClone(cluster.service);
    delete service.spec.clusterIP;
    expect(project('Service', withUid(objects.service, cluster.service.metadata.uid))).toEqual(service);
  });

  it('are real objects: Nodes cluster-scoped, Pods with a container, Service ports targeting the Endpoints ports', () => {
    expect(objects.nodes.every((n) => n.metadata?.namespace === undefined)).toBe(true);
    expect(objects.pods.every((p) => p.spec?.containers.length === 1)).toBe(true);
    expect(objects.service.spec?.ports?.map((p) => [p.name, p.port, p.targetPort])).toEqual([
      ['http', 80, 8080],
      ['syslog', 514, 5514],
    ]);
    expect(objects.endpoints.subsets?.[0]?.addresses?.map((a) => a.targetRef?.name)).toEqual(['web-0', 'web-1']);
  });
});
