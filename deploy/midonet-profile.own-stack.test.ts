// The MidoNet profile's worker and starter with nothing but what deploy/manifests/steward.yaml gives them, as its
// host-network pods get it: a process each, its environment the ConfigMap's (the stack's addresses in place of the
// cluster's placeholders, every one an IP address) and no kubeconfig at all: the ServiceAccount's token, CA and
// namespace where the kubelet mounts them (under TELEPRESENCE_ROOT) and the API server at the ConfigMap's
// KUBERNETES_SERVICE_HOST/_PORT, as client-node's in-cluster configuration reads them. Then a Node and a Pod in the
// API server: the Pod's port is pushed into MidoNet. Its own stack, since its starter watches every object.
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { Stack } from './local';
import { startPrivateStack } from './local/jest/stack-info';
import { startStewardProcesses, type StewardProcesses } from './local/steward-processes';
import { DEFAULT_TENANT, podPortId } from '../model/translation/ids';
import { HOSTS, NAMESPACE, nodeProjection, podProjection } from '../test/chaos/ops';
import {
  createNode,
  createPod,
  emulatorOf,
  podTranslationNames,
  seedEmulator,
  waitForReady,
} from '../test/support/objects-harness';

let stack: Stack;
let steward: StewardProcesses;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;

beforeAll(async () => {
  stack = await startPrivateStack();
  // The agents' hosts and the deployer's cluster router.
  await seedEmulator(stack.info, HOSTS);
  steward = await startStewardProcesses({
    info: stack.info,
    workers: 1,
    starters: 1,
    secrets: { MIDONET_PASSWORD: 'admin' },
    inCluster: true,
    report: () => {},
  });
  const admin = new k8s.KubeConfig();
  admin.loadFromFile(stack.info.kubernetes.kubeconfig);
  core = admin.makeApiClient(k8s.CoreV1Api);
  custom = admin.makeApiClient(k8s.CustomObjectsApi);
}, 5 * 60_000);

afterAll(async () => {
  await steward?.stop();
  await stack?.stop();
});

/** A running process's environment, as the kernel gave it at its start. */
const environmentOf = (pid: number): Record<string, string> =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
const hostOf = (address: string) =>
  address.includes('://') ? new URL(address).hostname.replace(/^\[|\]$/g, '') : address.replace(/:\d+$/, '');

it('runs worker and starter (both ready) with no kubeconfig, the API server, Temporal and MidoNet as IP addresses', () => {
  for (const { process } of [...steward.workers, ...steward.starters]) {
    const env = environmentOf(process.pid);
    const addresses = [env.KUBERNETES_SERVICE_HOST!, env.TEMPORAL_ADDRESS!, env.MIDONET_API_URL!].map(hostOf);
    expect([process.name, addresses.map((host) => isIP(host) > 0)]).toEqual([process.name, [true, true, true]]);
    expect([process.name, env.KUBECONFIG ?? '']).toEqual([process.name, '']);
    expect(env.TELEPRESENCE_ROOT).toBeTruthy();
    // No Service name, and no kubeconfig where client-node would look for one.
    expect(Object.values(env).filter((value) => /\.svc\b|\.cluster\.local\b/.test(value))).toEqual([]);
    expect(() => readFileSync(`${env.HOME}/.kube/config`)).toThrow();
  }
});

it("pushes a Pod: its Node's and its own Translations Ready, its port in MidoNet", async () => {
  const node = nodeProjection({ kind: 'Node', name: HOSTS[0]!.name, host: 0 });
  const pod = podProjection({
    kind: 'Pod',
    name: 'web',
    node: node.metadata.name,
    peer: false,
    phase: 'Running',
    ip: '10.1.0.10',
  });
  const uid = (created: k8s.V1Node | k8s.V1Pod) => created.metadata!.uid!;
  const nodeUid = uid(await createNode({ core }, node));
  const podUid = uid(await createPod({ core }, pod));
  const translations = podTranslationNames(
    { ...pod, metadata: { ...pod.metadata, uid: podUid } },
    { ...node, metadata: { ...node.metadata, uid: nodeUid } },
    DEFAULT_TENANT,
  );
  await waitForReady({ custom }, 'the Node and Pod Translations', translations, 180_000);
  const dump = await emulatorOf(stack.info).admin.dump();
  expect(dump.Port.map((port) => port.id)).toContain(podPortId(DEFAULT_TENANT, NAMESPACE, 'web'));
});
