/**
 * Names shared by workflows, worker, starter, CLI and tests: the task queue, the lifecycle kinds and the readable
 * workflow ids (`pod/<ns>/<name>`, `node/<name>`, `translation/<ns>/<name>` …) the Temporal UI shows.
 */
export const TASK_QUEUE = 'steward';

/**
 * The task queue of peer pods' VM creations, beside `taskQueue` where every workflow runs: a burst of Pods (MidoNet's
 * activities, held to their rate limit) never queues a VM's creation behind it. Its Worker runs activities only, so
 * a worker process has one workflow thread, not two.
 */
export const peerPodTaskQueue = (taskQueue: string) => `${taskQueue}-peerpods`;

export const LIFECYCLE_KINDS = ['Node', 'Pod', 'Service', 'Endpoints', 'Translation', 'PeerPod'] as const;
export type LifecycleKind = (typeof LIFECYCLE_KINDS)[number];

/**
 * A Kubernetes object by name: the object a lifecycle workflow is about, or (with a narrower kind) the object a
 * translation error names. Nodes have no namespace.
 */
export interface ObjectRef<TKind extends string = LifecycleKind> {
  kind: TKind;
  namespace?: string;
  name: string;
}

/** Where the custom resources Steward reads and writes live in the API. */
export const TRANSLATION_API = { group: 'midonet.org', version: 'v1', plural: 'translations' } as const;
export const PEERPOD_API = { group: 'confidentialcontainers.org', version: 'v1alpha1', plural: 'peerpods' } as const;

/** The apiVersion of each kind a lifecycle is about, as a generic client addresses its objects. */
export const API_VERSIONS: Record<LifecycleKind, string> = {
  Node: 'v1',
  Pod: 'v1',
  Service: 'v1',
  Endpoints: 'v1',
  Translation: `${TRANSLATION_API.group}/${TRANSLATION_API.version}`,
  PeerPod: `${PEERPOD_API.group}/${PEERPOD_API.version}`,
};

export const GLOBAL_MIDONET_WORKFLOW_ID = 'global/midonet';

/** The orphan sweeper's Schedule; the workflows it starts are `gc/sweep-<time>`, manual ones `gc/sweep/manual-<time>`. */
export const SWEEP_SCHEDULE_ID = 'gc/sweep';
export const manualSweepId = (at: Date) => `${SWEEP_SCHEDULE_ID}/manual-${at.toISOString()}`;

/**
 * The workflow id of an object's lifecycle: `pod/<ns>/<name>`, or `<cluster>/pod/<ns>/<name>` under a cluster ID
 * (`inCluster`). Without one it is also the object's name among Steward's own records (the pusher a Translation
 * names, MidoNet's push owner), which never leave the cluster.
 */
export function workflowId(ref: ObjectRef, clusterId?: string): string {
  const kind = ref.kind.toLowerCase();
  return inCluster(ref.namespace ? `${kind}/${ref.namespace}/${ref.name}` : `${kind}/${ref.name}`, clusterId);
}

/**
 * Clusters sharing one Temporal namespace: each has a cluster ID that prefixes every workflow, Schedule and task
 * queue name of its own, so their workflows never collide and no worker takes another cluster's work. A DNS label
 * that is none of the words Steward's ids begin with, so an id says whether it has one.
 */
const ID_WORDS = [...LIFECYCLE_KINDS.map((kind) => kind.toLowerCase()), 'global', 'gc'];
export const CLUSTER_ID = {
  pattern: /^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/,
  reserved: ID_WORDS,
  describe: `a DNS label of at most 40 characters (lower case, digits, '-'), none of ${ID_WORDS.join(', ')}`,
} as const;

/** `id` under the cluster's prefix; `id` itself without a cluster ID. */
export const inCluster = (id: string, clusterId: string | undefined) => (clusterId ? `${clusterId}/${id}` : id);

/** The cluster ID a workflow id starts with; undefined for one without (`pod/…`, `global/midonet`, `gc/…`). */
export function clusterOfWorkflowId(id: string): string | undefined {
  const first = id.split('/', 1)[0] ?? '';
  return id.includes('/') && !ID_WORDS.includes(first) && CLUSTER_ID.pattern.test(first) ? first : undefined;
}

/**
 * The List Filter clause that keeps a visibility query to the cluster's workflows; undefined without a cluster ID
 * (then every workflow of the namespace is listed: give every cluster sharing a namespace an ID).
 */
