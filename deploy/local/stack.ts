import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporalClientVariables } from '../../platform/temporal-config';
import { EC2_REGION, ec2Answers, startEc2 } from './ec2';
import { installCrds, kubernetesReachable, startKubernetes } from './kubernetes';
import { stackLibvirt } from './libvirt';
import { startMidonet } from './midonet-process';
import { defaultStateDir } from './paths';
import type { ManagedProcess, SupervisionEvents } from './process';
import { MissingPrerequisite, type Reporter, stderrReporter, step } from './progress';
import { startTemporal, temporalHealthy } from './temporal';
import {
  DEFAULT_LAYOUT,
  startTemporalCluster,
  type ClusterHostLayout,
  type TemporalCluster,
  type TemporalService,
} from './temporal-cluster';

/**
 * The embedded stack: starts what is missing, waits until each part really answers, and stops everything it
 * started. A part the user points at (TEMPORAL_ADDRESS, KUBECONFIG, LIBVIRT_URI, MIDONET_API_URL) is reused, never
 * started or stopped; so is an EC2-compatible endpoint in AWS_ENDPOINT_URL.
 */
export interface StackOptions {
  /** Data, logs, kubeconfig and stack.json; default `.steward/` in the repository. */
  stateDir?: string;
  /** `default`: the well-known ports (Temporal 7233, UI 8233, API server 6443, MidoNet 8181, EC2 5000) when free; `free`: any. */
  ports?: 'default' | 'free';
  report?: Reporter;
  /** Use this libvirt (never stopped) instead of `LIBVIRT_URI` or a libvirtd of the stack's own. */
  libvirtUri?: string;
  /** `dev` (default): the Temporal dev server; `cluster`: PostgreSQL and several Temporal server processes. */
  temporal?: TemporalProfile;
  /** The cluster profile's server processes (default DEFAULT_LAYOUT): the chaos run splits matching from frontend. */
  temporalLayout?: readonly ClusterHostLayout[];
  /** `false`: no MidoNet at all, no emulator (`steward up --backends peerpods`). Default: the emulator, or MIDONET_API_URL. */
  midonet?: boolean;
}

export type TemporalProfile = 'dev' | 'cluster';

/** What a user or a test needs to reach the stack; written to `<stateDir>/stack.json`. */
export interface StackInfo {
  stateDir: string;
  temporal: {
    address: string;
    namespace: string;
    uiUrl?: string;
    external: boolean;
    profile: TemporalProfile;
    /**
     * The stack's own Temporal client configuration file, empty (not when the Temporal is the user's): what processes
     * started against the stack read instead of the developer's (temporalEnv).
     */
    configFile?: string;
    /** The cluster profile's server processes as started (a failover test replaces them: see `Stack.temporalCluster`). */
    hosts?: { name: string; services: readonly TemporalService[]; pid: number }[];
  };
  /** `etcdUrl` only when the stack started the control plane (its etcd, e.g. to compact it in a test). */
  kubernetes: { kubeconfig: string; server?: string; etcdUrl?: string; external: boolean };
  libvirt: { uri: string; external: boolean };
  /** `adminUrl` (seeding, counters, fault injection) exists only on the emulator. */
  midonet: { url: string; adminUrl?: string; external: boolean };
  /** EC2-compatible API for the aws cloud provider (moto when started by the stack). */
  ec2: { endpoint: string; region: string; external: boolean };
  /** PIDs of the processes this stack started, by name, as first started (a supervised restart makes new ones). */
  pids: Record<string, number>;
}

/** What a stack started with `midonet: false` offers: the same, without MidoNet. */
export type AnyStackInfo = Omit<StackInfo, 'midonet'> & { midonet?: StackInfo['midonet'] };

export interface Stack<Info extends AnyStackInfo = StackInfo> {
  info: Info;
  /** The cluster profile's handle (kill, restart a host or PostgreSQL); absent on the dev server. */
  temporalCluster?: TemporalCluster;
  /**
   * From now on, every server this stack started is started again whenever it exits, and `events` told (`steward up`
   * supervises; the tests that kill a server on purpose do not).
   */
  supervise(events: SupervisionEvents): void;
  /** The server this stack started under `name` (e.g. `kube-apiserver`), to supervise or kill it alone. */
  server(name: string): ManagedProcess | undefined;
  stop(): Promise<void>;
}

interface Part<T> {
  value: T;
  processes: ManagedProcess[];
  stop(): Promise<void>;
}

const stopAll = (processes: ManagedProcess[]) => async () => {
  for (const p of [...processes].reverse()) await p.stop();
};

