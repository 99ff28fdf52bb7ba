import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { stackFile, type StackInfo } from '../deploy/local';
import { EmulatorAdmin } from '../deploy/local/midonet';
import { repoRoot } from '../deploy/local/paths';
import { sleep } from '../deploy/local/process';
import { globalIds, DEFAULT_TENANT } from '../model/translation/ids';
import { sampleCluster } from '../model/translation/sample-cluster';
import { virsh } from '../deploy/local/libvirt';
import { TRANSLATION_API } from '../model/naming';
import { TEMPORAL_UI_ANNOTATION } from '../model/vocabulary';

// `npm start` and `steward demo` as a user runs them: two processes, the second reading the first's stack.json. The
// stack is this test's own (not jest's shared one), its libvirtd included.
const steward = join(repoRoot, 'bin', 'steward.cjs');
const env: NodeJS.ProcessEnv = { ...process.env };
// Parts the user points at would be reused; this test wants the embedded ones.
for (const name of ['TEMPORAL_ADDRESS', 'KUBECONFIG', 'LIBVIRT_URI', 'MIDONET_API_URL']) delete env[name];

function run(args: string[]) {
  const child = spawn(process.execPath, [steward, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const demoOwners = (() => {
  const cluster = sampleCluster();
  // and the peer pod the demo adds beside the sample cluster
  return new Set([
    ...[...cluster.nodes, ...cluster.pods, cluster.service, cluster.endpoints].map(
      (o) => `${o.kind}/${o.metadata.name}`,
    ),
    'Pod/web-peer',
  ]);
})();

const stateDir = mkdtempSync(join(tmpdir(), 'steward-demo-'));
const file = stackFile(stateDir);
let up: ReturnType<typeof run>;
let info: StackInfo;
/** The UUID of the peer pod's libvirt domain, as the demo printed it. */
let peerPodVm: string | undefined;

/** Translations owned by the demo's objects. */
async function demoTranslationObjects(): Promise<k8s.KubernetesObject[]> {
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(info.kubernetes.kubeconfig);
  const list = (await kubeConfig
    .makeApiClient(k8s.CustomObjectsApi)
    .listClusterCustomObject({ ...TRANSLATION_API })) as { items: k8s.KubernetesObject[] };
  return list.items.filter((t) => t.metadata?.ownerReferences?.some((o) => demoOwners.has(`${o.kind}/${o.name}`)));
}

/** Translations owned by the demo's objects, as `namespace/name`. */
const demoTranslations = async () =>
  (await demoTranslationObjects()).map((t) => `${t.metadata!.namespace}/${t.metadata!.name}`);

beforeAll(async () => {
  up = run(['up', '--free-ports', '--state-dir', stateDir]);
  await waitFor(
    () => up.output().includes('Press Ctrl-C') || up.child.exitCode !== null,
    'steward up to print its summary',
    240_000,
  );
  if (!existsSync(file) || up.child.exitCode !== null) throw new Error(`steward up failed:\n${up.output()}`);
  info = JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}, 300_000);

afterAll(async () => {
  if (up.child.exitCode === null) {
    up.child.kill('SIGKILL');
    await up.exited;
  }
  rmSync(stateDir, { recursive: true, force: true });
});

describe('npm start + steward demo', () => {
  it('steward up created the cluster router, runs the worker and the starter, and says how to try it', async () => {
    expect(up.output()).toMatch(/Worker metrics: +http:\/\/127\.0\.0\.1:\d+\/metrics/);
    expect(up.output()).toContain(`npx steward demo --stack ${file}`);
    const routers = (await new EmulatorAdmin(info.midonet.adminUrl!).dump()).Router;
    expect(routers.map((r) => [r.id, r.name, r.tenantId])).toContainEqual([
      globalIds(DEFAULT_TENANT).clusterRouter,
      'ClusterRouter',
      DEFAULT_TENANT,
    ]);
    const metrics = up.output().match(/Worker metrics: +(\S+)/)![1]!;
    expect((await fetch(metrics.replace('/metrics', '/readyz'))).status).toBe(200);
  });

  it('steward demo creates the sample cluster, waits until its Translations are Ready and prints the links', async () => {
    const demo = run(['demo', '--stack', file, '--timeout', '200']);
    const code = await demo.exited;
    expect({ code, output: demo.output() }).toMatchObject({ code: 0 });
    const translations = await demoTranslations();
    expect(demo.output()).toContain(`Translations: ${translations.length}, all Ready`);
    expect(translations.length).toBeGreaterThanOrEqual(12);
    expect(demo.output()).toContain(`${info.temporal.uiUrl}/namespaces/default/workflows/pod%2Fdefault%2Fnginx`);
    expect(demo.output()).toContain(`${info.temporal.uiUrl}/namespaces/default/workflows/global%2Fmidonet`);
    // The sample's Translations are all owned: pushed by their owners' workflows, none has one of its own to link.
    expect(demo.output()).not.toContain('workflows/translation%2F');
    expect(demo.output()).toMatch(/MidoNet resources in the emulator[^]*Bridge +2/);
    // Each Translation links to its owner's workflow page in the stack's UI.
    const nginx = (await demoTranslationObjects()).filter((t) =>
      t.metadata!.ownerReferences!.some((o) => o.kind === 'Pod' && o.name === 'nginx'),
    );
    expect(nginx.map((t) => t.metadata!.annotations?.[TEMPORAL_UI_ANNOTATION])).toEqual(
      nginx.map(() => `${info.temporal.uiUrl}/namespaces/default/workflows/pod%2Fdefault%2Fnginx`),
    );
    expect(nginx.length).toBeGreaterThan(0);
    // The peer pod: a running libvirt domain whose UUID its PeerPod records.
    peerPodVm = /libvirt VM ([0-9a-f-]{36})/.exec(demo.output())?.[1];
    expect(peerPodVm).toBeDefined();
    expect(await virsh(info.libvirt.uri, 'domstate', peerPodVm!)).toMatch(/running/);
    // Made as cloud-api-adaptor makes it, from the stack's pool and pod-VM image: its two volumes are shown.
    expect(demo.output()).toMatch(/disk +sda +\S+\/podvm-web-peer-[0-9a-f]{8}-root\.qcow2/);
    expect(demo.output()).toMatch(/cdrom +hda +\S+\/podvm-web-peer-[0-9a-f]{8}-cloudinit\.iso/);
    expect(demo.output()).toContain(`${info.temporal.uiUrl}/namespaces/default/workflows/peerpod%2Fdefault%2Fweb-peer`);
  }, 300_000);

  it('steward demo --cleanup deletes it and waits until its Translations are gone', async () => {
    const cleanup = run(['demo', '--stack', file, '--cleanup', '--timeout', '120']);
    const code = await cleanup.exited;
    expect({ code, output: cleanup.output() }).toMatchObject({ code: 0 });
    expect(cleanup.output()).toContain('Translations gone');
    expect(await demoTranslations()).toEqual([]);
    const dump = await new EmulatorAdmin(info.midonet.adminUrl!).dump();
    expect({ bridges: dump.Bridge.length, ports: dump.Port.length, hosts: dump.Host.length }).toEqual({
      bridges: 0,
      ports: 0,
      hosts: 0,
    });
    await expect(virsh(info.libvirt.uri, 'domstate', peerPodVm!)).rejects.toThrow(/failed to get domain/);
  }, 200_000);

  it('Ctrl-C stops the starter, the worker and the stack, and exits 0', async () => {
    const pids = Object.values(info.pids);
    up.child.kill('SIGINT');
    expect(await up.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  }, 120_000);
});

// The acceptance of a peer-pods-only installation (issue 42): `npm start -- --backends peerpods` starts no MidoNet, and
// the demo shows its peer pod's VM with the volumes it was made with, then deletes it with them.
describe('npm start -- --backends peerpods + steward demo', () => {
  const peerStateDir = mkdtempSync(join(tmpdir(), 'steward-demo-peerpods-'));
  const peerFile = stackFile(peerStateDir);
  let peerUp: ReturnType<typeof run>;
  let peerInfo: Omit<StackInfo, 'midonet'> & { midonet?: unknown };
  let vm: string | undefined;

  beforeAll(async () => {
    peerUp = run(['up', '--free-ports', '--backends', 'peerpods', '--state-dir', peerStateDir]);
    await waitFor(
      () => peerUp.output().includes('Press Ctrl-C') || peerUp.child.exitCode !== null,
      'steward up --backends peerpods to print its summary',
      240_000,
    );
    if (!existsSync(peerFile) || peerUp.child.exitCode !== null)
      throw new Error(`steward up --backends peerpods failed:\n${peerUp.output()}`);
    peerInfo = JSON.parse(readFileSync(peerFile, 'utf8')) as typeof peerInfo;
  }, 300_000);

  afterAll(async () => {
    if (peerUp && peerUp.child.exitCode === null) {
      peerUp.child.kill('SIGKILL');
      await peerUp.exited;
    }
    rmSync(peerStateDir, { recursive: true, force: true });
  });

  it('runs no MidoNet emulator', () => {
    expect(peerInfo.midonet).toBeUndefined();
    expect(Object.keys(peerInfo.pids).filter((name) => /midonet/i.test(name))).toEqual([]);
  });

  it("steward demo shows the peer pod's VM with its volumes, and nothing that needs MidoNet", async () => {
    const demo = run(['demo', '--stack', peerFile, '--timeout', '200']);
    const code = await demo.exited;
    expect({ code, output: demo.output() }).toMatchObject({ code: 0 });
    vm = /libvirt VM ([0-9a-f-]{36})/.exec(demo.output())?.[1];
    expect(vm).toBeDefined();
    expect(await virsh(peerInfo.libvirt.uri, 'domstate', vm!)).toMatch(/running/);
    expect(demo.output()).toMatch(/disk +sda +\S+\/podvm-web-peer-[0-9a-f]{8}-root\.qcow2/);
    expect(demo.output()).toMatch(/cdrom +hda +\S+\/podvm-web-peer-[0-9a-f]{8}-cloudinit\.iso/);
    expect(demo.output()).not.toMatch(/Translations|global%2Fmidonet|pod%2Fdefault%2Fnginx/);
  }, 300_000);

  it('steward demo --cleanup deletes the VM with its volumes, then Ctrl-C stops everything', async () => {
    const cleanup = run(['demo', '--stack', peerFile, '--cleanup', '--timeout', '120']);
    expect({ code: await cleanup.exited, output: cleanup.output() }).toMatchObject({ code: 0 });
    expect(cleanup.output()).toContain('The demo is cleaned up');
    await expect(virsh(peerInfo.libvirt.uri, 'domstate', vm!)).rejects.toThrow(/failed to get domain/);
    const volumes = await virsh(peerInfo.libvirt.uri, 'vol-list', 'default');
    expect(volumes).not.toMatch(/podvm-web-peer/);
    const pids = Object.values(peerInfo.pids);
    peerUp.child.kill('SIGINT');
    expect(await peerUp.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  }, 200_000);
});
