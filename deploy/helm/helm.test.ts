// The Helm chart against the kustomize base it mirrors: `helm lint` passes, and `helm template` with the values of
// each setup renders the objects `kustomize build` renders for that setup's overlay, field for field, but for the
// differences listed in `normalize` (deploy/README.md, "Install with Helm", lists them for users).
import * as k8s from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DASHBOARD_FILE, RULE_FILE } from '../monitoring/rules';
import { ensureHelm, CHART_DIR, helmTemplate, runHelm, valuesFile } from '../testing/helm';
import { ensureKustomize, kustomizeBuild } from '../testing/kustomize';
import { MIDONET_PROFILE, PEERPODS_ONLY, profileOf } from '../testing/profiles';
import { knownSettings } from '../testing/settings';

const deployDir = join(__dirname, '..');
/** The chart's peer-pods-only profile, as a user gives it (`-f values-peerpods.yaml`). */
const peerpodsValues = k8s.loadYaml<object>(readFileSync(join(CHART_DIR, 'values-peerpods.yaml'), 'utf8'));

/** Every option on, as far as they go together (an API key and mTLS at once is valid, if unusual). */
const everyOption = {
  image: {
    repository: 'registry.example.com/steward',
    tag: '0.2.0',
    pullPolicy: 'Always',
    pullSecrets: [{ name: 'r' }],
  },
  temporal: {
    address: 'temporal.example.com:7233',
    namespace: 'prod',
    apiKey: { secretName: 'steward-temporal', key: 'api-key' },
    tls: { secretName: 'steward-temporal-tls', ca: true, serverName: 'temporal.internal' },
  },
  midonet: {
    kubernetesEndpoint: { host: '10.0.0.9', port: 16443 },
    apiUrl: 'http://10.0.0.9:8181/midonet-api',
    username: 'steward',
    project: 'k8s-project',
    tenant: 'k8s',
    nodeAnnotator: false,
  },
  secretName: 'steward-secrets',
  cloud: {
    provider: 'aws',
    aws: { region: 'eu-west-1', podvmImage: 'ami-1', instanceType: 't3.small', subnetId: 's-1', securityGroupIds: 'g' },
    sshKeySecret: '',
  },
  peerPodRuntimeClasses: 'kata-remote',
  clusterId: 'prod-eu',
  extraConfig: { STEWARD_MAX_CACHED_WORKFLOWS: '100' },
  worker: { replicas: 3, resources: { requests: { cpu: '1', memory: '2Gi' } } },
  starter: { replicas: 1, lease: { namespace: 'steward', name: 'steward-leader' } },
  serviceMonitor: { enabled: true, interval: '15s', labels: { release: 'prometheus' } },
  prometheusRule: { enabled: true, labels: { release: 'prometheus' } },
  grafanaDashboard: { enabled: true, namespace: 'monitoring', labels: { grafana_dashboard: '1' } },
  serviceAccount: { annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/steward' } },
  podLabels: { team: 'network' },
  podAnnotations: { 'example.com/owner': 'network' },
  nodeSelector: { pool: 'system' },
  affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [] } },
  topologySpreadConstraints: [
    { maxSkew: 2, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
  ],
  priorityClassName: 'platform-high',
  extraEnv: [{ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/corp-ca/ca.crt' }],
  extraVolumes: [{ name: 'corp-ca', configMap: { name: 'corp-ca' } }],
  extraVolumeMounts: [{ name: 'corp-ca', mountPath: '/etc/corp-ca', readOnly: true }],
};

let helm: string;
let kustomize: string;
beforeAll(async () => {
  // Each built once per machine (a minute or two on 2 cores), then cached.
  [helm, kustomize] = await Promise.all([ensureHelm(), ensureKustomize()]);
}, 15 * 60_000);

describe('helm lint and the values schema', () => {
  it.each([
    ['the default values', {}],
    ['every option on', everyOption],
    ['values-peerpods.yaml', peerpodsValues],
  ])('passes with %s (--strict)', async (_, values) => {
    await expect(runHelm(helm, ['lint', '--strict', CHART_DIR, '--values', valuesFile(values)])).resolves.toMatch(
      /1 chart\(s\) linted, 0 chart\(s\) failed/,
    );
  });
  // install, upgrade and template check the values as lint does, and say why on stderr.
  it('refuses a misspelt value (values.schema.json closes every object)', async () => {
    await expect(helmTemplate(helm, { temporal: { adress: 'x:7233' } })).rejects.toThrow(
      /at '\/temporal': additional properties 'adress' not allowed/,
    );
  });
});

describe('helm package', () => {
  it("holds everything the chart renders (no file outside it, no symlink), and not the CRDs' kustomization", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-helm-package-'));
    const output = await runHelm(helm, ['package', CHART_DIR, '--destination', dir]);
    const archive = output.trim().split(' ').pop()!;
    const files = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' }).split('\n');
    expect(files).toEqual(
      expect.arrayContaining([
        'steward/crds/translations.midonet.org.yaml',
        'steward/crds/peerpods.confidentialcontainers.org.yaml',
        'steward/files/prometheus-rule.yaml',
      ]),
    );
    expect(files.filter((file) => file.endsWith('Kustomization'))).toEqual([]);
    const rendered = async (chart: string) =>
      runHelm(helm, ['template', 'steward', chart, '--include-crds', '--values', valuesFile(everyOption)]);
    expect(await rendered(archive)).toEqual(await rendered(CHART_DIR));
  });
});

const keyOf = (o: k8s.KubernetesObject) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
const byKey = (objects: k8s.KubernetesObject[]) => new Map(objects.map((o) => [keyOf(o), o]));
type Labelled = { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } };

