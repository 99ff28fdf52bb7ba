import { z } from 'zod';
import { cloudSettings, loadCloudConfig, type CloudConfig } from '../activities/cloud/config';
import type { MidonetConnection } from '../activities/midonet';
import { TASK_QUEUE } from '../workflows/naming';
import { flag, parseSettings, readableFile, settingLabel, whole, type Flags, type Setting } from './settings';

/**
 * The worker's settings and the Temporal ones every command shares (the settings parser is settings.ts). The cloud's
 * settings are activities/cloud/config.ts's, given to the worker like its own.
 */

export const temporalSettings = {
  address: {
    env: 'TEMPORAL_ADDRESS',
    arg: 'host:port',
    default: '127.0.0.1:7233',
    description: 'Temporal frontend address',
  },
  namespace: { env: 'TEMPORAL_NAMESPACE', arg: 'name', default: 'default', description: 'Temporal namespace' },
  tls: { env: 'TEMPORAL_TLS', description: 'connect with TLS (implied by a TLS file or an API key)' },
  tlsCert: { env: 'TEMPORAL_TLS_CERT', arg: 'file', description: 'client certificate (PEM) for mTLS; needs the key' },
  tlsKey: {
    env: 'TEMPORAL_TLS_KEY',
    arg: 'file',
    description: 'client private key (PEM) for mTLS; needs the certificate',
  },
  tlsCa: {
    env: 'TEMPORAL_TLS_CA',
    arg: 'file',
    description: 'CA certificate (PEM) of the server, when the system does not trust it',
  },
  tlsServerName: {
    env: 'TEMPORAL_TLS_SERVER_NAME',
    arg: 'name',
    description: 'server name to verify (SNI) when it differs from the address host',
  },
  apiKey: { env: 'TEMPORAL_API_KEY', secret: true, description: 'API key (Temporal Cloud); implies TLS' },
  // Here rather than with the worker's: the starter, the Schedule and `steward sweep` start work on it.
  taskQueue: {
    env: 'STEWARD_TASK_QUEUE',
    arg: 'name',
    default: TASK_QUEUE,
    description:
      "task queue of Steward's workflows and activities: the workers poll it, the starter and the commands start work on it",
  },
} satisfies Record<string, Setting>;

export const workerSettings = {
  ...temporalSettings,
  maxConcurrentWorkflowTasks: {
    env: 'STEWARD_MAX_CONCURRENT_WORKFLOW_TASKS',
    arg: 'n',
    default: '20',
    description: 'workflow task slots (SDK default 40; a local server needs few)',
  },
  maxConcurrentActivities: {
    env: 'STEWARD_MAX_CONCURRENT_ACTIVITIES',
    arg: 'n',
    default: '50',
    description: 'activity slots, sized to what the backends take',
  },
  maxConcurrentLocalActivities: {
    env: 'STEWARD_MAX_CONCURRENT_LOCAL_ACTIVITIES',
    arg: 'n',
    default: '50',
    description: 'local activity slots',
  },
  maxCachedWorkflows: {
    env: 'STEWARD_MAX_CACHED_WORKFLOWS',
    arg: 'n',
    default: '200',
    description:
      'sticky cache size: under 1 MB each with the modules preloaded (measured), keeps memory flat (SDK default grows with the heap)',
  },
  workflowBundle: {
    env: 'STEWARD_WORKFLOW_BUNDLE',
    arg: 'file',
    description:
      'the workflow code as `steward bundle` wrote it from these same sources; the worker then skips bundling at start (about 130 MB and 20 s of CPU less per worker)',
  },
  midonetActivitiesPerSecond: {
    env: 'STEWARD_MIDONET_ACTIVITIES_PER_SECOND',
    arg: 'n',
    description:
      "cap on MidoNet activities started per second, across every worker (Temporal's maxTaskQueueActivitiesPerSecond on the task queue, where MidoNet's are the only regular activities)",
  },
  kubeconfig: {
    env: 'KUBECONFIG',
    arg: 'file',
    description: 'kubeconfig of the cluster; else ~/.kube/config, else the in-cluster service account',
  },
  midonetUrl: {
    env: 'MIDONET_API_URL',
    arg: 'url',
    description: 'MidoNet REST API root, e.g. http://midonet:8181/midonet-api; no MidoNet activities when unset',
  },
  midonetUsername: { env: 'MIDONET_USERNAME', arg: 'name', description: 'MidoNet user (needed with the URL)' },
  midonetPassword: { env: 'MIDONET_PASSWORD', secret: true, description: 'MidoNet password (needed with the URL)' },
  midonetTenant: { env: 'MIDONET_TENANT', arg: 'name', description: 'MidoNet project sent at login (X-Auth-Project)' },
  httpHost: {
    env: 'STEWARD_HTTP_HOST',
    arg: 'address',
    default: '0.0.0.0',
    description: 'address of the health and metrics server',
  },
  httpPort: {
    env: 'STEWARD_HTTP_PORT',
    arg: 'port',
    default: '9464',
    description: 'port of /healthz, /readyz and /metrics (0: any free port)',
  },
  logLevel: {
    env: 'STEWARD_LOG_LEVEL',
    arg: 'level',
    default: 'info',
    description: 'trace, debug, info, warn or error',
  },
} satisfies Record<string, Setting>;

