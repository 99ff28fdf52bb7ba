import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dumpYaml } from '@kubernetes/client-node';
import { readObjectFlags } from './object-flags';

describe('readObjectFlags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'object-flags-'));
  const kubeconfig = join(dir, 'config');
  writeFileSync(
    kubeconfig,
    dumpYaml({
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [
        { name: 'web', context: { cluster: 'c', user: 'u', namespace: 'web' } },
        { name: 'bare', context: { cluster: 'c', user: 'u' } },
      ],
      'current-context': 'web',
    }),
  );
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("takes the kubeconfig context's namespace as the default of -n, --context's when given, else default", () => {
    expect(readObjectFlags({ kubeconfig }).defaultNamespace()).toBe('web');
    expect(readObjectFlags({ kubeconfig, context: 'bare' }).defaultNamespace()).toBe('default');
    expect(() => readObjectFlags({ kubeconfig, context: 'gone' }).defaultNamespace()).toThrow(
      'no context "gone" in the kubeconfig (web, bare)',
    );
  });

  it('links to the Temporal UI only when its address is set', () => {
    expect(readObjectFlags({ temporalUiUrl: 'http://ui:8233' }).link('default', 'pod/web/x')).toBe(
      'http://ui:8233/namespaces/default/workflows/pod%2Fweb%2Fx',
    );
    expect(readObjectFlags({}).link('default', 'pod/web/x')).toBeUndefined();
  });

  it('names every wrong flag at once', () => {
    expect(() => readObjectFlags({ namespace: 'A', context: '' })).toThrow(
      /^-n\/--namespace: must be a namespace name .*; --context: must not be empty$/,
    );
  });
});