/**
 * The differences allowed between the chart and the base, each undone here so the rest must be equal:
 * - no Namespace: helm installs into `--namespace … --create-namespace`, and owns no namespace it could delete;
 * - helm's labels: `helm.sh/chart` added, `app.kubernetes.io/managed-by: Helm` for kustomize;
 * - CRDs as they are in crds/ (helm applies that folder untemplated), without the base's labels;
 * - a `checksum/config` annotation on the pod templates, so a changed ConfigMap rolls the pods;
 * - the ServiceMonitor carries the release's labels besides the component's `app.kubernetes.io/name`;
 * - helm's hooks (the `helm test` Pod), which kustomize has no counterpart of: `helm template` renders them.
 */
const isHook = (o: k8s.KubernetesObject) => o.metadata?.annotations?.['helm.sh/hook'] !== undefined;

function normalize(rendered: k8s.KubernetesObject[], tool: 'helm' | 'kustomize'): k8s.KubernetesObject[] {
  const objects = structuredClone(rendered).filter((o) => o.kind !== 'Namespace' && !isHook(o));
  const relabel = (o: Labelled | undefined) => {
    const labels = o?.metadata?.labels;
    if (!labels) return;
    if (tool === 'helm') {
      expect([labels['app.kubernetes.io/managed-by'], labels['helm.sh/chart']]).toEqual(['Helm', 'steward-0.1.0']);
      delete labels['helm.sh/chart'];
      labels['app.kubernetes.io/managed-by'] = 'kustomize';
    }
  };
  for (const o of objects) {
    relabel(o);
    if (o.kind === 'CustomResourceDefinition') delete o.metadata!.labels;
    if (o.kind === 'ServiceMonitor' && tool === 'kustomize')
      Object.assign(o.metadata!.labels!, {
        'app.kubernetes.io/instance': 'steward',
        'app.kubernetes.io/part-of': 'steward',
        'app.kubernetes.io/version': '0.1.0',
        'app.kubernetes.io/managed-by': 'kustomize',
      });
    if (o.kind === 'Deployment') {
      const template = (o as k8s.V1Deployment).spec!.template;
      relabel(template);
      if (tool === 'helm') {
        expect(template.metadata!.annotations!['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
        delete template.metadata!.annotations!['checksum/config'];
      }
    }
  }
  return objects;
}

/** A kustomization of the base with a component, in a temporary folder (kustomize takes folders by relative path). */
function withComponent(component: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'steward-overlay-'));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `resources: [${relative(dir, join(deployDir, 'manifests'))}]\ncomponents: [${relative(dir, join(deployDir, component))}]\n`,
  );
  return dir;
}

