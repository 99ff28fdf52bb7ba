import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { loadClientConfig, type ConfigDataSource } from '@temporalio/envconfig';
import { z } from 'zod';
import { CLUSTER_ID, inCluster, TASK_QUEUE } from '../model/naming';
import {
  ConfigError,
  flag,
  parseSettings,
  readableFile,
  settingLabel,
  type Flags,
  type Setting,
  type SettingsLayer,
} from './settings';

/**
 * Where Temporal is and how to reach it, as every Steward process and command reads it (flags, environment, and a
 * profile of Temporal's client configuration file, as Temporal's CLI and SDKs read them): the worker, the starter and
 * the operator commands alike. The connection factory is temporal-connection.ts.
 */

/** Which profile of which file, read before the other settings: the profile's values sit under theirs. */
const profileSettings = {
  profile: {
    env: 'TEMPORAL_PROFILE',
    arg: 'name',
    description:
      "profile of Temporal's client configuration file to take the settings above from, where neither their flag nor their variable is given",
    whenUnset: 'the profile "default", if the file has one',
  },
  configFile: {
    env: 'TEMPORAL_CONFIG_FILE',
    arg: 'file',
    description: "Temporal's client configuration file (TOML), as the temporal CLI and Temporal's SDKs read it",
    whenUnset: '$XDG_CONFIG_HOME or ~/.config, then temporalio/temporal.toml, if there',
  },
} satisfies Record<string, Setting>;

export const temporalSettings = {
  address: {
    env: 'TEMPORAL_ADDRESS',
    arg: 'host:port',
    default: '127.0.0.1:7233',
    description: 'Temporal frontend address',
  },
  // Not --namespace: in the operator commands, as in kubectl, -n/--namespace is the Kubernetes namespace.
  temporalNamespace: {
    env: 'TEMPORAL_NAMESPACE',
    arg: 'name',
    default: 'default',
    description: 'Temporal namespace',
    formerFlag: 'namespace',
  },
  tls: { env: 'TEMPORAL_TLS', description: 'connect with TLS (implied by a TLS file or an API key)' },
  // Named as Temporal's clients and CLI name them (its environment configuration); Steward's first names still read.
  tlsCertPath: {
    env: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    alias: 'TEMPORAL_TLS_CERT',
    aliasOf: "Steward's former",
    formerFlag: 'tls-cert',
    arg: 'file',
    description: 'client certificate (PEM) for mTLS; needs the key',
  },
  tlsKeyPath: {
    env: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
    alias: 'TEMPORAL_TLS_KEY',
    aliasOf: "Steward's former",
    formerFlag: 'tls-key',
    arg: 'file',
    description: 'client private key (PEM) for mTLS; needs the certificate',
  },
  tlsCaPath: {
    env: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    alias: 'TEMPORAL_TLS_CA',
    aliasOf: "Steward's former",
    formerFlag: 'tls-ca',
    arg: 'file',
    description: 'CA certificate (PEM) of the server, when the system does not trust it',
  },
  // The PEM itself, as the temporal CLI's --tls-*-data and envconfig's *_DATA take it (e.g. a Secret's key as a
  // variable). One of the two ways per file: both refused, as the temporal CLI refuses them.
  tlsCertData: {
    env: 'TEMPORAL_TLS_CLIENT_CERT_DATA',
    arg: 'pem',
    description: 'client certificate as PEM text, in place of --tls-cert-path',
  },
  tlsKeyData: {
    env: 'TEMPORAL_TLS_CLIENT_KEY_DATA',
    arg: 'pem',
    secret: true,
    // temporal --tls-key-data: one command line serves both tools.
    secretFlag: true,
    description: 'client private key as PEM text, in place of --tls-key-path',
  },
  tlsCaData: {
    env: 'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
    arg: 'pem',
    description: "server's CA certificate as PEM text, in place of --tls-ca-path",
  },
  tlsServerName: {
    env: 'TEMPORAL_TLS_SERVER_NAME',
    arg: 'name',
    description: 'server name to verify (SNI) when it differs from the address host',
  },
  apiKey: {
    env: 'TEMPORAL_API_KEY',
    arg: 'key',
    secret: true,
    // temporal --api-key: one command line serves both tools.
    secretFlag: true,
    description: 'API key (Temporal Cloud); implies TLS',
  },
  // temporal --grpc-meta, as its CLI spells it; TEMPORAL_GRPC_META_<KEY> are read as envconfig reads them
  // (loadTemporalProfile), so the variable named here is a pattern, never read as it is.
  grpcMeta: {
    env: 'TEMPORAL_GRPC_META_<KEY>',
    arg: 'key=value',
    repeatable: true,
    description:
      "gRPC header on every call to Temporal, repeated for more (e.g. a proxy's token); TEMPORAL_GRPC_META_X_TENANT=a sets x-tenant; never logged",
  },
  ...profileSettings,
  // Here rather than with the worker's: the starter, the Schedule and `steward sweep` start work on it.
  taskQueue: {
    env: 'STEWARD_TASK_QUEUE',
    arg: 'name',
    default: TASK_QUEUE,
    description:
      "task queue of Steward's workflows and activities: the workers poll it, the starter and the commands start work on it",
  },
  // With the connection: every process and command of a cluster must agree on it, as on the namespace.
  clusterId: {
    env: 'STEWARD_CLUSTER_ID',
    arg: 'id',
    description:
      'set when several Kubernetes clusters share one Temporal namespace: prefixes the workflow ids, the Schedule and the task queue with <id>/ (e.g. prod-eu/pod/default/web)',
  },
} satisfies Record<string, Setting>;

