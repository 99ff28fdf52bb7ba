import { z } from 'zod';
import { CLUSTER_ID, inCluster, TASK_QUEUE } from '../model/naming';
import { flag, parseSettings, readableFile, settingLabel, type Flags, type Setting } from './settings';

/**
 * Where Temporal is and how to reach it, as every Steward process and command reads it (flags and environment):
 * the worker, the starter and the operator commands alike. The connection factory is temporal-connection.ts.
 */

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
  description: "the Temporal UI's address, e.g. http://temporal-ui:8080: links to each object's workflow page",
} satisfies Setting;

export const temporalUiUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

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
  /** The cluster's prefix of every workflow id, Schedule and task queue (`inCluster`); absent: none. */
  clusterId?: string;
}

export const temporalShape = {
  address: z
    .string()
    .regex(/^[^\s:/]+:\d{1,5}$/, { error: (issue) => `must be host:port, got "${String(issue.input)}"` }),
  temporalNamespace: z.string().min(1, 'must not be empty'),
  tls: flag.optional(),
  tlsCertPath: readableFile.optional(),
  tlsKeyPath: readableFile.optional(),
  tlsCaPath: readableFile.optional(),
  tlsServerName: z.string().min(1).optional(),
  apiKey: z.string().min(1, 'must not be empty').optional(),
  taskQueue: z.string().min(1, 'must not be empty'),
  clusterId: z
    .string()
    .refine((id) => CLUSTER_ID.pattern.test(id) && !CLUSTER_ID.reserved.includes(id), {
      error: (issue) => `must be ${CLUSTER_ID.describe}, got "${String(issue.input)}"`,
    })
    .optional(),
};

export type TemporalValues = z.infer<z.ZodObject<typeof temporalShape>>;

export function tlsRules(v: TemporalValues, ctx: z.RefinementCtx) {
  const missing = (path: keyof typeof temporalSettings, because: string) =>
    ctx.addIssue({ code: 'custom', path: [path], message: `is required ${because}` });
  if (v.tlsCertPath && !v.tlsKeyPath)
    missing('tlsKeyPath', `with a client certificate (${settingLabel('tlsCertPath', temporalSettings.tlsCertPath)})`);
  if (v.tlsKeyPath && !v.tlsCertPath)
    missing('tlsCertPath', `with a client key (${settingLabel('tlsKeyPath', temporalSettings.tlsKeyPath)})`);
  if (v.tls === false && (v.apiKey || v.tlsCertPath || v.tlsCaPath)) {
    ctx.addIssue({ code: 'custom', path: ['tls'], message: 'cannot be false with an API key or TLS files' });
  }
}

export function temporalConfig(v: TemporalValues): TemporalConfig {
  const useTls = v.tls ?? Boolean(v.apiKey || v.tlsCertPath || v.tlsCaPath || v.tlsServerName);
  return {
    address: v.address,
    namespace: v.temporalNamespace,
    tls: useTls
      ? { clientCertFile: v.tlsCertPath, clientKeyFile: v.tlsKeyPath, caFile: v.tlsCaPath, serverName: v.tlsServerName }
      : undefined,
    apiKey: v.apiKey,
    taskQueue: inCluster(v.taskQueue, v.clusterId),
    ...(v.clusterId ? { clusterId: v.clusterId } : {}),
  };
}

/** The Temporal settings alone (connection and task queue), as the starter and the operator commands take them. */
export function loadTemporalConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): TemporalConfig {
  const schema = z.object(temporalShape).superRefine(tlsRules);
  return temporalConfig(parseSettings(temporalSettings, schema, flags, env));
}
