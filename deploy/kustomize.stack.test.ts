// deploy/'s kustomize base and overlays as a user installs them: rendered by kustomize (what `kubectl apply -k`
// renders), applied with server-side apply to the stack's API server and read back. Every setting they give is one
// the worker or the starter reads; what each container ends up with (its ConfigMap, Secrets and mounted files, as
// the kubelet would give them) is accepted by the worker's and the starter's loaders and carries the overlay's
// Temporal connection; and the ServiceAccount may do what the worker and the starter do, and no more.
import * as k8s from '@kubernetes/client-node';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { loadStarterConfig } from '../starter/config';
import { waitFor } from '../test/support';
import { expectAccess } from './testing/access';
import { loadWorkerConfig } from '../cli/worker';
import { type TemporalConfig } from '../platform/temporal-config';
import { stackInfo } from './local/jest/stack-info';
import { ensureKustomize, kustomizeBuild } from './testing/kustomize';
import { admissionOf, controlRefusal, enforcing } from './testing/pod-security';
import { knownSettings } from './testing/settings';

const serviceAccount = 'system:serviceaccount:steward:steward';
const fieldManager = 'steward-deploy-test';

interface Case {
  name: string;
  dir: string;
  /** The MidoNet profile (the base, on the host network) or peer pods only (deploy/overlays/peerpods-only). */
  midonet: boolean;
  /** The Secrets the user creates for this setup (made-up values). */
  secrets: Record<string, Record<string, string>>;
  /** The Temporal connection both containers must end up with; `root` holds the containers' mounted files. */
  temporal: (root: string) => Partial<TemporalConfig>;
}

const midonetOnly = { steward: { MIDONET_PASSWORD: 'test-password' } };
const cases: Case[] = [
  {
    name: 'the base',
    dir: 'manifests',
    midonet: true,
    secrets: midonetOnly,
    temporal: () => ({
      address: '192.0.2.20:7233',
      namespace: 'default',
      tls: undefined,
      apiKey: undefined,
    }),
  },
  {
    name: 'the temporal-cloud overlay',
    dir: 'overlays/temporal-cloud',
    midonet: true,
    secrets: { steward: { ...midonetOnly.steward, TEMPORAL_API_KEY: 'test-api-key' } },
    // An API key implies TLS, with the system's CAs.
    temporal: () => ({
      address: 'steward.a1b2c.tmprl.cloud:7233',
      namespace: 'steward.a1b2c',
      apiKey: 'test-api-key',
      tls: {},
    }),
  },
  {
    name: 'the self-hosted-mtls overlay',
    dir: 'overlays/self-hosted-mtls',
    midonet: true,
    secrets: {
      ...midonetOnly,
      'steward-temporal-tls': { 'tls.crt': 'client certificate', 'tls.key': 'client key', 'ca.crt': 'server CA' },
    },
    temporal: (root) => {
      const file = (name: string) => join(root, '/etc/steward/temporal-tls', name);
      return {
        address: '192.0.2.20:7233',
        apiKey: undefined,
        tls: { clientCertFile: file('tls.crt'), clientKeyFile: file('tls.key'), caFile: file('ca.crt') },
      };
    },
  },
  {
    name: 'the peerpods-only overlay',
    dir: 'overlays/peerpods-only',
    midonet: false,
    secrets: {},
    temporal: () => ({ address: 'temporal-frontend.temporal:7233', tls: undefined, apiKey: undefined }),
  },
];

const permissions: [string, k8s.V1ResourceAttributes, boolean][] = [
  [
    'write Translations (the object workflows)',
    { group: 'midonet.org', resource: 'translations', verb: 'patch', namespace: 'default' },
    true,
  ],
  [
    'write Translation status (the pusher)',
    { group: 'midonet.org', resource: 'translations', subresource: 'status', verb: 'patch', namespace: 'default' },
    true,
  ],
  [
    'create PeerPods (peer pods)',
    { group: 'confidentialcontainers.org', resource: 'peerpods', verb: 'create', namespace: 'default' },
    true,
  ],
  [
    'delete PeerPods (the older ones a cloud-api-adaptor restart leaves)',
    { group: 'confidentialcontainers.org', resource: 'peerpods', verb: 'delete', namespace: 'default' },
    true,
  ],
  ['watch Pods (the starter)', { resource: 'pods', verb: 'watch' }, true],
  [
    "patch Endpoints (the starter replaces an operator's request by its result)",
    { resource: 'endpoints', verb: 'patch', namespace: 'default' },
    true,
  ],
  [
    'renew its Lease (the starter), in its own namespace',
    {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verb: 'update',
      namespace: 'steward',
      name: 'steward-starter',
    },
    true,
  ],
  ['not delete Pods', { resource: 'pods', verb: 'delete', namespace: 'default' }, false],
  ['not read Secrets', { resource: 'secrets', verb: 'get', namespace: 'default' }, false],
  [
    'not update another Lease',
    {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verb: 'update',
      namespace: 'kube-system',
      name: 'kube-controller-manager',
    },
    false,
  ],
];

