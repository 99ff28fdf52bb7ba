import { z } from 'zod';
import { listOrNone, parseSettings, type Flags, type Setting } from './settings';

/**
 * Which clouds this installation serves peer pods in. The worker makes and deletes VMs in one (its cloud provider);
 * the starter leaves a PeerPod of any other to the controller that serves it (peerpod-ctrl serves a cloud per PeerPod,
 * `spec.cloudProvider`), so it never holds one it cannot delete. Both read these, so they live here, below both.
 */

/** The clouds Steward can make and delete VMs in (cloud-api-adaptor's names for them, CLOUD_PROVIDER). */
export const STEWARD_CLOUDS = ['libvirt', 'aws'] as const;
export type StewardCloud = (typeof STEWARD_CLOUDS)[number];

export const cloudName = z.enum(STEWARD_CLOUDS, {
  error: (issue) => `must be ${STEWARD_CLOUDS.join(' or ')}, got "${String(issue.input)}"`,
});

export const cloudProviderSetting = {
  env: 'STEWARD_CLOUD_PROVIDER',
  // The key of cloud-api-adaptor's peer-pods-cm (its chart's configmap.yaml), so that ConfigMap serves as it is.
  alias: 'CLOUD_PROVIDER',
  aliasOf: "cloud-api-adaptor's",
  arg: 'name',
  description: 'where peer-pod VMs are created: libvirt or aws',
  whenUnset: 'the worker runs no cloud activities (no peer-pod VMs)',
} satisfies Setting;

export const peerPodCloudsSetting = {
  env: 'STEWARD_PEERPOD_CLOUDS',
  arg: 'list',
  description:
    "comma-separated clouds whose PeerPods (spec.cloudProvider) this installation serves, or 'none'; a PeerPod of another cloud is left as it is, to its own controller",
  whenUnset: 'the cloud provider (STEWARD_CLOUD_PROVIDER or CLOUD_PROVIDER) if given, else none',
} satisfies Setting;

/** The cloud provider as given (flag, variable or its alias), not validated: the loader that uses it validates it. */
export const givenCloudProvider = (flags: Flags, env: NodeJS.ProcessEnv): string | undefined =>
  (typeof flags.cloudProvider === 'string' && flags.cloudProvider) ||
  env[cloudProviderSetting.env] ||
  env[cloudProviderSetting.alias] ||
  undefined;

/** A served-clouds value: a comma-separated list of clouds, or `none`. */
export const peerPodCloudList = listOrNone.pipe(z.array(cloudName));

/** The clouds served: those listed, else the cloud provider's, else none (a worker with no cloud deletes no VM). */
export const servedClouds = (listed: StewardCloud[] | undefined, provider: StewardCloud | undefined): StewardCloud[] =>
  listed ?? (provider ? [provider] : []);

/** The cloud provider as given, checked as the worker checks it; undefined when not given. */
export const loadCloudProvider = (flags: Flags, env: NodeJS.ProcessEnv): StewardCloud | undefined =>
  parseSettings({ cloudProvider: cloudProviderSetting }, z.object({ cloudProvider: cloudName.optional() }), flags, env)
    .cloudProvider;
