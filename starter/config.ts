import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { loadTemporalConfig, type TemporalConfig } from '../platform/temporal-config';
import { httpSettings, httpShape } from '../platform/http';
import { logLevels, logLevelSetting, type LogLevel } from '../platform/log';
import {
  kubeconfigFiles,
  kubeconfigSetting,
  POD_ROOT_VARIABLE,
  SERVICE_ACCOUNT_DIR,
} from '../platform/kubernetes/kubeconfig';
import { ENDPOINTS_SETTINGS, type EndpointsSetting } from '../platform/kubernetes/kinds';
import { duration, listOrNone, loadAll, parseSettings, whole, type Flags, type Setting } from '../platform/settings';
import { loadCloudProvider, peerPodCloudList, peerPodCloudsSetting, servedClouds } from '../platform/peerpod-clouds';
import { CAA_LEAK_MODES, type CaaLeakMode, type SweepBackend } from '../model/sweep-report';
import { DEFAULT_TENANT } from '../model/translation/ids';
import { DEFAULT_WAVE, waveSettingsSchema, type WaveSettings } from '../model/deletion-guard';
import { DEFAULT_LEASE, DEFAULT_PEERPOD_RUNTIME_CLASSES } from './controller';
import { backendList } from './sweep-schedule';
import {
  backendsSetting,
  backendsSchema,
  installation,
  sweepBackendsNotInstalled,
  type Backend,
} from '../platform/backends';

/**
 * The starter's configuration, from flags and environment like the worker's (the Temporal settings, task queue
 * included, are the worker's own): `steward starter` and `steward up` load it, run.ts runs it.
 */