let kubeConfig: k8s.KubeConfig;
let objectApi: k8s.KubernetesObjectApi;
let kustomize: string;
beforeAll(async () => {
  kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(stackInfo().kubernetes.kubeconfig);
  objectApi = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
  // Built once per machine (about a minute on 2 cores), then cached.
  kustomize = await ensureKustomize();
}, 15 * 60_000);

const keyOf = (o: k8s.KubernetesObject) =>
  `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
/** What this file created, in order; what was there before (the stack's CRDs) is left as it was. */
const created = new Map<string, k8s.KubernetesObject>();
const seen = new Set<string>();

async function apply(object: k8s.KubernetesObject): Promise<void> {
  const key = keyOf(object);
  if (!seen.has(key)) {
    seen.add(key);
    const exists = await objectApi
      .read({
        apiVersion: object.apiVersion!,
        kind: object.kind!,
        metadata: { name: object.metadata!.name!, namespace: object.metadata?.namespace },
      })
      .then(
        () => true,
        (error: unknown) => {
          if (error instanceof k8s.ApiException && error.code === 404) return false;
          throw error;
        },
      );
    if (!exists) created.set(key, object);
  }
  await objectApi.patch(object, undefined, undefined, fieldManager, true, k8s.PatchStrategy.ServerSideApply);
}

afterAll(async () => {
  for (const object of [...created.values()].reverse()) {
    await objectApi.delete(object).catch((error: unknown) => {
      if (!(error instanceof k8s.ApiException && error.code === 404)) throw error;
    });
  }
  // The namespace controller empties the namespace first; a next run on this stack must not meet it terminating.
  if (created.has('v1/Namespace//steward')) {
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    await waitFor(
      'namespace steward deleted',
      () =>
        core.readNamespace({ name: 'steward' }).then(
          () => false,
          (error: unknown) => error instanceof k8s.ApiException && error.code === 404,
        ),
      90_000,
    );
  }
}, 120_000);

const secretObject = (name: string, data: Record<string, string>): k8s.V1Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'steward' },
  data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')])),
});

/**
 * What the container of a Deployment (one each) is given, as the kubelet would give it: its environment from the
 * ConfigMaps, Secrets and fields it names, and its Secret volumes as files under `root` (a path inside a mount
 * becomes the same path under `root`). Fails as the kubelet would refuse to start it: a required Secret or key
 * that is missing.
 */
async function containerEnvironment(deployment: k8s.V1Deployment, root: string): Promise<Record<string, string>> {
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const namespace = deployment.metadata!.namespace!;
  const read = async (
    kind: 'ConfigMap' | 'Secret',
    name: string,
    optional = false,
  ): Promise<Record<string, string>> => {
    try {
      if (kind === 'ConfigMap') return (await core.readNamespacedConfigMap({ namespace, name })).data ?? {};
      const data = (await core.readNamespacedSecret({ namespace, name })).data ?? {};
      return Object.fromEntries(
        Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString()]),
      );
    } catch (error) {
      if (optional && error instanceof k8s.ApiException && error.code === 404) return {};
      throw error;
    }
  };
  const pod = deployment.spec!.template.spec!;
  const [container] = pod.containers;
  const env: Record<string, string> = {};
  for (const from of container!.envFrom ?? []) {
    if (from.configMapRef)
      Object.assign(env, await read('ConfigMap', from.configMapRef.name!, from.configMapRef.optional));
    if (from.secretRef) Object.assign(env, await read('Secret', from.secretRef.name!, from.secretRef.optional));
  }
  for (const variable of container!.env ?? []) {
    const { secretKeyRef, fieldRef } = variable.valueFrom ?? {};
    if (variable.value !== undefined) env[variable.name] = variable.value;
    else if (secretKeyRef) {
      const value = (await read('Secret', secretKeyRef.name!, secretKeyRef.optional))[secretKeyRef.key];
      if (value === undefined && !secretKeyRef.optional)
        throw new Error(`${variable.name}: Secret ${secretKeyRef.name} has no key ${secretKeyRef.key}`);
      if (value !== undefined) env[variable.name] = value;
    } else if (fieldRef?.fieldPath === 'metadata.name') env[variable.name] = `${deployment.metadata!.name}-0`;
    else throw new Error(`${variable.name}: a source this test does not resolve`);
  }
  const mounts = container!.volumeMounts ?? [];
  for (const mount of mounts) {
    const volume = pod.volumes?.find((candidate) => candidate.name === mount.name);
    if (volume?.emptyDir) continue; // empty at the start
    if (!volume?.secret?.secretName) throw new Error(`volume ${mount.name}: a source this test does not resolve`);
    const { secretName, optional } = volume.secret;
    for (const [file, content] of Object.entries(await read('Secret', secretName, optional))) {
      mkdirSync(join(root, mount.mountPath), { recursive: true });
      writeFileSync(join(root, mount.mountPath, file), content);
    }
  }
  for (const [key, value] of Object.entries(env))
    if (mounts.some((mount) => value.startsWith(`${mount.mountPath}/`))) env[key] = join(root, value);
  return env;
}

const levels = ['privileged', 'baseline', 'restricted'] as const;
const enforcingNamespaces = levels.map((level) => enforcing(level, `steward-pod-security-${level}`));
const namespaceOf = Object.fromEntries(levels.map((level) => [level, `steward-pod-security-${level}`])) as Record<
  (typeof levels)[number],
  string
>;

const deploymentsOf = (objects: k8s.KubernetesObject[]) =>
  objects.filter((o): o is k8s.V1Deployment => o.kind === 'Deployment');

/** The container's mount that holds `path` (the deepest one), as the kubelet resolves it. */
const mountOf = (container: k8s.V1Container, path: string) =>
  (container.volumeMounts ?? [])
    .filter((mount) => path === mount.mountPath || path.startsWith(`${mount.mountPath.replace(/\/$/, '')}/`))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];

describe.each(cases)('$name (deploy/$dir)', (c) => {
  let objects: k8s.KubernetesObject[];

  it("renders the base's objects, each once, giving only settings the worker or the starter reads", async () => {
    objects = await kustomizeBuild(kustomize, join(__dirname, c.dir));
    expect(objects.map((o) => `${o.kind} ${o.metadata?.namespace ?? ''}/${o.metadata?.name}`)).toEqual([
      'Namespace /steward',
      'CustomResourceDefinition /peerpods.confidentialcontainers.org',
      'CustomResourceDefinition /translations.midonet.org',
      'ServiceAccount steward/steward',
      'Role steward/steward-starter-lease',
      'ClusterRole /steward',
      'RoleBinding steward/steward-starter-lease',
      'ClusterRoleBinding /steward',
      'ConfigMap steward/steward',
      'Service steward/steward-starter',
      'Service steward/steward-worker',
      'Deployment steward/steward-starter',
      'Deployment steward/steward-worker',
      'PodDisruptionBudget steward/steward-starter',
      'PodDisruptionBudget steward/steward-worker',
      'ValidatingAdmissionPolicy /steward-operator-requests',
      'ValidatingAdmissionPolicyBinding /steward-operator-requests',
      // None on the host network, which NetworkPolicies do not reach.
      ...(c.midonet ? [] : ['NetworkPolicy steward/steward-starter', 'NetworkPolicy steward/steward-worker']),
    ]);
    const configMap = objects.find((o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap')!;
    const containers = objects
      .filter((o): o is k8s.V1Deployment => o.kind === 'Deployment')
      .flatMap((d) => d.spec!.template.spec!.containers);
    const given = [
      ...Object.keys(configMap.data ?? {}),
      ...containers.flatMap((container) => (container.env ?? []).map((variable) => variable.name)),
    ];
    expect(given.filter((key) => !knownSettings.has(key))).toEqual([]);
  });

  it('is applied to the API server (server-side apply), with the Secrets the setup needs', async () => {
    for (const object of objects) await apply(object);
    for (const [name, data] of Object.entries(c.secrets)) await apply(secretObject(name, data));
    const worker = await kubeConfig
      .makeApiClient(k8s.AppsV1Api)
      .readNamespacedDeployment({ namespace: 'steward', name: 'steward-worker' });
    expect(worker.spec?.template.spec?.serviceAccountName).toBe('steward');
  });

  it("gives both Deployments the setup's Temporal connection, in settings their loaders accept", async () => {
    const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
    const root = mkdtempSync(join(tmpdir(), 'steward-deploy-'));
    const environment = async (name: string) =>
      containerEnvironment(await apps.readNamespacedDeployment({ namespace: 'steward', name }), root);
    const worker = loadWorkerConfig({}, await environment('steward-worker'));
    const starter = loadStarterConfig({}, await environment('steward-starter'));
    expect(worker.temporal).toEqual({ ...worker.temporal, ...c.temporal(root) });
    expect(starter.temporal).toEqual(worker.temporal);
    // The MidoNet profile's connection; none without MidoNet.
    expect(worker.midonet?.password).toBe(c.midonet ? 'test-password' : undefined);
    expect(starter.identity).toBe('steward-starter-0');
    // Beside cloud-api-adaptor, which makes the peer pods' VMs: the starter names no runtime class of its own.
    expect(starter.peerPodRuntimeClasses).toEqual([]);
    // Each container's probes ask the port its process serves them on: liveness /healthz, readiness /readyz.
    for (const [name, port] of [
      ['steward-worker', worker.http.port],
      ['steward-starter', starter.http.port],
    ] as const) {
      const deployment = await apps.readNamespacedDeployment({ namespace: 'steward', name });
      const container = deployment.spec!.template.spec!.containers[0]!;
      expect([name, container.ports]).toEqual([name, [{ name: 'http', containerPort: port, protocol: 'TCP' }]]);
      expect([name, container.livenessProbe?.httpGet?.path, container.readinessProbe?.httpGet?.path]).toEqual([
        name,
        '/healthz',
        '/readyz',
      ]);
      expect([container.livenessProbe?.httpGet?.port, container.readinessProbe?.httpGet?.port]).toEqual([
        'http',
        'http',
      ]);
    }
  });

  it('labels its namespace with the PodSecurity level its Pods need: privileged on the host network, else restricted', () => {
    const namespace = objects.find((o) => o.kind === 'Namespace')!;
    expect(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe(
      c.midonet ? 'privileged' : 'restricted',
    );
  });

  it('has Pods that level admits, where the control is refused (the host network under baseline, escalation under restricted)', async () => {
    for (const namespace of enforcingNamespaces) await apply(namespace);
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    for (const deployment of deploymentsOf(objects)) {
      const name = deployment.metadata!.name!;
      const [admitted, control] = await admissionOf(core, deployment, namespaceOf);
      expect([name, admitted]).toEqual([name, undefined]);
      expect(control).toMatch(controlRefusal(c.midonet));
    }
  });

  it('writes only to emptyDir mounts under a read-only root, and mounts Secrets read-only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'steward-deploy-'));
    for (const deployment of deploymentsOf(objects)) {
      const name = deployment.metadata!.name!;
      const pod = deployment.spec!.template.spec!;
      const [container] = pod.containers;
      expect([name, container!.securityContext?.readOnlyRootFilesystem]).toEqual([name, true]);
      const env = await containerEnvironment(deployment, root);
      // Where the processes write: the temporary directory (the libvirt provider's domain files from mkdtemp); the
      // image runs compiled JavaScript and reads the workflow bundle from itself.
      const writes = [env.TMPDIR ?? '/tmp'];
      for (const path of writes) {
        const mount = mountOf(container!, path);
        const volume = pod.volumes?.find((candidate) => candidate.name === mount?.name);
        expect([name, path, mount?.readOnly ?? false, Boolean(volume?.emptyDir)]).toEqual([name, path, false, true]);
      }
      for (const mount of container!.volumeMounts ?? []) {
        const volume = pod.volumes?.find((candidate) => candidate.name === mount.name);
        if (volume?.secret) expect([name, mount.mountPath, mount.readOnly]).toEqual([name, mount.mountPath, true]);
      }
    }
  });

  it('gives virsh over qemu+ssh the key and known_hosts of the optional Secret ssh-key-secret', () => {
    const configMap = objects.find((o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap')!;
    const uri = new URL(configMap.data!.LIBVIRT_URI!);
    expect(uri.protocol).toBe('qemu+ssh:');
    const keyfile = uri.searchParams.get('keyfile')!;
    const worker = deploymentsOf(objects).find((d) => d.metadata!.name === 'steward-worker')!;
    const pod = worker.spec!.template.spec!;
    const mount = mountOf(pod.containers[0]!, keyfile);
    const volume = pod.volumes?.find((candidate) => candidate.name === mount?.name);
    expect(volume?.secret).toMatchObject({ secretName: 'ssh-key-secret', optional: true });
    // The Secret's keys become the files: id_rsa is the keyfile, and known_hosts sits where ssh looks for it, in
    // the ~/.ssh of the image's node user that the pod runs as (uid 1000, home /home/node).
    expect([mount?.mountPath, keyfile]).toEqual(['/home/node/.ssh', '/home/node/.ssh/id_rsa']);
    expect(pod.securityContext?.runAsUser).toBe(1000);
    // Mode 0440 with the pod's group: readable by the node user, and ssh accepts a key it does not own at that mode.
    expect([volume?.secret?.defaultMode, pod.securityContext?.fsGroup]).toEqual([0o440, 1000]);
  });

  it('covers each Deployment with a PodDisruptionBudget, a metrics Service, spread, and off the host network a NetworkPolicy', async () => {
    const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
    const policy = kubeConfig.makeApiClient(k8s.PolicyV1Api);
    const networking = kubeConfig.makeApiClient(k8s.NetworkingV1Api);
    const apps = kubeConfig.makeApiClient(k8s.AppsV1Api);
    for (const name of ['steward-worker', 'steward-starter']) {
      const namespace = 'steward';
      const deployment = await apps.readNamespacedDeployment({ namespace, name });
      const template = deployment.spec!.template;
      const labels = template.metadata!.labels!;
      const selects = (selector?: Record<string, string>) =>
        Object.keys(selector ?? {}).length > 0 &&
        Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
      const [container] = template.spec!.containers;
      const port = container!.ports![0]!;

      const budget = await policy.readNamespacedPodDisruptionBudget({ namespace, name });
      expect([name, selects(budget.spec?.selector?.matchLabels), budget.spec?.maxUnavailable]).toEqual([name, true, 1]);

      const service = await core.readNamespacedService({ namespace, name });
      expect([name, selects(service.spec?.selector)]).toEqual([name, true]);
      expect(service.spec?.ports?.map(({ name, port, targetPort }) => ({ name, port, targetPort }))).toEqual([
        { name: 'http', port: port.containerPort, targetPort: port.name },
      ]);

      expect(
        template.spec!.topologySpreadConstraints?.map((constraint) => [
          constraint.topologyKey,
          constraint.whenUnsatisfiable,
          selects(constraint.labelSelector?.matchLabels),
        ]),
      ).toEqual([['kubernetes.io/hostname', 'ScheduleAnyway', true]]);

      // The recommended labels, on the Deployment and its pods; the version is the image's tag.
      const version = container!.image!.split(':').pop();
      for (const objectLabels of [deployment.metadata!.labels!, labels])
        expect(objectLabels).toMatchObject({
          'app.kubernetes.io/name': 'steward',
          'app.kubernetes.io/instance': 'steward',
          'app.kubernetes.io/part-of': 'steward',
          'app.kubernetes.io/version': version,
          'app.kubernetes.io/managed-by': 'kustomize',
        });

      // In, the metrics and probe port alone; out, DNS and the backends' ports (cluster-specific destinations). On the
      // host network none: the network plugin does not apply policies to host-network pods.
      const policies = await networking.listNamespacedNetworkPolicy({ namespace });
      if (c.midonet) {
        expect(policies.items).toEqual([]);
        continue;
      }
      const networkPolicy = (await networking.readNamespacedNetworkPolicy({ namespace, name })).spec!;
      expect([name, selects(networkPolicy.podSelector?.matchLabels)]).toEqual([name, true]);
      expect(networkPolicy.policyTypes).toEqual(['Ingress', 'Egress']);
      expect(networkPolicy.ingress?.map((rule) => rule.ports?.map((p) => p.port))).toEqual([[port.containerPort]]);
      const egressPorts = (networkPolicy.egress ?? []).flatMap((rule) => (rule.ports ?? []).map((p) => p.port));
      expect(egressPorts).toEqual(expect.arrayContaining([53, 7233, 443, 6443]));
      if (name === 'steward-worker') expect(egressPorts).toEqual(expect.arrayContaining([22]));
    }
  });

  it.each(permissions)('its ServiceAccount may %s', async (what, attributes, expected) => {
    // The allowed cases come first, so they wait for the bindings to reach the authorizer.
    await expectAccess(kubeConfig, serviceAccount, attributes, expected, what);
  });
});

it("takes the Secret from a secretGenerator in a user's own overlay, with the user's image", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-overlay-'));
  // kustomize takes other kustomizations by relative path only.
  const overlay = relative(dir, join(__dirname, 'overlays/temporal-cloud'));
  writeFileSync(join(dir, 'steward.env'), 'TEMPORAL_API_KEY=test-api-key\nMIDONET_PASSWORD=test-password\n');
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    [
      'resources:',
      `  - ${overlay}`,
      'images:',
      '  - { name: steward, newName: registry.example.com/steward, newTag: 0.2.0 }',
      'secretGenerator:',
      '  - { name: steward, namespace: steward, envs: [steward.env] }',
      '',
    ].join('\n'),
  );
  const objects = await kustomizeBuild(kustomize, dir);
  const secret = objects.find((o): o is k8s.V1Secret => o.kind === 'Secret')!;
  // The generated name carries a hash of the content, so a changed Secret rolls the Deployments.
  expect(secret.metadata?.name).toMatch(/^steward-[a-z0-9]{10}$/);
  expect(Object.keys(secret.data ?? {}).sort()).toEqual(['MIDONET_PASSWORD', 'TEMPORAL_API_KEY']);
  for (const deployment of objects.filter((o): o is k8s.V1Deployment => o.kind === 'Deployment')) {
    const [container] = deployment.spec!.template.spec!.containers;
    expect(container!.image).toBe('registry.example.com/steward:0.2.0');
    const references = [
      ...(container!.envFrom ?? []).map((from) => from.secretRef?.name),
      ...(container!.env ?? []).map((variable) => variable.valueFrom?.secretKeyRef?.name),
      // cloud-api-adaptor's own Secret, which kustomize does not generate: the worker takes it as it is.
    ].filter((name) => name && name !== 'peer-pods-secret');
    expect(new Set(references)).toEqual(new Set([secret.metadata?.name]));
  }
});

it("adds, as the servicemonitor component, a ServiceMonitor that scrapes both metrics Services' `http` port", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'steward-overlay-'));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    [
      'resources:',
      `  - ${relative(dir, join(__dirname, 'manifests'))}`,
      'components:',
      `  - ${relative(dir, join(__dirname, 'components/servicemonitor'))}`,
      '',
    ].join('\n'),
  );
  const objects = await kustomizeBuild(kustomize, dir);
  const monitors = objects.filter((o) => o.kind === 'ServiceMonitor') as (k8s.KubernetesObject & {
    spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string }[] };
  })[];
  expect(monitors.map((monitor) => monitor.metadata?.namespace)).toEqual(['steward']);
  const [monitor] = monitors;
  const selected = objects
    .filter((o): o is k8s.V1Service => o.kind === 'Service')
    .filter((service) =>
      Object.entries(monitor!.spec.selector.matchLabels).every(
        ([key, value]) => service.metadata?.labels?.[key] === value,
      ),
    );
  expect(selected.map((service) => service.metadata?.name).sort()).toEqual(['steward-starter', 'steward-worker']);
  for (const service of selected)
    for (const endpoint of monitor!.spec.endpoints)
      expect(service.spec?.ports?.map((port) => port.name)).toContain(endpoint.port);
});
