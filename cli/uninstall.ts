import * as k8s from '@kubernetes/client-node';
import type { Command } from 'commander';
import { z } from 'zod';
import { kubeconfigFiles, kubeconfigSetting, loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { addSettingFlags, parseSettings, type Flags } from '../platform/settings';
import { loadTemporalConfig, temporalSettings, type TemporalConfig } from '../platform/temporal-config';
import { API_VERSIONS, PEERPOD_API, TRANSLATION_API } from '../model/naming';
import { starterSettings } from '../starter/config';
import { checkFlags } from './object-flags';
import { table } from './operator';
import { outputOf, outputOption, serialize } from './output';
import {
  changePatch,
  formatUninstall,
  HOW_TO_STOP,
  leaseHeld,
  planObject,
  planUninstall,
  refusals,
  type Change,
  type LeaseView,
  type ListedObject,
  type Liveness,
  type UninstallKind,
  type UninstallReport,
} from './uninstall-plan';
import { pollersOf, stewardTaskQueues } from './pollers';

/**
 * `steward uninstall [--dry-run]`: takes back what Steward added to objects it does not own (the referrers annotation
 * and finalizer on Nodes and Services, a peer pod's VM annotations on Pods), so that once Steward is gone nothing
 * hangs in Terminating, and leaves the Translations and PeerPods to midonet-kubernetes and peerpod-ctrl. It refuses
 * while a worker polls Steward's task queues or a starter holds its Lease: a running Steward would add them again.
 */

const settings = {
  kubeconfig: kubeconfigSetting,
  leaseNamespace: starterSettings.leaseNamespace,
  leaseName: starterSettings.leaseName,
};
const settingsSchema = z.object({
  kubeconfig: kubeconfigFiles.optional(),
  leaseNamespace: z.string().min(1, 'must not be empty').optional(),
  leaseName: z.string().min(1, 'must not be empty'),
});
const uninstallFlags = z.object({
  dryRun: z.boolean().default(false),
  withoutTemporal: z.boolean().default(false),
});

const FIELD_MANAGER = 'steward-uninstall';
const MERGE = k8s.PatchStrategy.MergePatch;
const statusOf = (error: unknown) => (error instanceof k8s.ApiException ? error.code : undefined);

/** The call's answer, or undefined where the API server says there is no such object (or no such CRD). */
async function unlessGone<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

/** The custom resources' list, empty where the CRD is not installed. */
async function listCustom(api: k8s.CustomObjectsApi, crd: typeof TRANSLATION_API | typeof PEERPOD_API) {
  const list = await unlessGone(() => api.listClusterCustomObject(crd) as Promise<{ items: k8s.KubernetesObject[] }>);
  return list?.items ?? [];
}

const listed = (kind: UninstallKind, { metadata }: k8s.KubernetesObject): ListedObject => ({
  kind,
  ...(metadata?.namespace ? { namespace: metadata.namespace } : {}),
  name: metadata?.name ?? '',
  ...(metadata?.resourceVersion ? { resourceVersion: metadata.resourceVersion } : {}),
  annotations: metadata?.annotations ?? {},
  finalizers: metadata?.finalizers ?? [],
});

/** Every object of the kinds Steward writes on, cluster-wide. */
async function listObjects(kubeConfig: k8s.KubeConfig): Promise<ListedObject[]> {
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const lists: [UninstallKind, Promise<k8s.KubernetesObject[]>][] = [
    ['Node', core.listNode().then((l) => l.items)],
    ['Service', core.listServiceForAllNamespaces().then((l) => l.items)],
    ['Endpoints', core.listEndpointsForAllNamespaces().then((l) => l.items)],
    ['Pod', core.listPodForAllNamespaces().then((l) => l.items)],
    ['Translation', listCustom(custom, TRANSLATION_API)],
    ['PeerPod', listCustom(custom, PEERPOD_API)],
  ];
  return (await Promise.all(lists.map(async ([kind, items]) => (await items).map((o) => listed(kind, o))))).flat();
}

function leaseView(lease: k8s.V1Lease): LeaseView {
  const { holderIdentity, renewTime, leaseDurationSeconds } = lease.spec ?? {};
  return {
    namespace: lease.metadata?.namespace ?? '',
    name: lease.metadata?.name ?? '',
    ...(holderIdentity ? { holder: holderIdentity } : {}),
    ...(renewTime ? { renewMs: new Date(renewTime).getTime() } : {}),
    ...(leaseDurationSeconds !== undefined ? { durationSeconds: leaseDurationSeconds } : {}),
  };
}

/**
 * The starter's Lease: in the namespace named, else the one of that name renewed last in any namespace (a starter
 * keeps it in its own namespace, which a command run from outside the cluster cannot know).
 */
async function leaseOf(api: k8s.CoordinationV1Api, lease: { namespace?: string; name: string }) {
  const { namespace, name } = lease;
  if (namespace) {
    const found = await unlessGone(() => api.readNamespacedLease({ namespace, name }));
    return found && leaseView(found);
  }
  const { items } = await api.listLeaseForAllNamespaces({ fieldSelector: `metadata.name=${name}` });
  const renewed = (view: LeaseView) => view.renewMs ?? 0;
  return items.map(leaseView).sort((a, b) => renewed(b) - renewed(a))[0];
}

const header = ({ kind, namespace, name }: Change) => ({
  apiVersion: API_VERSIONS[kind],
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
});

/** The merge patch of `change`; on a conflict, planned again from a fresh read. An object gone is done. */
async function apply(objects: k8s.KubernetesObjectApi, change: Change): Promise<void> {
  for (let current: Change | undefined = change, attempt = 1; current; attempt++) {
    const target = header(current);
    // A merge patch's null removes a key, which the client's types do not allow for.
    const body = { ...target, metadata: { ...target.metadata, ...changePatch(current).metadata } };
    try {
      await objects.patch(body as k8s.KubernetesObject, undefined, undefined, FIELD_MANAGER, undefined, MERGE);
      return;
    } catch (error) {
      if (statusOf(error) === 404) return;
      if (statusOf(error) !== 409 || attempt === 5) throw error;
      const fresh = await unlessGone(() => objects.read(target));
      current = fresh && planObject(listed(current.kind, fresh));
    }
  }
}

/** What was checked, in words, and what Steward's processes were seen doing. */
async function observeLiveness(
  kubeConfig: k8s.KubeConfig,
  lease: { namespace?: string; name: string },
  temporalConfig: TemporalConfig | undefined,
): Promise<{ liveness: Liveness; lease?: LeaseView; checked: string[] }> {
  const seen = await leaseOf(kubeConfig.makeApiClient(k8s.CoordinationV1Api), lease);
  const pollers = temporalConfig && (await pollersOf(temporalConfig));
  const queues = temporalConfig && stewardTaskQueues(temporalConfig).join(', ');
  return {
    liveness: {
      lease: seen ?? { namespace: lease.namespace ?? '', name: lease.name },
      ...(pollers ? { pollers } : {}),
    },
    ...(seen ? { lease: seen } : {}),
    checked: [
      temporalConfig
        ? `the pollers of task queues ${queues} (workflow and activity) in Temporal ${temporalConfig.address}, namespace ${temporalConfig.namespace}`
        : 'not Temporal (--without-temporal): only the Lease says whether Steward runs',
      lease.namespace
        ? `the starter's Lease ${lease.namespace}/${lease.name}${seen ? '' : ' (there is none)'}`
        : `the starter's Lease ${lease.name} in every namespace${seen ? `: ${seen.namespace}/${seen.name}` : ' (there is none)'}`,
    ],
  };
}

const PARALLEL = 8;

export async function uninstall(options: Flags, now = Date.now): Promise<UninstallReport> {
  const { dryRun, withoutTemporal } = checkFlags(uninstallFlags, options);
  const v = parseSettings(settings, settingsSchema, options, process.env);
  const kubeConfig = loadKubeConfig(v.kubeconfig)!;
  const leaseRef = { namespace: v.leaseNamespace, name: v.leaseName };
  const seen = await observeLiveness(kubeConfig, leaseRef, withoutTemporal ? undefined : loadTemporalConfig(options));
  const refused = refusals(seen.liveness, now());
  if (refused.length && !dryRun)
    throw new Error(`refused, Steward still runs:\n  ${refused.join('\n  ')}\n${HOW_TO_STOP}`);
  const objects = await listObjects(kubeConfig);
  const changes = planUninstall(objects);
  const lease = seen.lease && !leaseHeld(seen.lease, now()) ? seen.lease : undefined;
  if (!dryRun) {
    const api = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
    for (let i = 0; i < changes.length; i += PARALLEL)
      await Promise.all(changes.slice(i, i + PARALLEL).map((change) => apply(api, change)));
    if (lease)
      await unlessGone(() =>
        kubeConfig
          .makeApiClient(k8s.CoordinationV1Api)
          .deleteNamespacedLease({ namespace: lease.namespace, name: lease.name }),
      );
  }
  const count = (kind: UninstallKind) => objects.filter((o) => o.kind === kind).length;
  return {
    dryRun,
    checked: seen.checked,
    ...(dryRun && refused.length ? { wouldRefuse: refused } : {}),
    changes,
    ...(lease ? { lease: `${lease.namespace}/${lease.name}` } : {}),
    kept: { translations: count('Translation'), peerPods: count('PeerPod') },
  };
}

export function registerUninstallCommand(program: Command): void {
  const command = program
    .command('uninstall')
    .description(
      "remove what Steward added to objects it does not own (the referrers annotation and finalizer on Nodes and Services, VM annotations on Pods), for a rollback; refused while Steward's workers or starter run",
    )
    .option('--dry-run', 'list what would change, change nothing')
    .option('--without-temporal', 'Temporal is gone: do not ask it for workers, check only the Lease')
    .addOption(outputOption(['json', 'yaml', 'jsonpath'], 'the report as'));
  addSettingFlags(addSettingFlags(command, temporalSettings), settings).action(
    async (options: Flags, self: Command) => {
      const report = await uninstall(options);
      self.configureOutput().writeOut?.(serialize(report, outputOf(options)) ?? formatUninstall(report, table));
    },
  );
}