/**
 * Where the Temporal UI is, for links to each object's workflow page: printed by `status` and `list -o wide`, and
 * written by the worker on the Translations and PeerPods it writes (TEMPORAL_UI_ANNOTATION).
 */
export const temporalUiUrlSetting = {
  env: 'STEWARD_TEMPORAL_UI_URL',
  arg: 'url',
  description:
    "the Temporal UI's address, e.g. http://temporal-web.temporal:8080 (Temporal's Helm chart, release temporal in namespace temporal): links to each object's workflow page",
} satisfies Setting;

export const temporalUiUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** Each PEM as a file, or written out (a `*_DATA` variable, a `--tls-*-data` flag, a profile's `*_data`). */
export interface TemporalTls {
  clientCertFile?: string;
  clientKeyFile?: string;
  caFile?: string;
  clientCertPem?: string;
  clientKeyPem?: string;
  caPem?: string;
  serverName?: string;
}

/** Where Temporal is and how to reach it: all a connection needs. */
export interface TemporalConnectionConfig {
  address: string;
  namespace: string;
  /** Absent: plaintext. */
  tls?: TemporalTls;
  apiKey?: string;
  /** gRPC headers on every call (a profile's `grpc_meta`). */
  metadata?: Record<string, string>;
}

export interface TemporalConfig extends TemporalConnectionConfig {
  /** Where Steward's workflows and activities go: what workers poll and what starters and commands start on. */
  taskQueue: string;
  /** The cluster's prefix of every workflow id, Schedule and task queue (`inCluster`); absent: none. */
  clusterId?: string;
}

/** PEM text; a path given in its place is refused (without showing it: the key's is a secret). */
const pemText = z.string().refine((text) => text.includes('-----BEGIN '), {
  error: 'must be PEM text (-----BEGIN …); a file goes in the *-path setting',
});

/**
 * `key=value` a line, as the repeated --grpc-meta gives them; keys lower case, as gRPC sends them. A line without
 * `=` is refused without being shown (it may be a token given without its key).
 */
const grpcMetaLines = z.string().transform((lines, ctx) => {
  const headers: Record<string, string> = {};
  for (const line of lines.split('\n')) {
    const at = line.indexOf('=');
    if (at <= 0) {
      ctx.addIssue({ code: 'custom', message: 'must be key=value, with a key before the =' });
      return z.NEVER;
    }
    headers[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1);
  }
  return headers;
});

const GRPC_META_PREFIX = 'TEMPORAL_GRPC_META_';

/**
 * Every variable of `env` that gives Temporal's client a setting beside its address and namespace: the profile, the
 * configuration file, TLS, the API key, gRPC headers, under their names and aliases. What a process reaching a
 * Temporal of its own (the embedded stack's) must not inherit from a shell set up for another one.
 */
export function temporalClientVariables(env: NodeJS.ProcessEnv): string[] {
  const settings: Setting[] = [
    ...Object.values(profileSettings),
    ...Object.entries(temporalSettings)
      .filter(([key]) => key !== 'address' && key !== 'temporalNamespace')
      .map(([, setting]) => setting as Setting),
  ];
  const named = settings
    .flatMap((s) => [s.env, s.alias, s.formerEnv])
    .filter((v): v is string => v !== undefined && !v.includes('<'));
  return [...named, ...Object.keys(env).filter((name) => name.startsWith(GRPC_META_PREFIX))];
}

/**
 * The profile's gRPC headers with TEMPORAL_GRPC_META_<KEY> over them, as envconfig and the temporal CLI read them:
 * the key lower case with `_` as `-` (TEMPORAL_GRPC_META_X_TENANT is x-tenant), an empty variable removing the header.
 */
function withGrpcMetaFromEnv(
  profile: Record<string, string> | undefined,
  env: NodeJS.ProcessEnv,
): Record<string, string> | undefined {
  const headers = { ...profile };
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(GRPC_META_PREFIX) || name === GRPC_META_PREFIX) continue;
    const key = name.slice(GRPC_META_PREFIX.length).toLowerCase().replaceAll('_', '-');
    if (value) headers[key] = value;
    else delete headers[key];
  }
  return Object.keys(headers).length > 0 ? headers : undefined;
}