export function startStack(options?: StackOptions & { midonet?: true }): Promise<Stack>;
export function startStack(options: StackOptions): Promise<Stack<AnyStackInfo>>;
export async function startStack(options: StackOptions = {}): Promise<Stack<AnyStackInfo>> {
  const stateDir = options.stateDir ?? defaultStateDir;
  const report = options.report ?? stderrReporter;
  const fixedPorts = (options.ports ?? 'default') === 'default';
  mkdirSync(stateDir, { recursive: true });

  const profile = options.temporal ?? 'dev';
  // The stack's Temporal as a client configuration file, its one profile plaintext (temporalEnv).
  const clientConfig = (address: string, namespace: string) => {
    const file = join(stateDir, 'temporal-client.toml');
    const toml = `# The embedded stack's Temporal (deploy/local/stack.ts temporalEnv)\n[profile.default]\naddress = "${address}"\nnamespace = "${namespace}"\n`;
    writeFileSync(file, toml);
    return file;
  };
  let temporalCluster: TemporalCluster | undefined;
  const temporal = async (): Promise<Part<StackInfo['temporal']>> => {
    const address = process.env.TEMPORAL_ADDRESS;
    if (address) {
      if (profile === 'cluster')
        throw new MissingPrerequisite(
          `TEMPORAL_ADDRESS=${address} is set, and the cluster profile starts a Temporal of its own.`,
          'unset TEMPORAL_ADDRESS, or leave out the cluster profile',
        );
      if (!(await temporalHealthy(address).catch(() => false))) {
        throw new MissingPrerequisite(
          `TEMPORAL_ADDRESS=${address} does not answer.`,
          'start that server, or unset TEMPORAL_ADDRESS to use the embedded one',
        );
      }
      const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
      return { value: { address, namespace, external: true, profile }, processes: [], stop: async () => {} };
    }
    const ports = { port: fixedPorts ? 7233 : 0, uiPort: fixedPorts ? 8233 : 0 };
    if (profile === 'cluster') {
      const layout = options.temporalLayout ?? DEFAULT_LAYOUT;
      const cluster = await step(
        report,
        `start Temporal cluster (PostgreSQL, ${layout.length} server hosts, UI server)`,
        () => startTemporalCluster({ stateDir, report, ...ports, layout }),
      );
      temporalCluster = cluster;
      const { address: a, namespace, uiUrl } = cluster;
      const hosts = cluster.hosts().map(({ name, services, pid }) => ({ name, services, pid }));
      return {
        value: {
          address: a,
          namespace,
          uiUrl,
          external: false,
          profile,
          hosts,
          configFile: clientConfig(a, namespace),
        },
        processes: cluster.processes(),
        stop: () => cluster.stop(),
      };
    }
    const server = await step(report, 'start Temporal dev server', () =>
      startTemporal({ stateDir: join(stateDir, 'temporal'), report, ...ports }),
    );
    const { address: a, namespace, uiUrl } = server;
    return {
      value: { address: a, namespace, uiUrl, external: false, profile, configFile: clientConfig(a, namespace) },
      processes: [server.process],
      stop: stopAll([server.process]),
    };
  };

  const kubernetes = async (): Promise<Part<StackInfo['kubernetes']>> => {
    const kubeconfig = process.env.KUBECONFIG;
    if (kubeconfig) {
      if (!(await kubernetesReachable(kubeconfig))) {
        throw new MissingPrerequisite(
          `The cluster in KUBECONFIG=${kubeconfig} does not answer.`,
          'fix that cluster, or unset KUBECONFIG to use the embedded one',
        );
      }
      await step(report, 'install Steward CRDs into the existing cluster', () => installCrds(kubeconfig));
      return { value: { kubeconfig, external: true }, processes: [], stop: async () => {} };
    }
    const cluster = await step(report, 'start Kubernetes control plane', () =>
      startKubernetes({ stateDir, apiPort: fixedPorts ? 6443 : 0, report }),
    );
    return {
      value: { kubeconfig: cluster.kubeconfigPath, server: cluster.server, etcdUrl: cluster.etcdUrl, external: false },
      processes: cluster.processes,
      stop: stopAll(cluster.processes),
    };
  };

  const libvirt = async (): Promise<Part<StackInfo['libvirt']>> => {
    const uri = options.libvirtUri ?? process.env.LIBVIRT_URI;
    const started = await step(report, uri ? `use libvirt at ${uri}` : 'start libvirt', () =>
      stackLibvirt({ uri, stateDir, report }),
    );
    return {
      value: { uri: started.uri, external: !started.process },
      processes: started.process ? [started.process] : [],
      stop: () => started.stop(),
    };
  };

  const midonet = async (): Promise<Part<StackInfo['midonet'] | undefined>> => {
    if (options.midonet === false) return { value: undefined, processes: [], stop: async () => {} };
    const url = process.env.MIDONET_API_URL;
    if (url) return { value: { url, external: true }, processes: [], stop: async () => {} };
    const server = await step(report, 'start MidoNet API emulator', () =>
      startMidonet({ stateDir, port: fixedPorts ? 8181 : 0 }),
    );
    return {
      value: { url: server.url, adminUrl: server.adminUrl, external: false },
      processes: [server.process],
      stop: stopAll([server.process]),
    };
  };

  const ec2 = async (): Promise<Part<StackInfo['ec2']>> => {
    const endpoint = process.env.AWS_ENDPOINT_URL;
    const region = process.env.AWS_REGION ?? EC2_REGION;
    if (endpoint) {
      if (!(await ec2Answers(endpoint).catch(() => false))) {
        throw new MissingPrerequisite(
          `AWS_ENDPOINT_URL=${endpoint} does not answer.`,
          'start that server, or unset AWS_ENDPOINT_URL to use the embedded one',
        );
      }
      return { value: { endpoint, region, external: true }, processes: [], stop: async () => {} };
    }
    const server = await step(report, 'start EC2 test server (moto)', () =>
      startEc2({ stateDir, port: fixedPorts ? 5000 : 0, report }),
    );
    return {
      value: { endpoint: server.endpoint, region: server.region, external: false },
      processes: [server.process],
      stop: stopAll([server.process]),
    };
  };

  const pending = [temporal(), kubernetes(), libvirt(), midonet(), ec2()] as const;
  const results = await Promise.allSettled(pending);
  const parts = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value as Part<unknown>] : []));
  const stop = async () => {
    for (const part of [...parts].reverse())
      await part.stop().catch((error: unknown) => report(`stop failed: ${String(error)}`));
  };
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await stop();
    throw failure.reason;
  }
  const [t, k, l, m, e] = await Promise.all(pending);
  const info: AnyStackInfo = {
    stateDir,
    temporal: t.value,
    kubernetes: k.value,
    libvirt: l.value,
    ...(m.value ? { midonet: m.value } : {}),
    ec2: e.value,
    pids: Object.fromEntries(parts.flatMap((p) => p.processes).map((p) => [p.name, p.pid])),
  };
  writeFileSync(stackFile(stateDir), JSON.stringify(info, null, 2) + '\n');
  const supervise = (events: SupervisionEvents) => {
    for (const server of parts.flatMap((p) => p.processes)) server.supervise(events);
  };
  const server = (name: string) => parts.flatMap((p) => p.processes).find((p) => p.name === name);
  return { info, ...(temporalCluster ? { temporalCluster } : {}), supervise, server, stop };
}

