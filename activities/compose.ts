/**
 * Every activity a worker registers, built from the configuration: one group per backend (the `backend` label of
 * the metrics), each left out when its backend is not configured. The MidoNet push also sees its neighbours: a
 * watch of every Translation, and a signal to the pushers whose resources changed.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { UntypedActivities } from '@temporalio/common';
import type * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { backendChangedSignal, type BackendChanged } from '../model/messages';
import { inCluster, temporalUiLink, workflowId, type ObjectRef } from '../model/naming';
import { createSource, informerFactory, kubernetesListWatch } from '../platform/kubernetes/informer';
import { readDeletionGuard, watchDeletionGuard } from '../platform/kubernetes/deletion-guard';
import { createDeletionGuard, type DeletionGuard } from './deletion-guard';
import { loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import {
  createCloudActivities,
  createCloudProvider,
  cloudWarnings,
  createPodVmActivities,
  type CloudActivities,
  type PodVmActivities,
} from './cloud';
import type { ActivitiesConfig } from './config';
import { createKubernetesActivities, type KubernetesActivities } from './kubernetes';
import { reportingKubernetes } from './kubernetes/availability';
import { createEventRecorder } from './kubernetes/events';
import { createObjects } from './kubernetes/objects';
import { createTranslationIndex, provenanceOf, type TranslationIndex } from './kubernetes/translation-index';
import { createTranslationRecords } from './kubernetes/translation-record';
import { createMidonetActivities, createMidonetClient, type MidonetActivities } from './midonet';
import {
  CLOUD_LIFECYCLES,
  MIDONET_LIFECYCLES,
  wakeStuckLifecycles,
  watchBackendHealth,
  type BackendHealth,
} from './backend-health';
import { reportingAvailability } from './cloud/availability';
import { ownDeletions, watchVmPower, type VmWatch } from './cloud/vm-watch';
import type { CloudProvider } from './cloud/provider';
import { createPushActivities, type Neighbours, type PushActivities } from './midonet/push';
import { createObjectActivities, type ObjectActivities } from './object';

/** Activities by backend (the `backend` label of the metrics). */
export interface ActivityGroups {
  midonet?: MidonetActivities & PushActivities;
  kubernetes?: KubernetesActivities;
  cloud?: CloudActivities;
  /** A peer pod's VM made and recorded in one call: built from the cloud and Kubernetes groups when both are there. */
  peerpod?: PodVmActivities;
  /** An object's sync and finalization with its Translations' push: built from the Kubernetes and MidoNet groups. */
  object?: ObjectActivities;
  [backend: string]: UntypedActivities | undefined;
}

export interface Activities {
  groups: ActivityGroups;
  /** Stops the neighbours' watch and the backends' health probes. */
  stop(): Promise<void>;
}

export interface ActivityDeps {
  /** Where the neighbours' notices are signalled. */
  temporal: Client;
  /** The cluster's prefix of the workflow ids (`inCluster`) the activities signal, wake and link; none when absent. */
  clusterId?: string;
  /** The worker's task queue, where every lifecycle runs: the stuck ones it wakes are those on it. */
  taskQueue: string;
  log: Logger;
  /** Replace or add groups (a test's fakes); the rest are built from the configuration. */
  overrides?: ActivityGroups;
}

/** The Translation of a pusher workflow id, `translation/<namespace>/<name>`. */
function translationRef(workflowId: string): ObjectRef {
  const [, namespace = '', name = ''] = workflowId.split('/');
  return { kind: 'Translation', namespace, name };
}

/**
 * Tells a lifecycle that the backend it holds changed (`backendChanged`). One without a running workflow has nothing to
 * repair (a Translation's next pusher, a peer pod's next run, starts from a fresh look). Any other failure is thrown:
 * an activity's call retries the notice.
 */