/** Each TLS file, given as a path or as its PEM: the settings of both, and the profile's PEM for it. */
const tlsPairs = [
  { path: 'tlsCertPath', data: 'tlsCertData', pem: 'clientCert' },
  { path: 'tlsKeyPath', data: 'tlsKeyData', pem: 'clientKey' },
  { path: 'tlsCaPath', data: 'tlsCaData', pem: 'ca' },
] as const;

export const temporalShape = {
  address: z
    .string()
    .regex(/^[^\s:/]+:\d{1,5}$/, { error: (issue) => `must be host:port, got "${String(issue.input)}"` }),
  temporalNamespace: z.string().min(1, 'must not be empty'),
  tls: flag.optional(),
  tlsCertPath: readableFile.optional(),
  tlsKeyPath: readableFile.optional(),
  tlsCaPath: readableFile.optional(),
  tlsCertData: pemText.optional(),
  tlsKeyData: pemText.optional(),
  tlsCaData: pemText.optional(),
  tlsServerName: z.string().min(1).optional(),
  grpcMeta: grpcMetaLines.optional(),
  apiKey: z.string().min(1, 'must not be empty').optional(),
  profile: z.string().min(1, 'must not be empty').optional(),
  configFile: readableFile.optional(),
  taskQueue: z.string().min(1, 'must not be empty'),
  clusterId: z
    .string()
    .refine((id) => CLUSTER_ID.pattern.test(id) && !CLUSTER_ID.reserved.includes(id), {
      error: (issue) => `must be ${CLUSTER_ID.describe}, got "${String(issue.input)}"`,
    })
    .optional(),
};

export type TemporalValues = z.infer<z.ZodObject<typeof temporalShape>>;

/** What a profile gives: values of the settings above, and what no setting holds. */
export interface TemporalProfile {
  /** Absent: no profile read (no file, and none named). */
  layer?: SettingsLayer;
  /** PEM written in the file itself (`*_data`); each gives way to a file named for it by flag or variable. */
  pem: { clientCert?: string; clientKey?: string; ca?: string };
  /** The profile's `grpc_meta`, with the TEMPORAL_GRPC_META_* variables over it; --grpc-meta goes over both. */
  grpcMeta?: Record<string, string>;
}

/**
 * Where Temporal's CLI and SDKs look when TEMPORAL_CONFIG_FILE is unset: @temporalio/envconfig's rule, which it does
 * not export (a test holds the two together). Steward names the file it read in its messages, so it finds it itself.
 */
