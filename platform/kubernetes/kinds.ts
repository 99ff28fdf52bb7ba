import * as k8s from '@kubernetes/client-node';
import { PEERPOD_API, TRANSLATION_API, type LifecycleKind } from '../../model/naming';

/** The kinds the starter watches; each has one lifecycle workflow per object. */
export const WATCHED_KINDS = [
  'Node',
  'Pod',
  'Service',
  'Endpoints',
  'Translation',
  'PeerPod',
] as const satisfies readonly LifecycleKind[];
export type WatchedKind = (typeof WATCHED_KINDS)[number];

/**
 * Where an installation reads Endpoints from: v1 Endpoints, or the discovery.k8s.io/v1 EndpointSlices that stand for
 * them (model/translation/endpoint-slices.ts; the starter makes the Endpoints of each Service's slices).
 */
export const ENDPOINTS_SOURCES = ['Endpoints', 'EndpointSlices'] as const;
export type EndpointsSource = (typeof ENDPOINTS_SOURCES)[number];

/** The setting: one source, or `auto`, EndpointSlices where the API server serves them (endpointsSourceServed). */
export const ENDPOINTS_SETTINGS = ['auto', ...ENDPOINTS_SOURCES] as const;
export type EndpointsSetting = (typeof ENDPOINTS_SETTINGS)[number];

/**
 * What `auto` reads, from the API server's `discovery.k8s.io/v1` resource list (undefined: that group version is not
 * served): EndpointSlices when they can be listed and watched there (every cluster since Kubernetes 1.21), else v1
 * Endpoints.
 */
export function endpointsSourceOf(served: Pick<k8s.V1APIResourceList, 'resources'> | undefined): EndpointsSource {
  const slices = served?.resources.find((resource) => resource.name === 'endpointslices');
  return slices && ['list', 'watch'].every((verb) => slices.verbs.includes(verb)) ? 'EndpointSlices' : 'Endpoints';
}

/** The source a setting stands for on this cluster: `auto` asks the API server's discovery (one request). */
export async function endpointsSourceServed(
  kubeConfig: k8s.KubeConfig,
  setting: EndpointsSetting,
): Promise<EndpointsSource> {
  if (setting !== 'auto') return setting;
  try {
    return endpointsSourceOf(await kubeConfig.makeApiClient(k8s.DiscoveryV1Api).getAPIResources());
  } catch (error) {
    if (error instanceof k8s.ApiException && error.code === 404) return endpointsSourceOf(undefined);
    throw new Error(
      `cannot tell whether the API server serves EndpointSlices (endpoints-from auto): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** What an informer needs for one kind: the watch path and the matching list call. */
export interface ListWatchSpec {
  path: string;
  list: () => Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>;
  /** The watch's field selector (the list applies its own): one object by name. */
  fieldSelector?: string;
  /**
   * What the informer keeps of each object it lists or watches, and reports, in place of the whole object: it must
   * keep the metadata's name, namespace, uid and resourceVersion, by which the informer and the source follow it.
   */
  keep?: (object: k8s.KubernetesObject) => k8s.KubernetesObject;
}

/**
 * The list/watch pair of a kind, across all namespaces or, for namespaced kinds, only `namespace`. Nodes are
 * cluster-scoped and always watched whole.
 */
export function listWatchSpec(
  kubeConfig: k8s.KubeConfig,
  kind: WatchedKind,
  namespace?: string,
  endpointsFrom: EndpointsSource = 'Endpoints',
): ListWatchSpec {
  const core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  const prefix = namespace ? `/namespaces/${namespace}` : '';
  switch (kind) {
    case 'Node':
      return { path: '/api/v1/nodes', list: () => core.listNode() };
    case 'Pod':
      return {
        path: `/api/v1${prefix}/pods`,
        list: () => (namespace ? core.listNamespacedPod({ namespace }) : core.listPodForAllNamespaces()),
      };
    case 'Service':
      return {
        path: `/api/v1${prefix}/services`,
        list: () => (namespace ? core.listNamespacedService({ namespace }) : core.listServiceForAllNamespaces()),
      };
    case 'Endpoints': {
      if (endpointsFrom === 'EndpointSlices') {
        const discovery = kubeConfig.makeApiClient(k8s.DiscoveryV1Api);
        return {
          path: `/apis/discovery.k8s.io/v1${prefix}/endpointslices`,
          list: () =>
            namespace
              ? discovery.listNamespacedEndpointSlice({ namespace })
              : discovery.listEndpointSliceForAllNamespaces(),
        };
      }
      return {
        path: `/api/v1${prefix}/endpoints`,
        list: () => (namespace ? core.listNamespacedEndpoints({ namespace }) : core.listEndpointsForAllNamespaces()),
      };
    }
    case 'Translation':
    case 'PeerPod': {
      const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
      const { group, version, plural } = kind === 'Translation' ? TRANSLATION_API : PEERPOD_API;
      const list = namespace
        ? () => custom.listNamespacedCustomObject({ group, version, plural, namespace })
        : () => custom.listClusterCustomObject({ group, version, plural });
      return {
        path: `/apis/${group}/${version}${prefix}/${plural}`,
        list: async () => (await list()) as k8s.KubernetesListObject<k8s.KubernetesObject>,
      };
    }
  }
}