export interface TlsFiles {
  clientCertFile?: string;
  clientKeyFile?: string;
  caFile?: string;
  serverName?: string;
}

/** Where Temporal is and how to reach it: all a connection needs. */
export interface TemporalConnectionConfig {
  address: string;
  namespace: string;
  /** Absent: plaintext. */
  tls?: TlsFiles;
  apiKey?: string;
}

export interface TemporalConfig extends TemporalConnectionConfig {
  /** Where Steward's workflows and activities go: what workers poll and what starters and commands start on. */
  taskQueue: string;
}

export interface WorkerConfig {
  temporal: TemporalConfig;
  concurrency: {
    maxConcurrentWorkflowTaskExecutions: number;
    maxConcurrentActivityTaskExecutions: number;
    maxConcurrentLocalActivityExecutions: number;
    maxCachedWorkflows: number;
  };
  rateLimits: { midonetActivitiesPerSecond?: number };
  /** A prebuilt workflow bundle; absent: the workflow code is bundled at start. */
  workflowBundle?: string;
  kubeconfig?: string;
  /** Absent: the worker registers no MidoNet activities. */
  midonet?: MidonetConnection;
  /** Where peer-pod VMs are made (activities/cloud/config.ts); absent unless a cloud provider is given. */
  cloud?: CloudConfig;
  http: { host: string; port: number };
  logLevel: LogLevel;
}

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

const temporalShape = {
  address: z
    .string()
    .regex(/^[^\s:/]+:\d{1,5}$/, { error: (issue) => `must be host:port, got "${String(issue.input)}"` }),
  namespace: z.string().min(1, 'must not be empty'),
  tls: flag.optional(),
  tlsCert: readableFile.optional(),
  tlsKey: readableFile.optional(),
  tlsCa: readableFile.optional(),
  tlsServerName: z.string().min(1).optional(),
  apiKey: z.string().min(1, 'must not be empty').optional(),
  taskQueue: z.string().min(1, 'must not be empty'),
};

const workerShape = {
  ...temporalShape,
  maxConcurrentWorkflowTasks: whole(2), // the SDK needs two: one sticky and one normal poller
  maxConcurrentActivities: whole(1),
  maxConcurrentLocalActivities: whole(1),
  maxCachedWorkflows: whole(0),
  workflowBundle: readableFile.optional(),
  midonetActivitiesPerSecond: z
    .string()
    .transform(Number)
    .pipe(z.number({ error: 'must be a number' }).positive('must be more than 0'))
    .optional(),
  kubeconfig: readableFile.optional(),
  midonetUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  midonetUsername: z.string().min(1).optional(),
  midonetPassword: z.string().min(1).optional(),
  midonetTenant: z.string().min(1).optional(),
  httpHost: z.string().min(1),
  httpPort: whole(0, 65535),
  logLevel: z.enum(logLevels, { error: `must be one of ${logLevels.join(', ')}` }),
};