const setups: { name: string; kustomization: () => string; values: object }[] = [
  { name: 'the base, with the default values', kustomization: () => join(deployDir, 'manifests'), values: {} },
  {
    name: 'the temporal-cloud overlay, with its address, namespace and API key Secret',
    kustomization: () => join(deployDir, 'overlays/temporal-cloud'),
    values: {
      temporal: {
        address: 'steward.a1b2c.tmprl.cloud:7233',
        namespace: 'steward.a1b2c',
        apiKey: { secretName: 'steward' },
      },
    },
  },
  {
    name: 'the self-hosted-mtls overlay, with the TLS Secret',
    kustomization: () => join(deployDir, 'overlays/self-hosted-mtls'),
    values: { temporal: { tls: { secretName: 'steward-temporal-tls' } } },
  },
  {
    name: 'the peerpods-only overlay, with values-peerpods.yaml',
    kustomization: () => join(deployDir, 'overlays/peerpods-only'),
    values: peerpodsValues,
  },
  {
    name: 'the servicemonitor component, with serviceMonitor.enabled',
    kustomization: () => withComponent('components/servicemonitor'),
    values: { serviceMonitor: { enabled: true } },
  },
];

describe.each(setups)('helm template equals kustomize build: $name', ({ kustomization, values }) => {
  it('renders the same objects, equal but for the listed differences', async () => {
    const [fromHelm, fromKustomize] = await Promise.all([
      helmTemplate(helm, values).then((objects) => byKey(normalize(objects, 'helm'))),
      kustomizeBuild(kustomize, kustomization()).then((objects) => byKey(normalize(objects, 'kustomize'))),
    ]);
    expect([...fromHelm.keys()].sort()).toEqual([...fromKustomize.keys()].sort());
    // One object at a time, so a failure names it.
    for (const [key, object] of fromKustomize) expect([key, fromHelm.get(key)]).toEqual([key, object]);
  });
});

