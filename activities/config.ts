import { z } from 'zod';
import { kubeconfigFiles, kubeconfigSetting } from '../platform/kubernetes/kubeconfig';
import { ConfigError, flag, parseSettings, settingLabel, type Flags, type Setting } from '../platform/settings';
import { backendsSchema, backendsSetting, type Backend } from '../platform/backends';
import { temporalUiUrl, temporalUiUrlSetting } from '../platform/temporal-config';
import { cloudSettings, loadCloudConfig, type CloudConfig } from './cloud/config';
import { givenCloudProvider } from '../platform/peerpod-clouds';
import type { MidonetConnection } from './midonet/http';

/**
 * What the activities reach, from flags or environment variables like every other setting: the cluster, MidoNet,
 * and the cloud of peer-pod VMs (cloud/config.ts). A backend left unset gets no activities; one STEWARD_BACKENDS
 * names requires its settings, and one it leaves out gets no activities whatever is set.
 */
export const activitySettings = {
  kubeconfig: kubeconfigSetting,
  backends: backendsSetting,
  // Each MidoNet setting also takes midonet-kubernetes' variable (its envconfig prefix MIDONETKUBE_), as it is.
  midonetUrl: {
    env: 'MIDONET_API_URL',
    alias: 'MIDONETKUBE_MIDONET_API',
    arg: 'url',
    description: 'MidoNet REST API root, e.g. http://midonet:8181/midonet-api; no MidoNet activities when unset',
  },
  midonetUsername: {
    env: 'MIDONET_USERNAME',
    alias: 'MIDONETKUBE_MIDONET_USERNAME',
    arg: 'name',
    description: 'MidoNet user (needed with the URL)',
  },
  midonetPassword: {
    env: 'MIDONET_PASSWORD',
    alias: 'MIDONETKUBE_MIDONET_PASSWORD',
    secret: true,
    description: 'MidoNet password (needed with the URL)',
  },
  midonetProject: {
    env: 'MIDONET_PROJECT',
    alias: 'MIDONETKUBE_MIDONET_PROJECT',
    arg: 'name',
    description: 'MidoNet project sent at login (X-Auth-Project); none when unset',
    // Upstream's "tenant" is the cluster's (MIDONETKUBE_TENANT): a variable of that name meaning the project misleads.
    refuses: {
      env: 'MIDONET_TENANT',
      because:
        "is not read: the MidoNet project (X-Auth-Project) is MIDONET_PROJECT (midonet-kubernetes' MIDONETKUBE_MIDONET_PROJECT); the tenant of the cluster's objects is MIDONETKUBE_TENANT",
    },
  },
  nodeAnnotator: {
    env: 'STEWARD_NODE_ANNOTATOR',
    arg: 'bool',
    default: 'true',
    description:
      "fill a Node's midonet.org/host-id, tunnel-endpoint-ip and tunnel-zone-id annotations when missing, as midonet-kubernetes' nodeannotator controller did (unset: on, unless MIDONETKUBE_ENABLED_CONTROLLERS leaves nodeannotator out)",
  },
  temporalUiUrl: {
    ...temporalUiUrlSetting,
    description: `${temporalUiUrlSetting.description}, written on the Translations and PeerPods Steward writes`,
  },
} satisfies Record<string, Setting>;

export interface ActivitiesConfig {
  kubeconfig?: string;
  /** The backends STEWARD_BACKENDS names; absent when it is unset (then each runs where its settings are given). */
  backends?: Backend[];
  /** Variables set for a backend STEWARD_BACKENDS leaves out, ignored: the worker says so once at start. */
  ignored: string[];
  /** Absent: no MidoNet activities. */
  midonet?: MidonetConnection;
  /** Where peer-pod VMs are made (cloud/config.ts); absent unless a cloud provider is given. */
  cloud?: CloudConfig;
  /** The Temporal UI's address: the objects Steward writes then link their workflow's page. */
  temporalUiUrl?: string;
  /** Nodes' midonet.org annotations filled from MidoNet's hosts (model/translation/node-annotator.ts). */
  nodeAnnotator: boolean;
}

const BACKENDS_LABEL = settingLabel('backends', backendsSetting);
const MIDONET_KEYS = ['midonetUrl', 'midonetUsername', 'midonetPassword', 'midonetProject'] as const;

/**
 * A worker of peer pods alone ignores MidoNet's variables, and one of MidoNet alone the cloud's, rather than refusing
 * them: the Secret and ConfigMap both containers read whole may be shared with the other profile (MIDONET_PASSWORD
 * beside TEMPORAL_API_KEY in one Secret), and nothing of an absent backend runs to use them. Names the ones set.
 */
