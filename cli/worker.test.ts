import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cloudSettings } from '../activities/cloud/config';
import { redactedActivities } from '../activities/config';
import { redactedProcess } from '../worker/config';
import { loadTemporalConfig } from '../platform/temporal-config';
import { loadWorkerConfig, redacted, workerSettings } from './worker';
import { ConfigError, flagOf, hasFlag, type Flags, type Setting } from '../platform/settings';

const dir = mkdtempSync(join(tmpdir(), 'steward-config-'));
const pem = (name: string) => {
  const path = join(dir, name);
  writeFileSync(path, '-----BEGIN TEST-----\n');
  return path;
};
const cert = pem('client.pem');
const key = pem('client.key');
const ca = pem('ca.pem');

/** A complete MidoNet connection, as its four variables give it. */
const midonetEnv = {
  MIDONET_API_URL: 'http://127.0.0.1:8181/midonet-api',
  MIDONET_USERNAME: 'admin',
  MIDONET_PASSWORD: 'pw-456',
  MIDONET_PROJECT: 'admin',
};

/** The same connection under midonet-kubernetes' names (its Deployment's environment, envconfig prefix MIDONETKUBE_). */
const midonetKubeEnv = {
  MIDONETKUBE_MIDONET_API: midonetEnv.MIDONET_API_URL,
  MIDONETKUBE_MIDONET_USERNAME: midonetEnv.MIDONET_USERNAME,
  MIDONETKUBE_MIDONET_PASSWORD: midonetEnv.MIDONET_PASSWORD,
  MIDONETKUBE_MIDONET_PROJECT: midonetEnv.MIDONET_PROJECT,
};