/** The starter's own settings; the Temporal ones come from platform/temporal-config.ts. */
export const starterSettings = {
  kubeconfig: kubeconfigSetting,
  backends: backendsSetting,
  watchNamespace: {
    env: 'STEWARD_WATCH_NAMESPACE',
    arg: 'name',
    description:
      'namespace whose Pods, Services, Endpoints and Translations are watched (Nodes always are); all namespaces when unset',
  },
  endpointsFrom: {
    env: 'STEWARD_ENDPOINTS_FROM',
    arg: 'source',
    default: 'auto',
    description:
      "where Services' endpoints are read: auto (EndpointSlices where the API server serves them, else Endpoints), EndpointSlices (discovery.k8s.io/v1, the same Translations) or Endpoints (v1, deprecated since Kubernetes 1.33)",
  },
  leaseNamespace: {
    env: 'STEWARD_LEASE_NAMESPACE',
    arg: 'name',
    description: 'namespace of the leader-election Lease',
    whenUnset: `the starter's own namespace in a cluster (its service account's), else ${DEFAULT_LEASE.namespace}`,
  },
  leaseName: {
    env: 'STEWARD_LEASE_NAME',
    arg: 'name',
    default: DEFAULT_LEASE.name,
    description: 'leader-election Lease: of the starters sharing it, only the holder sends',
  },
  // Durations as every other one is written (--sweep-interval 10m, adopt --timeout 10m); the former names, which
  // counted in seconds and milliseconds, are still read, with a warning.
  resyncInterval: {
    env: 'STEWARD_RESYNC_INTERVAL',
    arg: 'duration',
    default: '10m',
    description: 'period of the full re-list of every watched kind, e.g. 10m',
    formerFlag: 'resync-seconds',
    formerEnv: 'STEWARD_RESYNC_SECONDS',
    formerUnit: 's',
  },
  debounceWindow: {
    env: 'STEWARD_DEBOUNCE_WINDOW',
    arg: 'duration',
    default: '200ms',
    description: "window in which an object's changes are coalesced into one signal, e.g. 200ms",
    formerFlag: 'debounce-ms',
    formerEnv: 'STEWARD_DEBOUNCE_MS',
    formerUnit: 'ms',
  },
  identity: {
    env: 'STEWARD_IDENTITY',
    arg: 'name',
    description:
      'this starter in the Lease and the logs, unique per process (e.g. the pod name); default <hostname>-<pid>',
  },
  tenant: {
    env: 'MIDONETKUBE_TENANT',
    arg: 'name',
    default: DEFAULT_TENANT,
    description:
      "MidoNet tenant of the cluster's objects (midonet-kubernetes' MIDONETKUBE_TENANT), given to every object's workflow and the global setup workflow",
  },
  peerPodRuntimeClasses: {
    env: 'STEWARD_PEERPOD_RUNTIME_CLASSES',
    arg: 'names',
    default: DEFAULT_PEERPOD_RUNTIME_CLASSES.join(',') || 'none',
    description:
      "comma-separated runtime classes whose Pods are peer pods Steward makes cloud VMs for; 'none' (the default) beside cloud-api-adaptor, which makes them itself",
  },
  peerPodClouds: peerPodCloudsSetting,
  sweepInterval: {
    env: 'STEWARD_SWEEP_INTERVAL',
    arg: 'duration',
    default: '10m',
    description: 'how often the orphan sweeper runs (Schedule gc/sweep), e.g. 10m or 1h',
  },
  sweepGrace: {
    env: 'STEWARD_SWEEP_GRACE',
    arg: 'duration',
    default: '10m',
    description: 'how long a resource must stay unrecorded before the sweeper deletes it',
  },
  sweepBackends: {
    env: 'STEWARD_SWEEP_BACKENDS',
    arg: 'list',
    description:
      'what the scheduled sweep covers: cloud, midonet, both comma-separated, or none (removes the Schedule); only backends STEWARD_BACKENDS names',
    whenUnset: 'the installed backends (STEWARD_BACKENDS: peerpods is swept as cloud)',
  },
  sweepDryRun: { env: 'STEWARD_SWEEP_DRY_RUN', description: 'the scheduled sweep only reports what it would delete' },
  sweepCaaLeaks: {
    env: 'STEWARD_SWEEP_CAA_LEAKS',
    arg: 'mode',
    default: 'report',
    description:
      "tracking mode: cloud-api-adaptor's VMs (podvm-<pod>-<8 hex>, in LIBVIRT_POOL or the region) that no PeerPod or Pod records through the grace period: report, delete (with their volumes), or off; off when Steward makes the VMs",
  },
  massDeletionShare: {
    env: 'STEWARD_MASS_DELETION_SHARE',
    arg: 'fraction',
    default: String(DEFAULT_WAVE.share),
    description:
      'the guard against mass deletion holds MidoNet deletions when more than this share of all Translations is deleted within the window (docs/operations.md)',
  },
  massDeletionMin: {
    env: 'STEWARD_MASS_DELETION_MIN',
    arg: 'count',
    default: String(DEFAULT_WAVE.minDeletions),
    description: '... and at least this many Translations',
  },
  massDeletionWindow: {
    env: 'STEWARD_MASS_DELETION_WINDOW',
    arg: 'duration',
    default: `${DEFAULT_WAVE.windowSeconds}s`,
    description: 'the window in which deletions count as one wave, e.g. 60s',
  },
  ...httpSettings('STEWARD_STARTER', 9465),
  logLevel: logLevelSetting,
} satisfies Record<string, Setting>;

export interface StarterConfig {
  temporal: TemporalConfig;
  kubeconfig?: string;
  /** What this installation drives: what is watched, started and swept follows (platform/backends.ts). */
  backends: Backend[];
  /** Absent: all namespaces. */
  watchNamespace?: string;
  /** `auto` is resolved when the starter starts (platform/kubernetes/kinds.ts endpointsSourceServed). */
  endpointsFrom: EndpointsSetting;
  lease: { namespace: string; name: string };
  resyncMs: number;
  debounceMs: number;
  identity: string;
  tenant: string;
  peerPodRuntimeClasses: string[];
  /** Clouds whose PeerPods it serves; a PeerPod of another is left to its own controller. */
  peerPodClouds: string[];
  sweep: { intervalMs: number; graceMs: number; backends: SweepBackend[]; dryRun: boolean; caaLeaks: CaaLeakMode };
  massDeletion: WaveSettings;
  http: { host: string; port: number };
  logLevel: LogLevel;
}

const name = z.string().min(1, 'must not be empty');
// Kubernetes object names (RFC 1123 subdomain): caught here rather than as a 422 on the first Lease request.
const objectName = name.regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
  error: (issue) => `must be a Kubernetes name (lower case, digits, '-', '.'), got "${String(issue.input)}"`,
});