function settingsOfAbsentBackends(backends: Backend[] | undefined, flags: Flags, env: NodeJS.ProcessEnv): string[] {
  if (!backends) return [];
  const set = (key: string, setting: Setting) =>
    flags[key] !== undefined || env[setting.env] || (setting.alias && env[setting.alias]);
  const midonet = backends.includes('midonet')
    ? []
    : MIDONET_KEYS.filter((key) => set(key, activitySettings[key])).map((key) => activitySettings[key].env);
  const cloud = backends.includes('peerpods')
    ? []
    : Object.entries(cloudSettings)
        .filter(([key, setting]) => set(key, setting))
        .map(([, setting]) => setting.env);
  return [...midonet, ...cloud];
}

/** Whether the worker runs cloud activities: named in STEWARD_BACKENDS (a provider then required), else a provider given. */
function wantsCloud(backends: Backend[] | undefined, flags: Flags, env: NodeJS.ProcessEnv): boolean {
  const given = Boolean(givenCloudProvider(flags, env));
  if (!backends) return given;
  if (backends.includes('peerpods') && !given)
    throw new ConfigError([
      `${settingLabel('cloudProvider', cloudSettings.cloudProvider)}: is required with ${BACKENDS_LABEL} peerpods`,
    ]);
  return backends.includes('peerpods');
}

/** midonet-kubernetes' list of controllers to run (its MIDONETKUBE_ENABLED_CONTROLLERS), read for its node annotator. */
const MK_ENABLED_CONTROLLERS = 'MIDONETKUBE_ENABLED_CONTROLLERS';

const schema = z
  .object({
    kubeconfig: kubeconfigFiles.optional(),
    backends: backendsSchema.optional(),
    midonetUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    midonetUsername: z.string().min(1).optional(),
    midonetPassword: z.string().min(1).optional(),
    midonetProject: z.string().min(1).optional(),
    nodeAnnotator: flag,
    temporalUiUrl: temporalUiUrl.optional(),
  })
  .superRefine((v, ctx) => {
    if (v.backends?.includes('midonet') && !v.midonetUrl)
      ctx.addIssue({ code: 'custom', path: ['midonetUrl'], message: `is required with ${BACKENDS_LABEL} midonet` });
    if (!v.midonetUrl || (v.backends && !v.backends.includes('midonet'))) return;
    const because = `with ${settingLabel('midonetUrl', activitySettings.midonetUrl)}`;
    for (const key of ['midonetUsername', 'midonetPassword'] as const) {
      if (!v[key]) ctx.addIssue({ code: 'custom', path: [key], message: `is required ${because}` });
    }
  });

export function loadActivitiesConfig(flags: Flags = {}, env: NodeJS.ProcessEnv = process.env): ActivitiesConfig {
  const mkControllers = env[MK_ENABLED_CONTROLLERS];
  const given = flags.nodeAnnotator !== undefined || env[activitySettings.nodeAnnotator.env] !== undefined;
  // midonet-kubernetes' own switch, taken as it is when Steward's is not given.
  const annotatorEnv =
    given || mkControllers === undefined
      ? env
      : { ...env, [activitySettings.nodeAnnotator.env]: String(mkControllers.split(',').includes('nodeannotator')) };
  const v = parseSettings(activitySettings, schema, flags, annotatorEnv);
  const midonet = !v.backends || v.backends.includes('midonet');
  return {
    kubeconfig: v.kubeconfig,
    ...(v.backends ? { backends: v.backends } : {}),
    ignored: settingsOfAbsentBackends(v.backends, flags, env),
    midonet:
      midonet && v.midonetUrl && v.midonetUsername && v.midonetPassword
        ? { baseUrl: v.midonetUrl, username: v.midonetUsername, password: v.midonetPassword, project: v.midonetProject }
        : undefined,
    // Opt-in, like MidoNet: a worker given no provider runs no cloud activities (`steward up` gives libvirt).
    cloud: wantsCloud(v.backends, flags, env) ? loadCloudConfig(flags, env) : undefined,
    temporalUiUrl: v.temporalUiUrl,
    nodeAnnotator: v.nodeAnnotator,
  };
}

/** The configuration as it may be logged: its own fields alone, and the MidoNet password never reaches a log line. */
export function redactedActivities(config: ActivitiesConfig): ActivitiesConfig {
  const { kubeconfig, backends, ignored, midonet, cloud, temporalUiUrl, nodeAnnotator } = config;
  return {
    kubeconfig,
    ...(backends ? { backends } : {}),
    ignored,
    midonet: midonet && { ...midonet, password: '[redacted]' },
    cloud,
    temporalUiUrl,
    nodeAnnotator,
  };
}
