import { accessSync, constants } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { cloudSettings, loadCloudConfig, type CloudConfig } from '../activities/cloud/config';
import type { MidonetConnection } from '../activities/midonet';
import { TASK_QUEUE } from '../workflows/naming';

/**
 * One setting, as a flag and as an environment variable. The CLI registers its flags from these tables and the
 * README's configuration table lists them, so a setting is named in exactly one place. The flag is `--<kebab key>`.
 * Secrets have no flag: a command line shows in `ps` and in shell history.
 */
export interface Setting {
  env: string;
  description: string;
  /** Placeholder of the flag's value (`--address <host:port>`); absent for a boolean switch. */
  arg?: string;
  default?: string;
  secret?: boolean;
}

export const temporalSettings = {
  address: { env: 'TEMPORAL_ADDRESS', arg: 'host:port', default: '127.0.0.1:7233', description: 'Temporal frontend address' },
  namespace: { env: 'TEMPORAL_NAMESPACE', arg: 'name', default: 'default', description: 'Temporal namespace' },
  tls: { env: 'TEMPORAL_TLS', description: 'connect with TLS (implied by a TLS file or an API key)' },
  tlsCert: { env: 'TEMPORAL_TLS_CERT', arg: 'file', description: 'client certificate (PEM) for mTLS; needs the key' },
  tlsKey: { env: 'TEMPORAL_TLS_KEY', arg: 'file', description: 'client private key (PEM) for mTLS; needs the certificate' },
  tlsCa: { env: 'TEMPORAL_TLS_CA', arg: 'file', description: 'CA certificate (PEM) of the server, when the system does not trust it' },
  tlsServerName: { env: 'TEMPORAL_TLS_SERVER_NAME', arg: 'name', description: 'server name to verify (SNI) when it differs from the address host' },
  apiKey: { env: 'TEMPORAL_API_KEY', secret: true, description: 'API key (Temporal Cloud); implies TLS' },
} satisfies Record<string, Setting>;

export const workerSettings = {
  ...temporalSettings,
  taskQueue: { env: 'STEWARD_TASK_QUEUE', arg: 'name', default: TASK_QUEUE, description: 'task queue the workflows and activities are polled from' },
  maxConcurrentWorkflowTasks: { env: 'STEWARD_MAX_CONCURRENT_WORKFLOW_TASKS', arg: 'n', default: '20', description: 'workflow task slots (SDK default 40; a local server needs few)' },
  maxConcurrentActivities: { env: 'STEWARD_MAX_CONCURRENT_ACTIVITIES', arg: 'n', default: '50', description: 'activity slots, sized to what the backends take' },
  maxConcurrentLocalActivities: { env: 'STEWARD_MAX_CONCURRENT_LOCAL_ACTIVITIES', arg: 'n', default: '50', description: 'local activity slots' },
  maxCachedWorkflows: { env: 'STEWARD_MAX_CACHED_WORKFLOWS', arg: 'n', default: '200', description: 'sticky cache size: ~1 MB each, keeps memory flat (SDK default grows with the heap)' },
  midonetActivitiesPerSecond: {
    env: 'STEWARD_MIDONET_ACTIVITIES_PER_SECOND',
    arg: 'n',
    description:
      "cap on MidoNet activities started per second, across every worker (Temporal's maxTaskQueueActivitiesPerSecond on the task queue, where MidoNet's are the only regular activities)",
  },
  kubeconfig: { env: 'KUBECONFIG', arg: 'file', description: 'kubeconfig of the cluster; else ~/.kube/config, else the in-cluster service account' },
  midonetUrl: { env: 'MIDONET_API_URL', arg: 'url', description: 'MidoNet REST API root, e.g. http://midonet:8181/midonet-api; no MidoNet activities when unset' },
  midonetUsername: { env: 'MIDONET_USERNAME', arg: 'name', description: 'MidoNet user (needed with the URL)' },
  midonetPassword: { env: 'MIDONET_PASSWORD', secret: true, description: 'MidoNet password (needed with the URL)' },
  midonetTenant: { env: 'MIDONET_TENANT', arg: 'name', description: 'MidoNet project sent at login (X-Auth-Project)' },
  httpHost: { env: 'STEWARD_HTTP_HOST', arg: 'address', default: '0.0.0.0', description: 'address of the health and metrics server' },
  httpPort: { env: 'STEWARD_HTTP_PORT', arg: 'port', default: '9464', description: 'port of /healthz, /readyz and /metrics (0: any free port)' },
  logLevel: { env: 'STEWARD_LOG_LEVEL', arg: 'level', default: 'info', description: 'trace, debug, info, warn or error' },
} satisfies Record<string, Setting>;