const starterSchema = z
  .object({
    kubeconfig: kubeconfigFiles.optional(),
    backends: backendsSchema.optional(),
    watchNamespace: objectName.optional(),
    endpointsFrom: z.enum(ENDPOINTS_SETTINGS, { error: `must be one of ${ENDPOINTS_SETTINGS.join(', ')}` }),
    leaseNamespace: objectName.optional(),
    leaseName: objectName,
    resyncInterval: duration.pipe(z.number().min(1_000, 'must be at least 1s')),
    debounceWindow: duration,
    identity: name.optional(),
    tenant: name,
    peerPodRuntimeClasses: listOrNone.pipe(z.array(objectName)),
    peerPodClouds: peerPodCloudList.optional(),
    sweepInterval: duration.pipe(z.number().min(60_000, 'must be at least 1m')),
    sweepGrace: duration,
    sweepBackends: backendList.optional(),
    sweepDryRun: z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).optional(),
    sweepCaaLeaks: z.enum(CAA_LEAK_MODES, { error: `must be one of ${CAA_LEAK_MODES.join(', ')}` }),
    massDeletionShare: z.coerce.number().pipe(waveSettingsSchema.shape.share),
    massDeletionMin: whole(1),
    massDeletionWindow: duration.pipe(z.number().min(1_000, 'must be at least 1s')),
    ...httpShape,
    logLevel: z.enum(logLevels, { error: `must be one of ${logLevels.join(', ')}` }),
  })
  // A sweep of a backend not installed would fail on every tick (no MidoNet there) or point at a placeholder host.
  .superRefine(({ backends, sweepBackends }, ctx) => {
    for (const message of sweepBackendsNotInstalled(sweepBackends ?? [], installation(backends)))
      ctx.addIssue({ code: 'custom', path: ['sweepBackends'], message });
  });

/**
 * The namespace a pod runs in, as Kubernetes mounts it with the service account's token (under the pod's root when
 * the process runs outside it, as client-node reads the rest); undefined outside a cluster. The Lease lives beside
 * the starters, so the installation's RBAC stays in its own namespace.
 */
export function ownNamespace(
  file = join(process.env[POD_ROOT_VARIABLE] ?? '', SERVICE_ACCOUNT_DIR, 'namespace'),
): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Flag, else environment variable, else default; every problem (Temporal's too) named by its flag and variable. */
export function loadStarterConfig(
  flags: Flags = {},
  env: NodeJS.ProcessEnv = process.env,
  inNamespace: string | undefined = ownNamespace(),
): StarterConfig {
  const [temporal, v, cloudProvider] = loadAll(
    () => loadTemporalConfig(flags, env),
    () => parseSettings(starterSettings, starterSchema, flags, env),
    () => loadCloudProvider(flags, env),
  );
  return {
    temporal,
    kubeconfig: v.kubeconfig,
    backends: [...installation(v.backends).backends],
    watchNamespace: v.watchNamespace,
    endpointsFrom: v.endpointsFrom,
    lease: { namespace: v.leaseNamespace ?? inNamespace ?? DEFAULT_LEASE.namespace, name: v.leaseName },
    resyncMs: v.resyncInterval,
    debounceMs: v.debounceWindow,
    identity: v.identity ?? `${hostname()}-${process.pid}`,
    tenant: v.tenant,
    peerPodRuntimeClasses: v.peerPodRuntimeClasses,
    peerPodClouds: servedClouds(v.peerPodClouds, cloudProvider),
    sweep: {
      intervalMs: v.sweepInterval,
      graceMs: v.sweepGrace,
      backends: v.sweepBackends ?? [...installation(v.backends).sweep],
      dryRun: v.sweepDryRun === 'true' || v.sweepDryRun === '1',
      // Where Steward makes the VMs, cloud-api-adaptor does not: none of its VMs are there to find.
      caaLeaks: v.peerPodRuntimeClasses.length > 0 ? 'off' : v.sweepCaaLeaks,
    },
    massDeletion: {
      share: v.massDeletionShare,
      minDeletions: v.massDeletionMin,
      windowSeconds: Math.round(v.massDeletionWindow / 1000),
    },
    http: { host: v.httpHost, port: v.httpPort },
    logLevel: v.logLevel,
  };
}