describe('every option on', () => {
  let objects: Map<string, k8s.KubernetesObject>;
  beforeAll(async () => {
    objects = byKey(await helmTemplate(helm, everyOption));
  });
  const get = <T>(key: string) => objects.get(key) as T;

  it('gives only settings the worker or the starter reads, and those the values name', () => {
    const configMap = get<k8s.V1ConfigMap>('ConfigMap steward/steward');
    expect(Object.keys(configMap.data!).filter((key) => !knownSettings.has(key))).toEqual([]);
    expect(configMap.data).toEqual({
      TEMPORAL_ADDRESS: 'temporal.example.com:7233',
      TEMPORAL_NAMESPACE: 'prod',
      TEMPORAL_TLS_CLIENT_CERT_PATH: '/etc/steward/temporal-tls/tls.crt',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '/etc/steward/temporal-tls/tls.key',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/etc/steward/temporal-tls/ca.crt',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      KUBERNETES_SERVICE_HOST: '10.0.0.9',
      KUBERNETES_SERVICE_PORT: '16443',
      MIDONET_API_URL: 'http://10.0.0.9:8181/midonet-api',
      MIDONET_USERNAME: 'steward',
      MIDONET_PROJECT: 'k8s-project',
      MIDONETKUBE_TENANT: 'k8s',
      STEWARD_NODE_ANNOTATOR: 'false',
      STEWARD_CLOUD_PROVIDER: 'aws',
      AWS_REGION: 'eu-west-1',
      STEWARD_PODVM_IMAGE: 'ami-1',
      STEWARD_PODVM_INSTANCE_TYPE: 't3.small',
      AWS_SUBNET_ID: 's-1',
      AWS_SG_IDS: 'g',
      STEWARD_PEERPOD_RUNTIME_CLASSES: 'kata-remote',
      STEWARD_CLUSTER_ID: 'prod-eu',
      STEWARD_LEASE_NAMESPACE: 'steward',
      STEWARD_LEASE_NAME: 'steward-leader',
      STEWARD_MAX_CACHED_WORKFLOWS: '100',
    });
  });

  it('runs the image, Secrets, replicas and resources the values name, with no ssh key mount', () => {
    for (const [name, replicas] of [
      ['steward-worker', 3],
      ['steward-starter', 1],
    ] as const) {
      const deployment = get<k8s.V1Deployment>(`Deployment steward/${name}`);
      const pod = deployment.spec!.template.spec!;
      const container = pod.containers[0]!;
      expect([name, deployment.spec!.replicas]).toEqual([name, replicas]);
      expect([container.image, container.imagePullPolicy, pod.imagePullSecrets]).toEqual([
        'registry.example.com/steward:0.2.0',
        'Always',
        [{ name: 'r' }],
      ]);
      expect(deployment.metadata!.labels!['app.kubernetes.io/version']).toBe('0.2.0');
      // cloud-api-adaptor's Secret first (its AWS keys, for the worker's cloud calls), then Steward's own.
      const secrets = name === 'steward-worker' ? ['peer-pods-secret', 'steward-secrets'] : ['steward-secrets'];
      expect(container.envFrom?.map((from) => from.secretRef?.name).filter(Boolean)).toEqual(secrets);
      expect(container.envFrom?.[0]?.configMapRef).toEqual({ name: 'peer-pods-cm', optional: true });
      expect(container.env?.find((variable) => variable.name === 'TEMPORAL_API_KEY')?.valueFrom).toEqual({
        secretKeyRef: { name: 'steward-temporal', key: 'api-key' },
      });
      expect(pod.volumes?.map((volume) => volume.name)).toEqual(['tmp', 'temporal-tls', 'corp-ca']);
    }
    const worker = get<k8s.V1Deployment>('Deployment steward/steward-worker').spec!.template.spec!.containers[0]!;
    expect(worker.resources).toEqual({ requests: { cpu: '1', memory: '2Gi' }, limits: { memory: '2560Mi' } });
  });

  it("puts the values' service account annotations, pod labels and annotations, scheduling, env and volumes on both", () => {
    const account = get<k8s.V1ServiceAccount>('ServiceAccount steward/steward');
    expect(account.metadata?.annotations).toEqual(everyOption.serviceAccount.annotations);
    for (const name of ['steward-worker', 'steward-starter']) {
      const template = get<k8s.V1Deployment>(`Deployment steward/${name}`).spec!.template;
      const pod = template.spec!;
      const container = pod.containers[0]!;
      expect(template.metadata?.labels).toMatchObject({ team: 'network', 'app.kubernetes.io/name': 'steward' });
      expect(template.metadata?.annotations).toMatchObject({ 'example.com/owner': 'network' });
      expect({
        name,
        nodeSelector: pod.nodeSelector,
        affinity: pod.affinity,
        spread: pod.topologySpreadConstraints,
        priority: pod.priorityClassName,
        // The MidoNet profile's: every taint tolerated whatever the values say.
        tolerations: pod.tolerations,
      }).toEqual({
        name,
        nodeSelector: everyOption.nodeSelector,
        affinity: everyOption.affinity,
        spread: everyOption.topologySpreadConstraints,
        priority: 'platform-high',
        tolerations: [{ operator: 'Exists' }],
      });
      expect(container.env?.at(-1)).toEqual(everyOption.extraEnv[0]);
      expect(container.volumeMounts?.at(-1)).toEqual(everyOption.extraVolumeMounts[0]);
      expect(pod.volumes?.at(-1)).toEqual(everyOption.extraVolumes[0]);
    }
  });

  it('gives a peer-pods-only installation the tolerations and priority the values name, none of its own', async () => {
    const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' }];
    const pods = (await helmTemplate(helm, { midonet: { enabled: false }, tolerations, priorityClassName: 'p' }))
      .filter((o): o is k8s.V1Deployment => o.kind === 'Deployment')
      .map((d) => d.spec!.template.spec!);
    expect(pods.map((pod) => [pod.tolerations, pod.priorityClassName])).toEqual([
      [tolerations, 'p'],
      [tolerations, 'p'],
    ]);
  });

  it("grants the starter's own Lease, in its namespace", () => {
    const role = get<k8s.V1Role>('Role steward/steward-starter-lease');
    expect(role.rules?.find((rule) => rule.resourceNames)?.resourceNames).toEqual(['steward-leader']);
    expect(get<k8s.V1RoleBinding>('RoleBinding steward/steward-starter-lease').roleRef.name).toBe(
      'steward-starter-lease',
    );
  });

  it('renders the PrometheusRule from the one rule file, with the labels the values name', () => {
    const rule = get<k8s.KubernetesObject & { spec: unknown }>('PrometheusRule steward/steward');
    const source = k8s.loadYaml<{ spec: unknown }>(readFileSync(RULE_FILE, 'utf8'));
    expect(rule.spec).toEqual(source.spec);
    expect(rule.metadata?.labels).toMatchObject({ release: 'prometheus', 'app.kubernetes.io/instance': 'steward' });
    const monitor = get<Labelled & { spec: { endpoints: { interval: string }[] } }>('ServiceMonitor steward/steward');
    expect([monitor.metadata?.labels?.release, monitor.spec.endpoints[0]?.interval]).toEqual(['prometheus', '15s']);
  });

  it("ships the dashboard from its one file as a ConfigMap for Grafana's sidecar, where the values say", () => {
    const dashboard = get<k8s.V1ConfigMap>('ConfigMap monitoring/steward-dashboard');
    expect(dashboard.metadata?.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(dashboard.data).toEqual({ 'steward.json': readFileSync(DASHBOARD_FILE, 'utf8') });
  });

  it('leaves the NetworkPolicies out of a peer-pods-only installation when networkPolicy.enabled is false', async () => {
    const render = (networkPolicy: boolean) =>
      helmTemplate(helm, { midonet: { enabled: false }, networkPolicy: { enabled: networkPolicy } });
    expect((await render(true)).map((o) => o.kind)).toContain('NetworkPolicy');
    const kinds = (await render(false)).map((o) => o.kind);
    expect(kinds).not.toContain('NetworkPolicy');
    expect(kinds).toContain('Deployment');
  });
});

describe('the helm test Pod', () => {
  const render = async (values: object) => {
    const objects = await helmTemplate(helm, values);
    const pod = objects.find((o): o is k8s.V1Pod => o.kind === 'Pod' && isHook(o));
    const worker = objects.find(
      (o): o is k8s.V1Deployment => o.kind === 'Deployment' && /worker$/.test(o.metadata!.name!),
    );
    return { pod, worker: worker!.spec!.template };
  };

  it.each([
    ['the default values', {}],
    ['every option on', everyOption],
    ['values-peerpods.yaml', peerpodsValues],
  ])(
    'with %s: runs `steward check` from the worker’s image, ServiceAccount, network, environment and mounts',
    async (_, values) => {
      const { pod, worker } = await render(values);
      expect(pod?.metadata?.annotations).toEqual({
        'helm.sh/hook': 'test',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
      const [spec, workerSpec] = [pod!.spec!, worker.spec!];
      const [check, workerContainer] = [spec.containers[0]!, workerSpec.containers[0]!];
      expect(spec.containers).toHaveLength(1);
      // The image's entrypoint (node bin/steward.cjs), as for the worker, with the command's name.
      expect([check.command, check.args, workerContainer.command]).toEqual([undefined, ['check'], undefined]);
      expect(spec.restartPolicy).toBe('Never');
      const same = <T extends object>(o: T, keys: (keyof T)[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
      const podKeys: (keyof k8s.V1PodSpec)[] = [
        'serviceAccountName',
        'automountServiceAccountToken',
        'hostNetwork',
        'dnsPolicy',
        'priorityClassName',
        'tolerations',
        'nodeSelector',
        'affinity',
        'imagePullSecrets',
        'securityContext',
        'volumes',
      ];
      expect(same(spec, podKeys)).toEqual(same(workerSpec, podKeys));
      const containerKeys: (keyof k8s.V1Container)[] = [
        'image',
        'imagePullPolicy',
        'env',
        'envFrom',
        'volumeMounts',
        'securityContext',
      ];
      expect(same(check, containerKeys)).toEqual(same(workerContainer, containerKeys));
      // Not taken for a worker by its Service, PodDisruptionBudget or NetworkPolicy.
      expect(pod!.metadata!.labels!['app.kubernetes.io/component']).toBe('check');
    },
  );

  it('is left out with tests.enabled false', async () => {
    expect((await render({ tests: { enabled: false } })).pod).toBeUndefined();
  });

  it('takes its resources from tests.resources', async () => {
    const resources = { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '256Mi' } };
    expect((await render({ tests: { resources } })).pod!.spec!.containers[0]!.resources).toEqual(resources);
  });

  it("reaches out only where the worker's NetworkPolicy lets a worker, by a policy of its own made before it", async () => {
    const objects = await helmTemplate(helm, peerpodsValues);
    const policies = objects.filter((o): o is k8s.V1NetworkPolicy => o.kind === 'NetworkPolicy');
    const worker = policies.find((p) => !isHook(p) && /worker$/.test(p.metadata!.name!))!;
    const check = policies.find(isHook)!;
    const pod = objects.find((o): o is k8s.V1Pod => o.kind === 'Pod' && isHook(o))!;
    expect(check.spec!.egress).toEqual(worker.spec!.egress);
    expect(check.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(check.spec!.ingress).toEqual([]);
    // It selects the test Pod, and no worker.
    const selector = Object.entries(check.spec!.podSelector?.matchLabels ?? {});
    expect(selector.length).toBeGreaterThan(0);
    for (const [key, value] of selector) expect(pod.metadata!.labels![key]).toBe(value);
    expect(selector).toContainEqual(['app.kubernetes.io/component', 'check']);
    expect(check.metadata!.annotations).toMatchObject({ 'helm.sh/hook': 'test', 'helm.sh/hook-weight': '-1' });
    // With MidoNet the pods are on the host network, where no NetworkPolicy applies: none.
    expect((await helmTemplate(helm, {})).filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
  });
});

describe('STEWARD_BACKENDS from midonet.enabled and peerpods.enabled', () => {
  const configMapOf = (objects: k8s.KubernetesObject[]) =>
    objects.find((o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap')!.data!;

  it('MidoNet only (peerpods.enabled false): STEWARD_BACKENDS=midonet, no cloud setting, no ssh key mounted', async () => {
    const objects = await helmTemplate(helm, { peerpods: { enabled: false } });
    const data = configMapOf(objects);
    expect(data.STEWARD_BACKENDS).toBe('midonet');
    expect(
      Object.keys(data).filter((key) => /^(STEWARD_CLOUD|LIBVIRT|AWS|STEWARD_PODVM|STEWARD_PEERPOD)/.test(key)),
    ).toEqual([]);
    const worker = objects.find(
      (o): o is k8s.V1Deployment => o.kind === 'Deployment' && /worker/.test(o.metadata!.name!),
    )!;
    expect(worker.spec!.template.spec!.volumes?.map((v) => v.name)).toEqual(['tmp']);
  });

  it('both (the default): unset, as in the kustomize base; peer pods only: peerpods', async () => {
    expect(configMapOf(await helmTemplate(helm, {})).STEWARD_BACKENDS).toBeUndefined();
    expect(configMapOf(await helmTemplate(helm, peerpodsValues)).STEWARD_BACKENDS).toBe('peerpods');
  });

  it.each([
    ['both off', { midonet: { enabled: false }, peerpods: { enabled: false } }, /enable at least one/],
    [
      'peer pods only without a cloud provider',
      { ...peerpodsValues, cloud: { provider: '' } },
      /peerpods.enabled without MidoNet needs cloud.provider/,
    ],
  ])('refuses %s, saying why', async (_, values, why) => {
    await expect(helmTemplate(helm, values)).rejects.toThrow(why);
  });
});

// deploy/README.md, "The MidoNet profile": what pushes MidoNet never needs the network it programs, in the default
// renders of both; a peer-pods-only installation stays an ordinary one. profileOf reads what decides it.
describe.each([
  ['kustomize build of the base', () => kustomizeBuild(kustomize, join(deployDir, 'manifests'))],
  ['helm template with the default values', () => helmTemplate(helm, {})],
])('the MidoNet profile: %s', (_, render) => {
  it("runs both on the host network with the node's resolver, system-cluster-critical, tolerating every taint, replaced in place", async () => {
    const profile = profileOf(await render());
    expect([profile.pods, profile.rollout]).toEqual([MIDONET_PROFILE.pods, MIDONET_PROFILE.rollout]);
  });

  it('reaches the API server, Temporal and MidoNet by IP addresses, and has no NetworkPolicy to pretend with', async () => {
    const profile = profileOf(await render());
    expect(profile).toEqual(MIDONET_PROFILE);
    const configMap = (await render()).find((o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap')!;
    expect(Object.values(configMap.data!).filter((value) => /\.svc\b|\.cluster\.local\b/.test(value))).toEqual([]);
  });
});

describe.each([
  [
    'kustomize build of the peerpods-only overlay',
    () => kustomizeBuild(kustomize, join(deployDir, 'overlays/peerpods-only')),
  ],
  ['helm template with values-peerpods.yaml', () => helmTemplate(helm, peerpodsValues)],
])('peer pods only: %s', (_, render) => {
  it('runs ordinary pods on the pod network, with no MidoNet setting and with NetworkPolicies', async () => {
    const profile = profileOf(await render());
    // Temporal keeps the values' address in the chart; the overlay gives a Service name, as the pod network allows.
    expect({ ...profile, addresses: { ...profile.addresses, temporal: 'name' } }).toEqual(PEERPODS_ONLY);
  });
});