const tellBackendChanged =
  (temporal: Client, clusterId: string | undefined, log: Logger) => (id: string, notice: BackendChanged) =>
    temporal.workflow
      .getHandle(inCluster(id, clusterId))
      .signal(backendChangedSignal, notice)
      .catch((error: unknown) => {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        log.debug({ workflowId: id }, 'backendChanged: no running workflow');
      });

/**
 * The pushers' view of each other: a watch of every Translation (who owns which resource, who names which ID) and
 * the signal that tells one that resources it names changed. Stopped with the worker.
 */
function watchNeighbours(
  index: TranslationIndex,
  kubeConfig: k8s.KubeConfig,
  signal: (id: string, notice: BackendChanged) => Promise<void>,
  apiServer: BackendHealth,
  log: Logger,
  report: Neighbours['report'],
): Neighbours & { stop(): Promise<void> } {
  const source = createSource({
    kinds: ['Translation'],
    // Kept as digests: the index is all that reads them.
    listWatch: (kind) => ({ ...kubernetesListWatch(kubeConfig)(kind), keep: (object) => index.digest(object) }),
    makeInformer: informerFactory(kubeConfig),
    resyncMs: 10 * 60_000,
    backoff: { initialMs: 500, maxMs: 30_000 },
    logger: log.child({ component: 'translation-index' }),
    onEvent: (event) => index.apply(event),
    // The pushes wait for this index: its list failing is the API server out of reach as much as an activity's call.
    onError: () => apiServer.observe(false),
    onListed: () => apiServer.observe(true),
  });
  source.start();
  const objects = createObjects(kubeConfig, 'steward');
  const recordEvent = createEventRecorder(objects, () => new Date());
  return {
    index,
    records: createTranslationRecords(kubeConfig),
    async announce(owner, event) {
      const ref = translationRef(owner);
      const translation = await objects.accessor(ref).read();
      if (translation) await recordEvent(ref, translation, event);
    },
    async provenance(owner) {
      const translation = await objects.accessor(translationRef(owner)).read();
      return translation && provenanceOf(translation);
    },
    synced: () => source.synced(),
    report,
    notify: async (workflowIds, notice) => {
      for (let i = 0; i < workflowIds.length; i += 20)
        await Promise.all(workflowIds.slice(i, i + 20).map((id) => signal(id, notice)));
    },
    stop: () => source.stop(),
  };
}

/**
 * The worker's watch of the peer-pod VMs (vm-watch.ts), none when `intervalMs` is 0: a change is told to the peer
 * pod's workflow. The activities use the provider it returns: the watch keeps quiet about the VMs their deletes are
 * deleting (its looks empty that set, so without a watch there is none).
 */
function watchPeerPodVms(
  provider: CloudProvider,
  intervalMs: number,
  tell: (id: string, notice: BackendChanged) => Promise<void>,
  log: Logger,
): { watch?: VmWatch; provider: CloudProvider } {
  if (intervalMs <= 0) return { provider };
  const deletions = ownDeletions();
  const watch = watchVmPower({
    powerStates: () => provider.powerStates(),
    tell: (pod, notice) => tell(workflowId(pod), notice),
    intervalMs,
    deletions,
    log: log.child({ component: 'vm-watch' }),
  });
  return {
    watch,
    provider: { ...provider, delete: (input) => deletions.run(input.instanceId, () => provider.delete(input)) },
  };
}