function issues(flags: Flags, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadWorkerConfig(flags, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('worker configuration', () => {
  it('defaults to the local server, the steward task queue, 100 cached workflows and port 9464, with no TLS and no MidoNet', () => {
    const config = loadWorkerConfig({}, {});
    expect(config.temporal).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'default',
      tls: undefined,
      apiKey: undefined,
      taskQueue: 'steward',
    });
    expect(config.concurrency).toEqual({
      maxConcurrentWorkflowTaskExecutions: 20,
      maxConcurrentActivityTaskExecutions: 50,
      maxConcurrentLocalActivityExecutions: 50,
      maxCachedWorkflows: 100,
    });
    expect(config.http).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(config.midonet).toBeUndefined();
    expect(config.temporalUiUrl).toBeUndefined();
    expect(config.rateLimits.midonetActivitiesPerSecond).toBeUndefined();
    expect(config.heapGrowthPercent).toBe(50);
  });

  it('takes as many workflow task slots as cached workflows when the cache is lowered below 20 and no slots are given', () => {
    const slots = (env: NodeJS.ProcessEnv) => loadWorkerConfig({}, env).concurrency.maxConcurrentWorkflowTaskExecutions;
    expect(slots({ STEWARD_MAX_CACHED_WORKFLOWS: '10' })).toBe(10);
    expect(slots({ STEWARD_MAX_CACHED_WORKFLOWS: '0' })).toBe(20);
    expect(slots({ STEWARD_MAX_CACHED_WORKFLOWS: '10', STEWARD_MAX_CONCURRENT_WORKFLOW_TASKS: '4' })).toBe(4);
  });

  it("bounds the heap's growth between collections at 0 (V8's own) to 300 percent, a whole number", () => {
    expect(loadWorkerConfig({}, { STEWARD_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadWorkerConfig({ heapGrowthPercent: '25' }, {}).heapGrowthPercent).toBe(25);
    expect(issues({}, { STEWARD_HEAP_GROWTH_PERCENT: '301' })).toEqual([
      '--heap-growth-percent / STEWARD_HEAP_GROWTH_PERCENT: must be at most 300',
    ]);
    expect(issues({ heapGrowthPercent: '1.5' })).toEqual([expect.stringContaining('--heap-growth-percent')]);
  });

  it('takes the Temporal UI address, for the link written on the objects it writes, from its flag or variable', () => {
    expect(loadWorkerConfig({}, { STEWARD_TEMPORAL_UI_URL: 'http://ui:8080' }).temporalUiUrl).toBe('http://ui:8080');
    expect(loadWorkerConfig({ temporalUiUrl: 'https://ui' }, {}).temporalUiUrl).toBe('https://ui');
  });

  it('takes a flag over the environment variable, and the variable over the default', () => {
    expect(loadWorkerConfig({ address: 'flag:1' }, { TEMPORAL_ADDRESS: 'env:2' }).temporal.address).toBe('flag:1');
    expect(loadWorkerConfig({}, { TEMPORAL_ADDRESS: 'env:2' }).temporal.address).toBe('env:2');
  });

  it('reads every non-secret setting from its flag, named --<kebab key>', () => {
    expect(flagOf('maxCachedWorkflows', workerSettings.maxCachedWorkflows)).toBe('--max-cached-workflows <n>');
    expect(flagOf('tls', workerSettings.tls)).toBe('--tls');
  });

  it('builds mTLS from a certificate, its key and a CA, with the server name', () => {
    const config = loadWorkerConfig(
      { tlsCertPath: cert, tlsKeyPath: key, tlsCaPath: ca, tlsServerName: 'temporal.example' },
      {},
    );
    expect(config.temporal.tls).toEqual({
      clientCertFile: cert,
      clientKeyFile: key,
      caFile: ca,
      serverName: 'temporal.example',
    });
  });

  it("reads mTLS files under Temporal's own variable names, and Steward's former ones, never two different at once", () => {
    const temporalNames = {
      TEMPORAL_TLS_CLIENT_CERT_PATH: cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: ca,
    };
    const expected = { clientCertFile: cert, clientKeyFile: key, caFile: ca };
    expect(loadWorkerConfig({}, temporalNames).temporal.tls).toEqual(expected);
    const former = { TEMPORAL_TLS_CERT: cert, TEMPORAL_TLS_KEY: key, TEMPORAL_TLS_CA: ca };
    expect(loadWorkerConfig({}, former).temporal.tls).toEqual(expected);
    expect(() => loadWorkerConfig({}, { ...temporalNames, TEMPORAL_TLS_CA: cert })).toThrow(
      "TEMPORAL_TLS_SERVER_CA_CERT_PATH and TEMPORAL_TLS_CA (Steward's former name for it) are both set",
    );
  });

  it('turns TLS on when an API key is given, with no TLS file', () => {
    const config = loadWorkerConfig({}, { TEMPORAL_API_KEY: 'secret-key' });
    expect(config.temporal.tls).toEqual({});
    expect(config.temporal.apiKey).toBe('secret-key');
  });

  it('builds the MidoNet connection from the four variables', () => {
    expect(loadWorkerConfig({}, midonetEnv).midonet).toEqual({
      baseUrl: midonetEnv.MIDONET_API_URL,
      username: 'admin',
      password: 'pw-456',
      project: 'admin',
    });
  });

  it.each([
    ['on by default, as midonet-kubernetes runs it', {}, {}, true],
    ['off by its variable', {}, { STEWARD_NODE_ANNOTATOR: 'false' }, false],
    ['off by its flag', { nodeAnnotator: 'false' }, {}, false],
    [
      "off when midonet-kubernetes' MIDONETKUBE_ENABLED_CONTROLLERS leaves nodeannotator out",
      {},
      { MIDONETKUBE_ENABLED_CONTROLLERS: 'node,pod,service,endpoints,pusher' },
      false,
    ],
    [
      "on when midonet-kubernetes' list names it",
      {},
      { MIDONETKUBE_ENABLED_CONTROLLERS: 'node,pod,service,endpoints,pusher,nodeannotator' },
      true,
    ],
    [
      "Steward's own switch over midonet-kubernetes' list",
      {},
      { MIDONETKUBE_ENABLED_CONTROLLERS: 'pusher', STEWARD_NODE_ANNOTATOR: 'true' },
      true,
    ],
  ] as const)('runs the node annotator %s', (_, flags, env, on) => {
    expect(loadWorkerConfig(flags, env).nodeAnnotator).toBe(on);
  });

  it('refuses a node annotator switch that is not true or false, naming it', () => {
    expect(() => loadWorkerConfig({}, { STEWARD_NODE_ANNOTATOR: 'yes' })).toThrow(
      /--node-annotator \/ STEWARD_NODE_ANNOTATOR: must be true or false/,
    );
  });

  it("takes midonet-kubernetes' MidoNet variables as they are, and either name where both agree", () => {
    const connection = loadWorkerConfig({}, midonetEnv).midonet;
    expect(loadWorkerConfig({}, midonetKubeEnv).midonet).toEqual(connection);
    expect(loadWorkerConfig({}, { ...midonetKubeEnv, ...midonetEnv }).midonet).toEqual(connection);
    // A flag wins over both variables, as over any variable.
    expect(loadWorkerConfig({ midonetProject: 'p' }, midonetKubeEnv).midonet?.project).toBe('p');
  });

  it.each([
    ['MIDONET_API_URL', 'MIDONETKUBE_MIDONET_API', 'http://other:8181/midonet-api'],
    ['MIDONET_USERNAME', 'MIDONETKUBE_MIDONET_USERNAME', 'other'],
    ['MIDONET_PASSWORD', 'MIDONETKUBE_MIDONET_PASSWORD', 'other-password'],
    ['MIDONET_PROJECT', 'MIDONETKUBE_MIDONET_PROJECT', 'other'],
  ])('refuses %s and its alias %s set to different values, naming both and showing neither', (own, alias, value) => {
    const found = issues({}, { ...midonetKubeEnv, ...midonetEnv, [alias]: value });
    expect(found).toEqual([
      `${own} and ${alias} (midonet-kubernetes' name for it) are both set, to different values: set one of them`,
    ]);
    expect(found.join()).not.toContain(value);
  });

  it("refuses MIDONET_TENANT, naming the project's setting and the tenant's (upstream's tenant is not the project)", () => {
    expect(issues({}, { ...midonetEnv, MIDONET_TENANT: 'admin' })).toEqual([
      "MIDONET_TENANT: is not read: the MidoNet project (X-Auth-Project) is MIDONET_PROJECT (midonet-kubernetes' MIDONETKUBE_MIDONET_PROJECT); the tenant of the cluster's objects is MIDONETKUBE_TENANT",
    ]);
  });

  it('takes the MidoNet rate limit as a positive number per second', () => {
    expect(loadWorkerConfig({ midonetActivitiesPerSecond: '12.5' }, {}).rateLimits.midonetActivitiesPerSecond).toBe(
      12.5,
    );
  });

  it('takes the task queue from --task-queue or STEWARD_TASK_QUEUE, for the worker and every command alike', () => {
    expect(loadWorkerConfig({ taskQueue: 'from-flag' }, { STEWARD_TASK_QUEUE: 'from-env' }).temporal.taskQueue).toBe(
      'from-flag',
    );
    expect(loadTemporalConfig({}, { STEWARD_TASK_QUEUE: 'from-env' }).taskQueue).toBe('from-env');
  });

  it('prefixes the task queue with the cluster ID (STEWARD_CLUSTER_ID), which every command reads the same', () => {
    expect(loadWorkerConfig({ clusterId: 'prod-eu' }, {}).temporal).toMatchObject({
      clusterId: 'prod-eu',
      taskQueue: 'prod-eu/steward',
    });
    expect(loadTemporalConfig({}, { STEWARD_CLUSTER_ID: 'east', STEWARD_TASK_QUEUE: 'q' })).toMatchObject({
      clusterId: 'east',
      taskQueue: 'east/q',
    });
    expect(loadTemporalConfig({}, {})).not.toHaveProperty('clusterId');
  });

  it('runs cloud activities only when a provider is given, by flag or by variable, with the cloud settings as flags too', () => {
    expect(loadWorkerConfig({}, {}).cloud).toBeUndefined();
    expect(
      loadWorkerConfig({ cloudProvider: 'libvirt', libvirtUri: 'qemu+ssh://host/system' }, {}).cloud,
    ).toMatchObject({ provider: 'libvirt', libvirt: { uri: 'qemu+ssh://host/system' } });
    expect(loadWorkerConfig({}, { STEWARD_CLOUD_PROVIDER: 'libvirt', STEWARD_PODVM_VCPUS: '2' }).cloud).toMatchObject({
      provider: 'libvirt',
      libvirt: { vcpus: 2 },
    });
  });

  describe('STEWARD_BACKENDS', () => {
    const libvirt = { STEWARD_CLOUD_PROVIDER: 'libvirt', LIBVIRT_URI: 'qemu+ssh://host/system' };

    it('peerpods: needs no MidoNet setting, and MidoNet ones given anyway are ignored (named, for one log line), no MidoNet activities', () => {
      const alone = loadWorkerConfig({}, { STEWARD_BACKENDS: 'peerpods', ...libvirt });
      expect([alone.backends, alone.midonet, alone.ignored]).toEqual([['peerpods'], undefined, []]);
      expect(alone.cloud).toMatchObject({ provider: 'libvirt' });
      const shared = loadWorkerConfig({}, { STEWARD_BACKENDS: 'peerpods', ...libvirt, ...midonetKubeEnv });
      expect([shared.midonet, shared.ignored]).toEqual([
        undefined,
        ['MIDONET_API_URL', 'MIDONET_USERNAME', 'MIDONET_PASSWORD', 'MIDONET_PROJECT'],
      ]);
    });

    it('midonet: needs no cloud, runs no cloud activities, and ignores the cloud settings given', () => {
      const config = loadWorkerConfig({}, { STEWARD_BACKENDS: 'midonet', ...midonetEnv, ...libvirt });
      expect([config.cloud, config.ignored]).toEqual([undefined, ['STEWARD_CLOUD_PROVIDER', 'LIBVIRT_URI']]);
      expect(config.midonet).toMatchObject({ baseUrl: midonetEnv.MIDONET_API_URL });
    });

    it.each<[string, NodeJS.ProcessEnv, string[]]>([
      [
        'peerpods without a cloud provider',
        { STEWARD_BACKENDS: 'peerpods' },
        ['--cloud-provider / STEWARD_CLOUD_PROVIDER: is required with --backends / STEWARD_BACKENDS peerpods'],
      ],
      [
        'midonet without the MidoNet API',
        { STEWARD_BACKENDS: 'midonet' },
        ['--midonet-url / MIDONET_API_URL: is required with --backends / STEWARD_BACKENDS midonet'],
      ],
      [
        'midonet with the API but no credentials',
        { STEWARD_BACKENDS: 'midonet', MIDONET_API_URL: midonetEnv.MIDONET_API_URL },
        [
          '--midonet-username / MIDONET_USERNAME: is required with --midonet-url / MIDONET_API_URL',
          'MIDONET_PASSWORD: is required with --midonet-url / MIDONET_API_URL',
        ],
      ],
      [
        'a backend it does not know',
        { STEWARD_BACKENDS: 'peerpods,cilium' },
        [
          '--backends / STEWARD_BACKENDS: must be peerpods, midonet, or both comma-separated (peerpods,midonet); got "peerpods,cilium"',
        ],
      ],
    ])('refuses %s, naming the setting', (_sentence, env, expected) => {
      expect(issues({}, env)).toEqual(expected);
    });

    it('unset: each backend runs where its settings are given, as before the setting', () => {
      const config = loadWorkerConfig({}, { ...midonetEnv });
      expect([config.backends, config.cloud, config.ignored]).toEqual([undefined, undefined, []]);
      expect(config.midonet).toBeDefined();
    });
  });

  it('reads the Temporal settings alone for the operator commands, ignoring worker variables', () => {
    expect(loadTemporalConfig({ temporalNamespace: 'ops' }, { STEWARD_HTTP_PORT: 'not a port' })).toEqual({
      address: '127.0.0.1:7233',
      namespace: 'ops',
      tls: undefined,
      apiKey: undefined,
      taskQueue: 'steward',
    });
  });

  it.each<[string, Flags, NodeJS.ProcessEnv, RegExp]>([
    [
      'a client certificate without its key names the key setting',
      { tlsCertPath: cert },
      {},
      /^--tls-key-path \/ TEMPORAL_TLS_CLIENT_KEY_PATH: is required with a client certificate \(--tls-cert-path \/ TEMPORAL_TLS_CLIENT_CERT_PATH\)$/,
    ],
    [
      'a client key without its certificate names the certificate setting',
      {},
      { TEMPORAL_TLS_KEY: key },
      /^--tls-cert-path \/ TEMPORAL_TLS_CLIENT_CERT_PATH: is required/,
    ],
    [
      'a certificate file that cannot be read is named with its path',
      { tlsCertPath: join(dir, 'missing.pem'), tlsKeyPath: key },
      {},
      /^--tls-cert-path \/ TEMPORAL_TLS_CLIENT_CERT_PATH: cannot read file ".*missing\.pem"$/,
    ],
    [
      'a port that is not a number is rejected with what was given',
      {},
      { STEWARD_HTTP_PORT: 'http' },
      /^--http-port \/ STEWARD_HTTP_PORT: must be a whole number, got "http"$/,
    ],
    [
      'a port above 65535 is rejected',
      { httpPort: '70000' },
      {},
      /^--http-port \/ STEWARD_HTTP_PORT: must be at most 65535$/,
    ],
    [
      'an address without a port is rejected',
      { address: 'temporal.example' },
      {},
      /^--address \/ TEMPORAL_ADDRESS: must be host:port/,
    ],
    [
      'TLS switched off explicitly contradicts an API key',
      { tls: false },
      { TEMPORAL_API_KEY: 'k' },
      /^--tls \/ TEMPORAL_TLS: cannot be false with an API key/,
    ],
    [
      'TEMPORAL_TLS accepts only true or false',
      {},
      { TEMPORAL_TLS: 'yes' },
      /^--tls \/ TEMPORAL_TLS: must be true or false$/,
    ],
    [
      'a MidoNet URL needs a user, named by its flag and variable',
      {},
      { MIDONET_API_URL: 'http://m/api', MIDONET_PASSWORD: 'pw' },
      /^--midonet-username \/ MIDONET_USERNAME: is required with --midonet-url \/ MIDONET_API_URL$/,
    ],
    [
      'a MidoNet URL needs a password, named by its variable only (it has no flag)',
      {},
      { MIDONET_API_URL: 'http://m/api', MIDONET_USERNAME: 'u' },
      /^MIDONET_PASSWORD: is required/,
    ],
    [
      'the MidoNet URL must be http(s)',
      { midonetUrl: 'ftp://m' },
      { MIDONET_USERNAME: 'u', MIDONET_PASSWORD: 'p' },
      /^--midonet-url \/ MIDONET_API_URL: must be an http\(s\) URL$/,
    ],
    [
      'the Temporal UI address must be http(s)',
      {},
      { STEWARD_TEMPORAL_UI_URL: 'temporal-ui:8080' },
      /^--temporal-ui-url \/ STEWARD_TEMPORAL_UI_URL: must be an http\(s\) URL$/,
    ],
    [
      'a cluster ID must be a DNS label',
      { clusterId: 'Prod_EU' },
      {},
      /^--cluster-id \/ STEWARD_CLUSTER_ID: must be a DNS label of at most 40 characters .*got "Prod_EU"$/,
    ],
    [
      'a cluster ID cannot be a word workflow ids begin with',
      {},
      { STEWARD_CLUSTER_ID: 'pod' },
      /^--cluster-id \/ STEWARD_CLUSTER_ID: must be .*none of node, pod, .*got "pod"$/,
    ],
    [
      'a zero rate limit is rejected',
      { midonetActivitiesPerSecond: '0' },
      {},
      /^--midonet-activities-per-second \/ STEWARD_MIDONET_ACTIVITIES_PER_SECOND: must be more than 0$/,
    ],
    [
      'a rate limit that is not a number is rejected',
      { midonetActivitiesPerSecond: 'fast' },
      {},
      /STEWARD_MIDONET_ACTIVITIES_PER_SECOND: must be a number$/,
    ],
    [
      'fewer than two workflow task slots is rejected (the SDK needs a sticky and a normal poller)',
      { maxConcurrentWorkflowTasks: '1' },
      {},
      /^--max-concurrent-workflow-tasks \/ STEWARD_MAX_CONCURRENT_WORKFLOW_TASKS: must be at least 2$/,
    ],
    [
      'more workflow task slots than cached workflows is rejected (the SDK would lower them without a word)',
      { maxConcurrentWorkflowTasks: '60' },
      { STEWARD_MAX_CACHED_WORKFLOWS: '50' },
      /^--max-concurrent-workflow-tasks \/ STEWARD_MAX_CONCURRENT_WORKFLOW_TASKS: must be at most --max-cached-workflows \/ STEWARD_MAX_CACHED_WORKFLOWS \(50\): each task's workflow is held in that cache$/,
    ],
    [
      'a cache of one workflow is rejected (the SDK needs a sticky and a normal poller)',
      {},
      { STEWARD_MAX_CACHED_WORKFLOWS: '1' },
      /^--max-cached-workflows \/ STEWARD_MAX_CACHED_WORKFLOWS: must be 0 \(no cache\) or at least 2$/,
    ],
    [
      'an unknown log level lists the accepted ones',
      {},
      { STEWARD_LOG_LEVEL: 'loud' },
      /^--log-level \/ STEWARD_LOG_LEVEL: must be one of trace, debug, info, warn, error$/,
    ],
    [
      'a kubeconfig that cannot be read is rejected',
      {},
      { KUBECONFIG: join(dir, 'nope') },
      /^--kubeconfig \/ KUBECONFIG: cannot read file/,
    ],
  ])('%s', (_sentence, flags, env, expected) => {
    const found = issues(flags, env);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(expected);
  });

  it('reports every problem at once, one line each', () => {
    expect(() => loadWorkerConfig({ httpPort: 'x', address: 'nope' }, {})).toThrow(
      /invalid configuration:\n {2}--address .*\n {2}--http-port /,
    );
  });

  it('hides the API key and the MidoNet password in the configuration it logs', () => {
    const env = { ...midonetEnv, TEMPORAL_API_KEY: 'key-123' };
    const logged = JSON.stringify(redacted(loadWorkerConfig({}, env)));
    expect(logged).not.toMatch(/key-123|pw-456/);
    expect(logged).toContain('"apiKey":"[redacted]"');
    expect(redacted(loadWorkerConfig({}, {})).temporal.apiKey).toBeUndefined();
  });

  it.each([
    ['the worker process', redactedProcess],
    ['the activities', redactedActivities],
  ] as const)('%s, handed the whole configuration, log their own part of it with no secret', (_part, redactedPart) => {
    const env = { ...midonetEnv, TEMPORAL_API_KEY: 'key-123' };
    expect(JSON.stringify(redactedPart(loadWorkerConfig({}, env)))).not.toMatch(/key-123|pw-456/);
  });

  it('never takes a secret from a flag, since a command line shows in ps, but the API key as temporal --api-key', () => {
    expect(loadWorkerConfig({ midonetPassword: 'from-flag' }, midonetEnv).midonet?.password).toBe('pw-456');
    expect(loadWorkerConfig({ apiKey: 'from-flag' }, {}).temporal.apiKey).toBe('from-flag');
  });
});

describe('the README configuration table', () => {
  it('lists every setting with its flag and variable, so neither drifts from config.ts', () => {
    const readme = readFileSync(join(__dirname, '..', 'worker', 'README.md'), 'utf8');
    for (const [key, setting] of Object.entries({ ...workerSettings, ...cloudSettings }) as [string, Setting][]) {
      const flag = hasFlag(setting) ? `\`${flagOf(key, setting)}\`` : '—';
      expect(readme).toContain(
        `| ${flag} | \`${setting.env}\` | ${setting.default === undefined ? '' : `\`${setting.default}\``} |`,
      );
    }
  });
});