export function defaultConfigFile(env: NodeJS.ProcessEnv, platform = process.platform): string | undefined {
  const { APPDATA, HOME, XDG_CONFIG_HOME } = env;
  let dir: string | undefined;
  if (platform === 'win32') dir = APPDATA;
  else if (platform === 'darwin') dir = HOME && join(HOME, 'Library', 'Application Support');
  else if (XDG_CONFIG_HOME) dir = isAbsolute(XDG_CONFIG_HOME) ? XDG_CONFIG_HOME : undefined;
  else dir = HOME && join(HOME, '.config');
  return dir ? join(dir, 'temporalio', 'temporal.toml') : undefined;
}

/** Whether the flag or the variable (or its alias) of a Temporal setting gives it a value. */
function givenOutsideProfile(key: keyof typeof temporalSettings, flags: Flags, env: NodeJS.ProcessEnv): boolean {
  const setting: Setting = temporalSettings[key];
  return flags[key] !== undefined || Boolean(env[setting.env]) || Boolean(setting.alias && env[setting.alias]);
}

const pathOf = (source?: ConfigDataSource) => (source && 'path' in source ? source.path : undefined);
const pemOf = (source?: ConfigDataSource) =>
  source && 'data' in source ? Buffer.from(source.data).toString('utf8') : undefined;

/**
 * The profile of Temporal's client configuration file that the flags and environment name (`--profile`, else
 * TEMPORAL_PROFILE, else "default" if the file has it), read with @temporalio/envconfig. A file named but missing, a
 * file it cannot read, or a profile named but not in it: a ConfigError naming the file and the profile. No file and
 * no profile named: nothing, as for Temporal's CLI.
 */
export function loadTemporalProfile(flags: Flags, env: NodeJS.ProcessEnv): TemporalProfile {
  const { grpcMeta, ...profile } = readTemporalProfile(flags, env);
  const headers = withGrpcMetaFromEnv(grpcMeta, env);
  return { ...profile, ...(headers ? { grpcMeta: headers } : {}) };
}

/** The profile as loadTemporalProfile says, without the TEMPORAL_GRPC_META_* variables. */
function readTemporalProfile(flags: Flags, env: NodeJS.ProcessEnv): TemporalProfile {
  const schema = z.object({ profile: temporalShape.profile, configFile: temporalShape.configFile });
  const named = parseSettings(profileSettings, schema, flags, env);
  const file = named.configFile ?? defaultConfigFile(env);
  const profileLabel = settingLabel('profile', profileSettings.profile);
  if (!file) {
    if (!named.profile) return { pem: {} };
    throw new ConfigError([
      `${profileLabel}: no configuration file to read profile "${named.profile}" from (TEMPORAL_CONFIG_FILE unset, and no home directory in the environment)`,
    ]);
  }
  const name = named.profile ?? 'default';
  let profiles;
  try {
    // Not strict: the file is shared with Temporal's CLI and SDKs, whose newer keys must not stop Steward.
    ({ profiles } = loadClientConfig({ configSource: { path: file } }));
  } catch (error) {
    throw new ConfigError([`${file} (profile "${name}"): ${error instanceof Error ? error.message : String(error)}`]);
  }
  const profile = profiles[name];
  if (!profile) {
    if (!named.profile) return { pem: {} };
    const known = Object.keys(profiles);
    const has = known.length > 0 ? `it has ${known.join(', ')}` : existsSync(file) ? 'it has none' : 'no such file';
    throw new ConfigError([`${profileLabel}: no profile "${name}" in ${file} (${has})`]);
  }
  const { tls } = profile;
  const pem: TemporalProfile['pem'] = {
    clientCert: pemOf(tls?.clientCert),
    clientKey: pemOf(tls?.clientKey),
    ca: pemOf(tls?.serverCACert),
  };
  const values: Partial<Record<keyof typeof temporalSettings, string>> = {
    address: profile.address,
    temporalNamespace: profile.namespace,
    apiKey: profile.apiKey,
    // As envconfig: a [tls] table turns TLS on unless it says disabled.
    tls: tls && String(!tls.disabled),
    tlsCertPath: pathOf(tls?.clientCert),
    tlsKeyPath: pathOf(tls?.clientKey),
    tlsCaPath: pathOf(tls?.serverCACert),
    tlsServerName: tls?.serverName,
  };
  // A file given by flag or variable, as a path or as PEM, replaces the profile's, in whichever form it has it.
  for (const pair of tlsPairs) {
    if (!givenOutsideProfile(pair.path, flags, env) && !givenOutsideProfile(pair.data, flags, env)) continue;
    delete values[pair.path];
    delete pem[pair.pem];
  }
  return {
    layer: { from: `profile "${name}" of ${file}`, values },
    pem,
    ...(profile.grpcMeta && Object.keys(profile.grpcMeta).length ? { grpcMeta: profile.grpcMeta } : {}),
  };
}

