import * as k8s from '@kubernetes/client-node';
import { isIP } from 'node:net';

/**
 * What decides whether an installation depends on the network it programs, read from rendered objects (kustomize
 * build, helm template), for the render tests to compare with what each profile must be (deploy/README.md).
 */
export interface Profile {
  /** Each Deployment's pod: on the host network, its resolver, priority and tolerations; its rollout. */
  pods: Record<string, Pick<k8s.V1PodSpec, 'hostNetwork' | 'dnsPolicy' | 'priorityClassName' | 'tolerations'>>;
  rollout: Record<string, k8s.V1RollingUpdateDeployment | undefined>;
  /** How the ConfigMap names each backend: an IP address, a name (a Service's or a host's), or not at all. */
  addresses: Record<'apiServer' | 'temporal' | 'midonet', 'IP address' | 'name' | undefined>;
  /** The ConfigMap's MidoNet settings (MIDONET*, the API server's address, the node annotator's switch). */
  midonetSettings: string[];
  /** STEWARD_BACKENDS as the ConfigMap gives it: undefined is both (platform/backends.ts). */
  backends: string | undefined;
  networkPolicies: string[];
}

const hostOf = (address: string) =>
  address.includes('://') ? new URL(address).hostname.replace(/^\[|\]$/g, '') : address.replace(/:\d+$/, '');
const kindOf = (address: string | undefined) =>
  address === undefined ? undefined : isIP(hostOf(address)) ? ('IP address' as const) : ('name' as const);

export function profileOf(objects: k8s.KubernetesObject[]): Profile {
  const deployments = objects.filter((o): o is k8s.V1Deployment => o.kind === 'Deployment');
  const data = objects.find((o): o is k8s.V1ConfigMap => o.kind === 'ConfigMap')?.data ?? {};
  const byName = <T>(read: (d: k8s.V1Deployment) => T) =>
    Object.fromEntries(deployments.map((d) => [d.metadata!.name!, read(d)]));
  return {
    pods: byName(({ spec }) => {
      const { hostNetwork, dnsPolicy, priorityClassName, tolerations } = spec!.template.spec!;
      return { hostNetwork, dnsPolicy, priorityClassName, tolerations };
    }),
    rollout: byName(({ spec }) => spec!.strategy?.rollingUpdate),
    addresses: {
      apiServer: kindOf(data.KUBERNETES_SERVICE_HOST),
      temporal: kindOf(data.TEMPORAL_ADDRESS),
      midonet: kindOf(data.MIDONET_API_URL),
    },
    midonetSettings: Object.keys(data)
      .filter((key) => /^(MIDONET|KUBERNETES_SERVICE_|STEWARD_NODE_ANNOTATOR)/.test(key))
      .sort(),
    backends: data.STEWARD_BACKENDS,
    // The installation's: not the helm test's own, made only while `helm test` runs.
    networkPolicies: objects
      .filter((o) => o.kind === 'NetworkPolicy' && !o.metadata?.annotations?.['helm.sh/hook'])
      .map((o) => o.metadata!.name!)
      .sort(),
  };
}

const deploymentNames = ['steward-starter', 'steward-worker'];
const each = <T>(value: T) => Object.fromEntries(deploymentNames.map((name) => [name, value]));
/** One pod at a time, in place: a host-network pod holds its port on its node, so a surge pod may find none free. */
const inPlace = each({ maxSurge: 0, maxUnavailable: 1 });

/**
 * The MidoNet profile: what pushes MidoNet needs no pod network. Host network with the node's own resolver (the
 * cluster's DNS is a ClusterIP), system-cluster-critical, every taint tolerated; the API server, Temporal and MidoNet
 * by IP address; no NetworkPolicy, which host-network pods are not subject to.
 */
export const MIDONET_PROFILE: Profile = {
  pods: each({
    hostNetwork: true,
    dnsPolicy: 'Default',
    priorityClassName: 'system-cluster-critical',
    tolerations: [{ operator: 'Exists' }],
  }),
  rollout: inPlace,
  addresses: { apiServer: 'IP address', temporal: 'IP address', midonet: 'IP address' },
  midonetSettings: [
    'KUBERNETES_SERVICE_HOST',
    'KUBERNETES_SERVICE_PORT',
    'MIDONETKUBE_TENANT',
    'MIDONET_API_URL',
    'MIDONET_USERNAME',
    'STEWARD_NODE_ANNOTATOR',
  ],
  backends: undefined,
  networkPolicies: [],
};

/**
 * Peer pods only: ordinary pods on the pod network, the kubelet's API server address, no MidoNet setting,
 * STEWARD_BACKENDS=peerpods, policies.
 */
export const PEERPODS_ONLY: Profile = {
  pods: each({ hostNetwork: undefined, dnsPolicy: undefined, priorityClassName: undefined, tolerations: undefined }),
  rollout: inPlace,
  addresses: { apiServer: undefined, temporal: 'name', midonet: undefined },
  midonetSettings: [],
  backends: 'peerpods',
  networkPolicies: deploymentNames,
};