export const flagOf = (key: string, setting: Setting) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}${setting.arg ? ` <${setting.arg}>` : ''}`;

/** How a setting is named in error messages: both ways of giving it. */
export const settingLabel = (key: string, setting: Setting) => (setting.secret ? setting.env : `${flagOf(key, setting).split(' ')[0]} / ${setting.env}`);

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export interface TlsFiles {
  clientCertFile?: string;
  clientKeyFile?: string;
  caFile?: string;
  serverName?: string;
}

export interface TemporalConfig {
  address: string;
  namespace: string;
  /** Absent: plaintext. */
  tls?: TlsFiles;
  apiKey?: string;
}

export interface WorkerConfig {
  temporal: TemporalConfig;
  taskQueue: string;
  concurrency: {
    maxConcurrentWorkflowTaskExecutions: number;
    maxConcurrentActivityTaskExecutions: number;
    maxConcurrentLocalActivityExecutions: number;
    maxCachedWorkflows: number;
  };
  rateLimits: { midonetActivitiesPerSecond?: number };
  kubeconfig?: string;
  /** Absent: the worker registers no MidoNet activities. */
  midonet?: MidonetConnection;
  /** Where peer-pod VMs are made (activities/cloud/config.ts); absent unless STEWARD_CLOUD_PROVIDER is set. */
  cloud?: CloudConfig;
  http: { host: string; port: number };
  logLevel: LogLevel;
}

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof logLevels)[number];

/** Flag values as commander gives them (camelCase keys). */
export type Flags = Record<string, string | boolean | undefined>;

const readable = (file: string) => {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
};
export const readableFile = z.string().refine(readable, { error: (issue) => `cannot read file "${String(issue.input)}"` });
export const whole = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^\d+$/, { error: (issue) => `must be a whole number, got "${String(issue.input)}"` })
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const flag = z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).transform((v) => v === 'true' || v === '1');

const temporalShape = {
  address: z.string().regex(/^[^\s:/]+:\d{1,5}$/, { error: (issue) => `must be host:port, got "${String(issue.input)}"` }),
  namespace: z.string().min(1, 'must not be empty'),
  tls: flag.optional(),
  tlsCert: readableFile.optional(),
  tlsKey: readableFile.optional(),
  tlsCa: readableFile.optional(),
  tlsServerName: z.string().min(1).optional(),
  apiKey: z.string().min(1, 'must not be empty').optional(),
};

const workerShape = {
  ...temporalShape,
  taskQueue: z.string().min(1, 'must not be empty'),
  maxConcurrentWorkflowTasks: whole(2), // the SDK needs two: one sticky and one normal poller
  maxConcurrentActivities: whole(1),
  maxConcurrentLocalActivities: whole(1),
  maxCachedWorkflows: whole(0),
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
  const missing = (path: keyof typeof temporalSettings, because: string) => ctx.addIssue({ code: 'custom', path: [path], message: `is required ${because}` });
  if (v.tlsCert && !v.tlsKey) missing('tlsKey', `with a client certificate (${settingLabel('tlsCert', temporalSettings.tlsCert)})`);
  if (v.tlsKey && !v.tlsCert) missing('tlsCert', `with a client key (${settingLabel('tlsKey', temporalSettings.tlsKey)})`);
  if (v.tls === false && (v.apiKey || v.tlsCert || v.tlsCa)) {
    ctx.addIssue({ code: 'custom', path: ['tls'], message: 'cannot be false with an API key or TLS files' });
  }
}

function temporalConfig(v: TemporalValues): TemporalConfig {
  const useTls = v.tls ?? Boolean(v.apiKey || v.tlsCert || v.tlsCa || v.tlsServerName);
  return {
    address: v.address,
    namespace: v.namespace,
    tls: useTls ? { clientCertFile: v.tlsCert, clientKeyFile: v.tlsKey, caFile: v.tlsCa, serverName: v.tlsServerName } : undefined,
    apiKey: v.apiKey,
  };
}

/** Flag, else environment variable, else default; then validated, every problem named by its flag and variable. */
/** Flag, else environment variable, else default, validated by `schema`; every problem named by its flag and variable. */
export function parseSettings<S extends Record<string, Setting>, T>(settings: S, schema: z.ZodType<T>, flags: Flags, env: NodeJS.ProcessEnv): T {
  const raw = Object.fromEntries(
    Object.entries(settings).map(([key, setting]) => {
      const fromFlag = setting.secret ? undefined : flags[key];
      const value = typeof fromFlag === 'boolean' ? String(fromFlag) : (fromFlag ?? (env[setting.env] || undefined) ?? setting.default);
      return [key, value];
    }),
  );
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => {
      const key = String(issue.path[0]);
      const setting = (settings as Record<string, Setting | undefined>)[key];
      return setting ? `${settingLabel(key, setting)}: ${issue.message}` : issue.message;
    }),
  );
}

/** The Temporal connection settings alone, as the operator commands take them. */
export function loadTemporalConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const schema = z.object(temporalShape).superRefine(tlsRules);
  return temporalConfig(parseSettings(temporalSettings, schema, flags, env));
}

export function loadWorkerConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const schema = z.object(workerShape).superRefine((v, ctx) => {
    tlsRules(v, ctx);
    if (v.midonetUrl) {
      const because = `with ${settingLabel('midonetUrl', workerSettings.midonetUrl)}`;
      if (!v.midonetUsername) ctx.addIssue({ code: 'custom', path: ['midonetUsername'], message: `is required ${because}` });
      if (!v.midonetPassword) ctx.addIssue({ code: 'custom', path: ['midonetPassword'], message: `is required ${because}` });
    }
  });
  const v = parseSettings(workerSettings, schema, flags, env);
  return {
    temporal: temporalConfig(v),
    taskQueue: v.taskQueue,
    concurrency: {
      maxConcurrentWorkflowTaskExecutions: v.maxConcurrentWorkflowTasks,
      maxConcurrentActivityTaskExecutions: v.maxConcurrentActivities,
      maxConcurrentLocalActivityExecutions: v.maxConcurrentLocalActivities,
      maxCachedWorkflows: v.maxCachedWorkflows,
    },
    rateLimits: { midonetActivitiesPerSecond: v.midonetActivitiesPerSecond },
    kubeconfig: v.kubeconfig,
    midonet:
      v.midonetUrl && v.midonetUsername && v.midonetPassword
        ? { baseUrl: v.midonetUrl, username: v.midonetUsername, password: v.midonetPassword, tenant: v.midonetTenant }
        : undefined,
    // Opt-in, like MidoNet: a worker without the variable runs no cloud activities (`steward up` sets it).
    cloud: env[cloudSettings.provider.env] ? loadCloudConfig(env) : undefined,
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

/** Flags without defaults: a given flag wins over the variable, and the loader applies the defaults. Secrets have no flag. */
export function addSettingFlags(command: Command, settings: Record<string, Setting>): Command {
  for (const [key, setting] of Object.entries(settings)) {
    if (setting.secret) continue;
    command.option(flagOf(key, setting), `${setting.description} [${setting.env}${setting.default ? `, default ${setting.default}` : ''}]`);
  }
  return command;
}