export function createActivities(
  config: ActivitiesConfig,
  { temporal, clusterId, taskQueue, log, overrides }: ActivityDeps,
): Activities {
  const groups: ActivityGroups = {};
  const kubeConfig = loadKubeConfig(config.kubeconfig);
  const healths: BackendHealth[] = [];
  const watches: VmWatch[] = [];
  const tell = tellBackendChanged(temporal, clusterId, log);
  const taskQueues = [taskQueue];
  /** Watches a backend's answers; on its return the lifecycles stuck on it are woken. */
  const watch = (backend: string, workflowTypes: string[], probe: () => Promise<unknown>) => {
    const health = watchBackendHealth({
      backend,
      probe,
      wake: async (by) => void (await wakeStuckLifecycles(temporal, log, { workflowTypes, taskQueues, by })),
      log: log.child({ component: 'backend-health', backend }),
    });
    healths.push(health);
    return health;
  };
  const { temporalUiUrl } = config;
  const workflowPage = temporalUiUrl
    ? (id: string) => temporalUiLink(temporalUiUrl, temporal.options.namespace, inCluster(id, clusterId))
    : undefined;
  /**
   * The Kubernetes activities and the pushers' index of Translations, both telling whether the API server answers.
   * Every lifecycle calls it: all of them are woken when it answers again.
   */
  const connectKubernetes = (kubeConfig: k8s.KubeConfig) => {
    const health = watch('the Kubernetes API', [...MIDONET_LIFECYCLES, ...CLOUD_LIFECYCLES], () => api.probe());
    const index = createTranslationIndex();
    const api = reportingKubernetes(
      createKubernetesActivities({ kubeConfig, workflowPage, seenReady: (t) => index.seenReady(t) }),
      kubeConfig,
      (answered) => health.observe(answered),
    );
    const crd = watchDeletionGuard(kubeConfig, log);
    const guard = createDeletionGuard({ ...crd, read: async () => (await readDeletionGuard(kubeConfig)).state });
    return {
      activities: api.activities,
      neighbours: watchNeighbours(index, kubeConfig, tell, health, log, api.activities.recordTranslationStatus),
      guard: { ...guard, stop: () => crd.stop() },
    };
  };
  const kubernetes = kubeConfig ? connectKubernetes(kubeConfig) : undefined;
  const neighbours = kubernetes?.neighbours;
  const guard: DeletionGuard | undefined = kubernetes?.guard;
  if (config.midonet) {
    // The probe goes through the client it watches.
    const health = watch('MidoNet', MIDONET_LIFECYCLES, () => client.listHosts());
    const client = createMidonetClient(config.midonet, (answered) => health.observe(answered));
    groups.midonet = {
      ...createMidonetActivities({ client, guard }),
      ...createPushActivities({ client, neighbours, guard }),
    };
  } else log.warn('no MidoNet activities: MIDONET_API_URL is not set');
  if (config.cloud) {
    const health = watch('the cloud', CLOUD_LIFECYCLES, () => cloud.probe());
    const cloud = reportingAvailability(createCloudProvider(config.cloud), (answered) => health.observe(answered));
    const watched = watchPeerPodVms(cloud.provider, config.cloud.watchMs, tell, log);
    if (watched.watch) watches.push(watched.watch);
    groups.cloud = createCloudActivities({ provider: watched.provider });
    for (const warning of cloudWarnings(config.cloud)) log.warn(warning);
  } else log.warn('no cloud activities (peer-pod VMs): no --cloud-provider / STEWARD_CLOUD_PROVIDER or CLOUD_PROVIDER');
  if (kubernetes) groups.kubernetes = kubernetes.activities;
  else log.warn('no Kubernetes activities: no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster');
  const all: ActivityGroups = { ...groups, ...overrides };
  // From the groups in use (a test's fakes included), so it calls exactly what the separate activities call.
  if (!all.peerpod && all.cloud && all.kubernetes)
    all.peerpod = createPodVmActivities({ cloud: all.cloud, kubernetes: all.kubernetes });
  if (!all.object && all.midonet && all.kubernetes)
    all.object = createObjectActivities({
      kubernetes: all.kubernetes,
      midonet: all.midonet,
      nodeAnnotator: config.nodeAnnotator,
    });
  return {
    groups: all,
    stop: async () => {
      for (const health of healths) health.stop();
      for (const watch of watches) watch.stop();
      await neighbours?.stop();
      await kubernetes?.guard.stop();
    },
  };
}