export const stackFile = (stateDir: string) => join(stateDir, 'stack.json');

/**
 * The Steward settings every process started against the stack gets, whatever its installation's: the stack has no
 * kubelet, so Pods never turn Ready and the endpointslice controller finds no endpoint for a Service with a selector.
 * The demo and the tests write those Services' v1 Endpoints by hand, as the endpoints controller would, and Steward
 * reads them there (`auto` would read the EndpointSlices, which the mirroring controller fills only for Services
 * without a selector).
 */
export const STACK_STEWARD_SETTINGS: Readonly<Record<string, string>> = { STEWARD_ENDPOINTS_FROM: 'Endpoints' };

/**
 * The variables a process started against the stack reaches its Temporal with. The stack's own Temporal is plaintext
 * and has no profile, so a developer's client configuration (~/.config/temporalio/temporal.toml, TEMPORAL_PROFILE,
 * TEMPORAL_TLS_*, TEMPORAL_API_KEY, TEMPORAL_GRPC_META_*) must not reach it: those are blanked (an empty variable is
 * unset to Steward) and the configuration file is the stack's empty one. A Temporal the user points at
 * (TEMPORAL_ADDRESS) is reached with the user's settings.
 */
export function temporalEnv(
  temporal: StackInfo['temporal'],
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const own = temporal.configFile
    ? {
        ...Object.fromEntries(temporalClientVariables(env).map((name) => [name, ''])),
        TEMPORAL_CONFIG_FILE: temporal.configFile,
      }
    : {};
  return { ...own, TEMPORAL_ADDRESS: temporal.address, TEMPORAL_NAMESPACE: temporal.namespace };
}
