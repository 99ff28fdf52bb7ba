import { hostname } from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { addSettingFlags } from '../platform/settings';
import { withStderr } from '../test/support/stderr';
import { loadStarterConfig, ownNamespace, starterSettings } from './config';

/** What `steward starter <args>` gives the loader as flags, and what it writes to stderr (deprecation warnings). */
async function starterFlags(args: string[]) {
  let flags: Record<string, string | boolean | undefined> = {};
  const program = new Command('steward').exitOverride();
  addSettingFlags(program.command('starter'), starterSettings).action(
    (options: typeof flags) => void (flags = options),
  );
  const { writes } = await withStderr(() => program.parseAsync(['starter', ...args], { from: 'user' }));
  return { flags, warnings: writes };
}

describe('starter configuration', () => {
  it('defaults: all namespaces, endpoints from EndpointSlices where served, the default Lease, 10 min resync, 200 ms debounce, identity <hostname>-<pid>, no peer pods Steward makes VMs for, no PeerPods served (no cloud provider), probes and metrics on port 9465', () => {
    expect(loadStarterConfig({}, {})).toEqual({
      temporal: {
        address: '127.0.0.1:7233',
        namespace: 'default',
        tls: undefined,
        apiKey: undefined,
        taskQueue: 'steward',
      },
      kubeconfig: undefined,
      backends: ['midonet', 'peerpods'],
      watchNamespace: undefined,
      endpointsFrom: 'auto',
      lease: { namespace: 'kube-system', name: 'steward-starter' },
      resyncMs: 600_000,
      debounceMs: 200,
      identity: `${hostname()}-${process.pid}`,
      tenant: 'midonetkube',
      peerPodRuntimeClasses: [],
      peerPodClouds: [],
      sweep: {
        intervalMs: 600_000,
        graceMs: 600_000,
        backends: ['cloud', 'midonet'],
        dryRun: false,
        caaLeaks: 'report',
      },
      massDeletion: { share: 0.5, minDeletions: 10, windowSeconds: 60 },
      http: { host: '0.0.0.0', port: 9465 },
      logLevel: 'info',
    });
  });

  it('reads endpoints from the source named, and refuses another, naming the setting', () => {
    expect(loadStarterConfig({}, { STEWARD_ENDPOINTS_FROM: 'Endpoints' }).endpointsFrom).toBe('Endpoints');
    expect(loadStarterConfig({ endpointsFrom: 'EndpointSlices' }, {}).endpointsFrom).toBe('EndpointSlices');
    expect(() => loadStarterConfig({}, { STEWARD_ENDPOINTS_FROM: 'slices' })).toThrow(
      '--endpoints-from / STEWARD_ENDPOINTS_FROM: must be one of auto, Endpoints, EndpointSlices',
    );
  });

  it("has a port of its own, apart from the worker's (steward up runs both in one process)", () => {
    const env = { STEWARD_HTTP_PORT: '9000', STEWARD_STARTER_HTTP_HOST: '127.0.0.1', STEWARD_STARTER_HTTP_PORT: '0' };
    expect(loadStarterConfig({}, env).http).toEqual({ host: '127.0.0.1', port: 0 });
    expect(loadStarterConfig({ httpPort: '9100' }, env).http.port).toBe(9100);
    expect(() => loadStarterConfig({}, { STEWARD_STARTER_HTTP_PORT: '70000' })).toThrow(
      '--http-port / STEWARD_STARTER_HTTP_PORT: must be at most 65535',
    );
  });

  it.each<[string, Record<string, string>, object]>([
    [
      'every hour, 90 s grace, MidoNet only, dry run',
      {
        STEWARD_SWEEP_INTERVAL: '1h',
        STEWARD_SWEEP_GRACE: '90s',
        STEWARD_SWEEP_BACKENDS: 'midonet',
        STEWARD_SWEEP_DRY_RUN: 'true',
      },
      { intervalMs: 3_600_000, graceMs: 90_000, backends: ['midonet'], dryRun: true },
    ],
    [
      'no grace at all, and none removes the Schedule',
      { STEWARD_SWEEP_GRACE: '0', STEWARD_SWEEP_BACKENDS: 'none' },
      { graceMs: 0, backends: [] },
    ],
  ])('sweeper Schedule: %s', (_sentence, env, expected) => {
    expect(loadStarterConfig({}, env).sweep).toMatchObject(expected);
  });

  it.each([
    ['kata-remote, kata-qemu-remote', ['kata-remote', 'kata-qemu-remote']],
    ['none', []],
  ])('peer-pod runtime classes %j', (list, expected) => {
    expect(loadStarterConfig({}, { STEWARD_PEERPOD_RUNTIME_CLASSES: list }).peerPodRuntimeClasses).toEqual(expected);
  });

  it.each([
    { what: 'the cloud provider', env: { STEWARD_CLOUD_PROVIDER: 'aws' }, served: ['aws'] },
    {
      what: "cloud-api-adaptor's CLOUD_PROVIDER (peer-pods-cm)",
      env: { CLOUD_PROVIDER: 'libvirt' },
      served: ['libvirt'],
    },
    {
      what: 'a list, over the provider',
      env: { CLOUD_PROVIDER: 'aws', STEWARD_PEERPOD_CLOUDS: 'libvirt, aws' },
      served: ['libvirt', 'aws'],
    },
    { what: 'none, over the provider', env: { CLOUD_PROVIDER: 'aws', STEWARD_PEERPOD_CLOUDS: 'none' }, served: [] },
  ])('serves the PeerPods of the clouds $what names', ({ env, served }) => {
    expect(loadStarterConfig({}, env).peerPodClouds).toEqual(served);
  });

  it.each([
    {
      env: { STEWARD_PEERPOD_CLOUDS: 'libvirt,azure' },
      issue: '--peer-pod-clouds / STEWARD_PEERPOD_CLOUDS: must be libvirt or aws, got "azure"',
    },
    {
      env: { CLOUD_PROVIDER: 'azure' },
      issue: '--cloud-provider / STEWARD_CLOUD_PROVIDER: must be libvirt or aws, got "azure"',
    },
  ])('refuses to serve a cloud it cannot delete VMs in: $env', ({ env, issue }) => {
    expect(() => loadStarterConfig({}, env)).toThrow(issue);
  });

  it("keeps the Lease in the starter's own namespace in a cluster, kube-system outside one, or where it is told", () => {
    expect(loadStarterConfig({}, {}, 'steward-prod').lease).toEqual({
      namespace: 'steward-prod',
      name: 'steward-starter',
    });
    expect(loadStarterConfig({}, {}, undefined).lease.namespace).toBe('kube-system');
    expect(loadStarterConfig({}, { STEWARD_LEASE_NAMESPACE: 'kube-system' }, 'steward-prod').lease.namespace).toBe(
      'kube-system',
    );
    // The namespace Kubernetes mounts beside the service account's token.
    const file = join(mkdtempSync(join(tmpdir(), 'steward-sa-')), 'namespace');
    writeFileSync(file, 'steward-prod');
    expect(ownNamespace(file)).toBe('steward-prod');
    expect(ownNamespace(join(tmpdir(), 'no-such-dir', 'namespace'))).toBeUndefined();
  });

  it('takes the re-list period and the debounce window as durations, as every other duration is written', async () => {
    const { flags, warnings } = await starterFlags(['--resync-interval', '5m', '--debounce-window', '1s']);
    expect(warnings).toEqual([]);
    expect(loadStarterConfig(flags, {})).toMatchObject({ resyncMs: 300_000, debounceMs: 1_000 });
    const env = { STEWARD_RESYNC_INTERVAL: '90s', STEWARD_DEBOUNCE_WINDOW: '50ms' };
    expect(loadStarterConfig({}, env)).toMatchObject({ resyncMs: 90_000, debounceMs: 50 });
  });

  it('still takes the former --resync-seconds and --debounce-ms in their units, with a deprecation warning', async () => {
    const { flags, warnings } = await starterFlags(['--resync-seconds', '30', '--debounce-ms', '50']);
    expect(warnings).toEqual([
      'warning: --resync-seconds is deprecated: use --resync-interval\n',
      'warning: --debounce-ms is deprecated: use --debounce-window\n',
    ]);
    expect(loadStarterConfig(flags, {})).toMatchObject({ resyncMs: 30_000, debounceMs: 50 });
    expect((await starterFlags(['--debounce-ms', '50', '--debounce-window', '1s'])).flags.debounceWindow).toBe('1s');
  });

  it('still reads the former STEWARD_RESYNC_SECONDS and STEWARD_DEBOUNCE_MS in their units, with a warning, unless the new ones are set', async () => {
    const load = (env: NodeJS.ProcessEnv) => withStderr(() => loadStarterConfig({}, env));
    const former = await load({ STEWARD_RESYNC_SECONDS: '30', STEWARD_DEBOUNCE_MS: '50' });
    expect(former.result).toMatchObject({ resyncMs: 30_000, debounceMs: 50 });
    expect(former.writes).toEqual([
      'warning: STEWARD_RESYNC_SECONDS is deprecated: use STEWARD_RESYNC_INTERVAL\n',
      'warning: STEWARD_DEBOUNCE_MS is deprecated: use STEWARD_DEBOUNCE_WINDOW\n',
    ]);
    const both = await load({ STEWARD_DEBOUNCE_MS: '50', STEWARD_DEBOUNCE_WINDOW: '1s' });
    expect(both).toMatchObject({ result: { debounceMs: 1_000 }, writes: [] });
    expect(() => loadStarterConfig({}, { STEWARD_DEBOUNCE_MS: '0.5' })).toThrow(
      '--debounce-window / STEWARD_DEBOUNCE_WINDOW: must be a duration such as 90s, 10m or 1h, got "0.5"',
    );
  });

  it('takes a flag over its variable, and the variable over the default', () => {
    const config = loadStarterConfig(
      { leaseName: 'from-flag', watchNamespace: 'team-a' },
      {
        STEWARD_LEASE_NAME: 'from-env',
        STEWARD_LEASE_NAMESPACE: 'steward',
        STEWARD_RESYNC_INTERVAL: '30s',
        TEMPORAL_ADDRESS: 'temporal:7233',
        STEWARD_IDENTITY: 'pod-1',
      },
    );
    expect(config).toMatchObject({
      lease: { name: 'from-flag', namespace: 'steward' },
      watchNamespace: 'team-a',
      resyncMs: 30_000,
      identity: 'pod-1',
      temporal: { address: 'temporal:7233' },
    });
  });

  it.each<[string, Record<string, string>, string | RegExp]>([
    [
      'a runtime class must be a Kubernetes name',
      { peerPodRuntimeClasses: 'kata-remote,Kata_Remote' },
      /--peer-pod-runtime-classes \/ STEWARD_PEERPOD_RUNTIME_CLASSES: .*Kata_Remote/,
    ],
    [
      'a resync of 0 would re-list in a loop',
      { resyncInterval: '0' },
      '--resync-interval / STEWARD_RESYNC_INTERVAL: must be at least 1s',
    ],
    [
      'the debounce is a duration with its unit',
      { debounceWindow: '0.5s' },
      '--debounce-window / STEWARD_DEBOUNCE_WINDOW: must be a duration such as 90s, 10m or 1h, got "0.5s"',
    ],
    [
      'a Lease name must be a Kubernetes name',
      { leaseName: 'Steward_Starter' },
      /--lease-name \/ STEWARD_LEASE_NAME: must be a Kubernetes name/,
    ],
    ['an empty identity is refused', { identity: '' }, '--identity / STEWARD_IDENTITY: must not be empty'],
    [
      'a kubeconfig that cannot be read',
      { kubeconfig: '/nonexistent/kubeconfig' },
      '--kubeconfig / KUBECONFIG: cannot read file "/nonexistent/kubeconfig"',
    ],
    [
      'an unknown log level lists the levels',
      { logLevel: 'loud' },
      '--log-level / STEWARD_LOG_LEVEL: must be one of trace, debug, info, warn, error',
    ],
    [
      'a sweep interval under a minute',
      { sweepInterval: '30s' },
      '--sweep-interval / STEWARD_SWEEP_INTERVAL: must be at least 1m',
    ],
    [
      'a grace period needs its unit',
      { sweepGrace: '10' },
      '--sweep-grace / STEWARD_SWEEP_GRACE: must be a duration such as 90s, 10m or 1h, got "10"',
    ],
    [
      'a mass-deletion share over 1 (it is a share of all Translations)',
      { massDeletionShare: '50' },
      '--mass-deletion-share / STEWARD_MASS_DELETION_SHARE: must be at most 1',
    ],
    [
      'a mass-deletion share that is not a number',
      { massDeletionShare: 'half' },
      /--mass-deletion-share \/ STEWARD_MASS_DELETION_SHARE: /,
    ],
    [
      'an unknown sweep backend',
      { sweepBackends: 'cloud,aws' },
      /--sweep-backends \/ STEWARD_SWEEP_BACKENDS: must be a comma-separated list of cloud, midonet, or none/,
    ],
    [
      'an installation of something else than MidoNet and peer pods',
      { backends: 'midonet,cloud' },
      '--backends / STEWARD_BACKENDS: must be peerpods, midonet, or both comma-separated (peerpods,midonet); got "midonet,cloud"',
    ],
    [
      'a MidoNet sweep in a peer-pods-only installation (it would fail on every tick)',
      { backends: 'peerpods', sweepBackends: 'cloud,midonet' },
      '--sweep-backends / STEWARD_SWEEP_BACKENDS: midonet is not swept here: STEWARD_BACKENDS does not name midonet',
    ],
    [
      'a cloud sweep in a MidoNet-only installation (no cloud there)',
      { backends: 'midonet', sweepBackends: 'cloud' },
      '--sweep-backends / STEWARD_SWEEP_BACKENDS: cloud is not swept here: STEWARD_BACKENDS does not name peerpods',
    ],
    [
      'a bad Temporal address is checked by the worker rules',
      { address: 'nowhere' },
      /--address \/ TEMPORAL_ADDRESS: must be host:port/,
    ],
  ])('%s', (_sentence, flags, expected) => {
    expect(() => loadStarterConfig(flags, {})).toThrow(expected);
  });

  it.each([
    ['peerpods', ['peerpods'], ['cloud']],
    ['midonet', ['midonet'], ['midonet']],
    ['peerpods,midonet', ['midonet', 'peerpods'], ['cloud', 'midonet']],
  ])(
    'STEWARD_BACKENDS=%s: installs %j, and the scheduled sweep covers %j unless told otherwise',
    (text, backends, swept) => {
      const config = loadStarterConfig({}, { STEWARD_BACKENDS: text });
      expect([config.backends, config.sweep.backends]).toEqual([backends, swept]);
      expect(loadStarterConfig({}, { STEWARD_BACKENDS: text, STEWARD_SWEEP_BACKENDS: 'none' }).sweep.backends).toEqual(
        [],
      );
    },
  );

  it('reports every problem at once, Temporal and starter alike', () => {
    expect(() => loadStarterConfig({ address: 'nowhere', resyncInterval: 'often' }, {})).toThrow(
      /--address \/ TEMPORAL_ADDRESS[^]*--resync-interval \/ STEWARD_RESYNC_INTERVAL/,
    );
  });
});
