import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkReach } from './check';
import { runCommandLine } from './errors';
import { stewardProgram } from './program';

const reached = (line: string) => () => Promise.resolve(line);
const unreachable = (why: string) => () => Promise.reject(new Error(why));

describe('checkReach', () => {
  it.each([
    ['both reached: a line each, nothing failed', reached('T ok'), reached('K ok'), ['T ok', 'K ok'], []],
    [
      'Temporal not reached: Kubernetes still said, Temporal named',
      unreachable('Temporal at x'),
      reached('K ok'),
      ['K ok'],
      ['Temporal at x'],
    ],
    [
      'neither: both named, Temporal first',
      unreachable('Temporal at x'),
      unreachable('Kubernetes at y'),
      [],
      ['Temporal at x', 'Kubernetes at y'],
    ],
  ])('%s', async (_case, temporal, kubernetes, lines, failed) => {
    expect(await checkReach({ temporal, kubernetes })).toEqual({ reached: lines, failed });
  });
});

describe('steward check with nothing to reach', () => {
  it('exits 1 with `error: check:` naming Temporal and the Kubernetes API server, each where it was looked for', async () => {
    // Port 1 refuses at once, for the gRPC client as for the API server's client.
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'steward-check-')), 'kubeconfig');
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1", insecure-skip-tls-verify: true } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      ].join('\n'),
    );
    let stderr = '';
    const exitCode = await runCommandLine(
      stewardProgram(),
      [
        'node',
        'steward',
        'check',
        '--address',
        '127.0.0.1:1',
        '--temporal-namespace',
        'default',
        '--kubeconfig',
        kubeconfig,
      ],
      (text) => (stderr += text),
    );
    expect(exitCode).toBe(1);
    expect(stderr).toMatch(
      /^error: check: Temporal at 127\.0\.0\.1:1 \(namespace default\) is not reachable: .*; Kubernetes API server at https:\/\/127\.0\.0\.1:1 is not reachable: .*\n$/s,
    );
  });
});