export const clusterFilter = (clusterId: string | undefined) =>
  clusterId ? `WorkflowId STARTS_WITH '${clusterId}/'` : undefined;

/** `default/web` or `node-1` (for Nodes), as the CLI takes it, into an ObjectRef; throws with the reason. */
export function parseObjectRef(kind: string, target: string): ObjectRef {
  const lifecycleKind = LIFECYCLE_KINDS.find((k) => k.toLowerCase() === kind.toLowerCase());
  if (!lifecycleKind) throw new Error(`unknown kind "${kind}": expected one of ${LIFECYCLE_KINDS.join(', ')}`);
  const parts = target.split('/');
  if (lifecycleKind === 'Node') {
    if (parts.length !== 1 || !parts[0])
      throw new Error(`a Node is named without a namespace, e.g. "node-1" (got "${target}")`);
    return { kind: lifecycleKind, name: parts[0] };
  }
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new Error(`a ${lifecycleKind} is named <namespace>/<name> (got "${target}")`);
  return { kind: lifecycleKind, namespace: parts[0], name: parts[1] };
}

/** kubectl's short names of the kinds Steward manages; a kind is also taken in any case and in the plural. */
const SHORT_NAMES: Record<string, LifecycleKind> = { no: 'Node', po: 'Pod', svc: 'Service', ep: 'Endpoints' };

/** `pod`, `Pods`, `po` … as a lifecycle kind; undefined when it names none. */
export function lifecycleKindOf(word: string): LifecycleKind | undefined {
  const lower = word.toLowerCase();
  return (
    SHORT_NAMES[lower] ?? LIFECYCLE_KINDS.find((k) => lower === k.toLowerCase() || lower === `${k.toLowerCase()}s`)
  );
}

/**
 * An object named as kubectl names it: `pod/nginx`, its namespace apart (`-n`, else `fallback`'s, the kubeconfig
 * context's, asked only when needed), or the workflow id's `pod/default/nginx`; the older two words `pod default/nginx`
 * keep their meaning. A namespace written in the name must agree with a `-n` given too; a Node has none, so `-n` does
 * not apply to it.
 */
export function parseTarget(
  words: string[],
  namespace: string | undefined,
  fallback: () => string = () => 'default',
): ObjectRef {
  const [kind = '', name] = words.length === 1 ? words[0]!.split(/\/(.*)/s, 2) : words;
  if (words.length > 2 || !name)
    throw new Error(`name the object as <kind>/<name>, e.g. pod/nginx -n default (got "${words.join(' ')}")`);
  const implied = words.length === 1 && !name.includes('/') && kind.toLowerCase() !== 'node';
  const ref = parseObjectRef(kind, implied ? `${namespace ?? fallback()}/${name}` : name);
  if (namespace !== undefined && ref.namespace !== undefined && ref.namespace !== namespace)
    throw new Error(`"${words.join(' ')}" is in namespace ${ref.namespace}, but -n says ${namespace}`);
  return ref;
}

/**
 * The object a lifecycle workflow is about, from its id (`pod/<ns>/<name>`, `node/<name>` …, under a cluster ID or
 * not: `workflowId`'s inverse); undefined for the other workflows (`global/midonet`, `gc/sweep-…`) and ids no kind
 * starts.
 */
export function objectOfWorkflowId(id: string): ObjectRef | undefined {
  const clusterId = clusterOfWorkflowId(id);
  const local = clusterId ? id.slice(clusterId.length + 1) : id;
  try {
    // No namespace to fall back on: a workflow id always writes it (but a Node's).
    return parseTarget([local], undefined, () => {
      throw new Error(`${id} has no namespace`);
    });
  } catch {
    return undefined;
  }
}

/**
 * The Temporal UI's page of an object's workflow: what `steward status` and `steward list -o wide` print, and what the
 * worker writes on the Translations and PeerPods it writes (TEMPORAL_UI_ANNOTATION).
 */
export const temporalUiLink = (uiUrl: string, temporalNamespace: string, id: string) =>
  `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(temporalNamespace)}/workflows/${encodeURIComponent(id)}`;

export const describeRef = (ref: ObjectRef) => `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;

/** Kinds other objects depend on: a Pod on its Node, Endpoints on their Service. */
export const isDependencyKind = (kind: LifecycleKind) => kind === 'Node' || kind === 'Service';