/**
 * The certificate, key and CA as files, else as PEM given by flag or variable, else as the profile's PEM (which
 * loadTemporalProfile drops where a flag or variable gives the file either way).
 */
const tlsSources = (v: TemporalValues, { pem }: TemporalProfile) => ({
  clientCertFile: v.tlsCertPath,
  clientKeyFile: v.tlsKeyPath,
  caFile: v.tlsCaPath,
  clientCertPem: v.tlsCertPath ? undefined : (v.tlsCertData ?? pem.clientCert),
  clientKeyPem: v.tlsKeyPath ? undefined : (v.tlsKeyData ?? pem.clientKey),
  caPem: v.tlsCaPath ? undefined : (v.tlsCaData ?? pem.ca),
});

export const tlsRules = (profile: TemporalProfile) => (v: TemporalValues, ctx: z.RefinementCtx) => {
  const missing = (path: keyof typeof temporalSettings, because: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message: `is required ${because}` });
  for (const { path, data } of tlsPairs) {
    if (v[path] === undefined || v[data] === undefined) continue;
    const message = `cannot be used with ${settingLabel(path, temporalSettings[path])}: give the file one way`;
    ctx.addIssue({ code: 'custom', path: [data], message });
  }
  const s = tlsSources(v, profile);
  const cert = s.clientCertFile ?? s.clientCertPem;
  const key = s.clientKeyFile ?? s.clientKeyPem;
  if (cert && !key)
    missing('tlsKeyPath', `with a client certificate (${settingLabel('tlsCertPath', temporalSettings.tlsCertPath)})`);
  if (key && !cert)
    missing('tlsCertPath', `with a client key (${settingLabel('tlsKeyPath', temporalSettings.tlsKeyPath)})`);
  if (v.tls === false && (v.apiKey || cert || s.caFile || s.caPem)) {
    ctx.addIssue({ code: 'custom', path: ['tls'], message: 'cannot be false with an API key or TLS files' });
  }
};

export function temporalConfig(v: TemporalValues, profile: TemporalProfile): TemporalConfig {
  const sources = tlsSources(v, profile);
  const useTls = v.tls ?? Boolean(v.apiKey || v.tlsServerName || Object.values(sources).some(Boolean));
  return {
    address: v.address,
    namespace: v.temporalNamespace,
    tls: useTls ? { ...sources, serverName: v.tlsServerName } : undefined,
    apiKey: v.apiKey,
    ...(profile.grpcMeta || v.grpcMeta ? { metadata: { ...profile.grpcMeta, ...v.grpcMeta } } : {}),
    taskQueue: inCluster(v.taskQueue, v.clusterId),
    ...(v.clusterId ? { clusterId: v.clusterId } : {}),
  };
}

/** The configuration as it may be logged or printed: the API key, the client key's PEM and the headers' values hidden. */
export function redactedTemporal(config: TemporalConfig): TemporalConfig {
  const hidden = (value?: string) => value && '[redacted]';
  return {
    ...config,
    apiKey: hidden(config.apiKey),
    ...(config.tls ? { tls: { ...config.tls, clientKeyPem: hidden(config.tls.clientKeyPem) } } : {}),
    ...(config.metadata
      ? { metadata: Object.fromEntries(Object.keys(config.metadata).map((k) => [k, '[redacted]'])) }
      : {}),
  };
}

/** The Temporal settings alone (connection and task queue), as the starter and the operator commands take them. */
export function loadTemporalConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const profile = loadTemporalProfile(flags, env);
  const schema = z.object(temporalShape).superRefine(tlsRules(profile));
  return temporalConfig(parseSettings(temporalSettings, schema, flags, env, profile.layer), profile);
}