type TemporalValues = z.infer<z.ZodObject<typeof temporalShape>>;

function tlsRules(v: TemporalValues, ctx: z.RefinementCtx) {
  const missing = (path: keyof typeof temporalSettings, because: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message: `is required ${because}` });
  if (v.tlsCert && !v.tlsKey)
    missing('tlsKey', `with a client certificate (${settingLabel('tlsCert', temporalSettings.tlsCert)})`);
  if (v.tlsKey && !v.tlsCert)
    missing('tlsCert', `with a client key (${settingLabel('tlsKey', temporalSettings.tlsKey)})`);
  if (v.tls === false && (v.apiKey || v.tlsCert || v.tlsCa)) {
    ctx.addIssue({ code: 'custom', path: ['tls'], message: 'cannot be false with an API key or TLS files' });
  }
}

function temporalConfig(v: TemporalValues): TemporalConfig {
  const useTls = v.tls ?? Boolean(v.apiKey || v.tlsCert || v.tlsCa || v.tlsServerName);
  return {
    address: v.address,
    namespace: v.namespace,
    tls: useTls
      ? { clientCertFile: v.tlsCert, clientKeyFile: v.tlsKey, caFile: v.tlsCa, serverName: v.tlsServerName }
      : undefined,
    apiKey: v.apiKey,
    taskQueue: v.taskQueue,
  };
}

/** The Temporal settings alone (connection and task queue), as the starter and the operator commands take them. */
export function loadTemporalConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const schema = z.object(temporalShape).superRefine(tlsRules);
  return temporalConfig(parseSettings(temporalSettings, schema, flags, env));
}

export function loadWorkerConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const schema = z.object(workerShape).superRefine((v, ctx) => {
    tlsRules(v, ctx);
    if (v.midonetUrl) {
      const because = `with ${settingLabel('midonetUrl', workerSettings.midonetUrl)}`;
      if (!v.midonetUsername)
        ctx.addIssue({ code: 'custom', path: ['midonetUsername'], message: `is required ${because}` });
      if (!v.midonetPassword)
        ctx.addIssue({ code: 'custom', path: ['midonetPassword'], message: `is required ${because}` });
    }
  });
  const v = parseSettings(workerSettings, schema, flags, env);
  return {
    temporal: temporalConfig(v),
    concurrency: {
      maxConcurrentWorkflowTaskExecutions: v.maxConcurrentWorkflowTasks,
      maxConcurrentActivityTaskExecutions: v.maxConcurrentActivities,
      maxConcurrentLocalActivityExecutions: v.maxConcurrentLocalActivities,
      maxCachedWorkflows: v.maxCachedWorkflows,
    },
    rateLimits: { midonetActivitiesPerSecond: v.midonetActivitiesPerSecond },
    workflowBundle: v.workflowBundle,
    kubeconfig: v.kubeconfig,
    midonet:
      v.midonetUrl && v.midonetUsername && v.midonetPassword
        ? { baseUrl: v.midonetUrl, username: v.midonetUsername, password: v.midonetPassword, tenant: v.midonetTenant }
        : undefined,
    // Opt-in, like MidoNet: a worker given no provider runs no cloud activities (`steward up` gives libvirt).
    cloud: flags.cloudProvider || env[cloudSettings.cloudProvider.env] ? loadCloudConfig(flags, env) : undefined,
    http: { host: v.httpHost, port: v.httpPort },
    logLevel: v.logLevel,
  };
}

const hidden = '[redacted]';

/** The configuration as it may be logged: credentials never reach a log line, whatever logger is used. */
export function redacted(config: WorkerConfig): WorkerConfig {
  return {
    ...config,
    temporal: { ...config.temporal, apiKey: config.temporal.apiKey && hidden },
    midonet: config.midonet && { ...config.midonet, password: hidden },
  };
}
