// The zod schemas of the projections, evaluated once per worker in its shared V8 context (worker/bundle.ts) and
// handed out only through projectionSchemas(): the SDK deep-freezes what a preloaded module exports, and a zod schema
// writes into itself when first used (its lazy internals, its memoizer), so the schemas must not be exports. They are
// shared by every workflow, unfrozen: those writes are memoized facts about the schema alone (what its keys are,
// whether it is recursive), the same whichever workflow makes them first, and a parse keeps nothing of its input.
// translation/types.ts derives the projection types from them and exports the two the workflows' handles take.
import { z } from 'zod';
import { ANNOTATIONS } from './model';

/** Keeps only the named annotations, so unrelated annotation churn does not change the projection. */
const annotations = (...keep: string[]) =>
  z
    .record(z.string(), z.string())
    .optional()
    .transform(
      (all) =>
        Object.fromEntries(keep.flatMap((key) => (all?.[key] === undefined ? [] : [[key, all[key]]]))) as Record<
          string,
          string
        >,
    );

const clusterScopedMeta = { name: z.string().min(1), uid: z.string().min(1) };
const namespacedMeta = { ...clusterScopedMeta, namespace: z.string().min(1) };

const nodeProjection = z.object({
  kind: z.literal('Node'),
  metadata: z.object({
    ...clusterScopedMeta,
    annotations: annotations(
      ANNOTATIONS.hostId,
      ANNOTATIONS.tunnelZoneId,
      ANNOTATIONS.tunnelEndpointIP,
      ANNOTATIONS.macAddress,
    ),
  }),
  spec: z.object({ podCIDR: z.string().optional() }).default({}),
  status: z.object({ addresses: z.array(z.object({ type: z.string(), address: z.string() })).optional() }).default({}),
});

const TERMINATED_PHASES = ['Succeeded', 'Failed'];

/**
 * Of a Pod's status, what its translation reads (translation/pod.ts): whether it has terminated, and its IP once the
 * CNI plugin's MAC annotation makes an ARP entry of it. Pending → Running, or an IP without a MAC, translates the
 * same, so it is no news for the starter's change predicate and no second sync.
 */
const podProjection = z
  .object({
    kind: z.literal('Pod'),
    metadata: z.object({ ...namespacedMeta, annotations: annotations(ANNOTATIONS.macAddress) }),
    spec: z.object({ nodeName: z.string().optional(), hostNetwork: z.boolean().optional() }).default({}),
    status: z.object({ phase: z.string().optional(), podIP: z.string().optional() }).default({}),
  })
  .transform(({ status: { phase, podIP }, ...pod }) => ({
    ...pod,
    status: {
      ...(phase !== undefined && TERMINATED_PHASES.includes(phase) ? { phase } : {}),
      ...(podIP !== undefined && pod.metadata.annotations[ANNOTATIONS.macAddress] !== undefined ? { podIP } : {}),
    },
  }));

// `type` and `protocol` default as the API server defaults them, so a projection written by hand reads the same.
const serviceProjection = z.object({
  kind: z.literal('Service'),
  metadata: z.object(namespacedMeta),
  spec: z
    .object({
      type: z.string().default('ClusterIP'),
      clusterIP: z.string().optional(),
      ports: z
        .array(z.object({ name: z.string().default(''), protocol: z.string().default('TCP'), port: z.number() }))
        .optional(),
    })
    .default({ type: 'ClusterIP' }),
});

const endpointsProjection = z.object({
  kind: z.literal('Endpoints'),
  metadata: z.object(namespacedMeta),
  // Read from EndpointSlices the endpointslice controller manages (model/translation/endpoint-slices.ts): the Service
  // owns them, so it owns their Translations too, and `metadata.uid` is the Service's.
  ownerKind: z.literal('Service').optional(),
  // notReadyAddresses are not projected: midonet-kubernetes never sends traffic to them.
  subsets: z
    .array(
      z.object({
        addresses: z.array(z.object({ ip: z.string() })).optional(),
        ports: z
          .array(z.object({ name: z.string().default(''), protocol: z.string().default('TCP'), port: z.number() }))
          .optional(),
      }),
    )
    .optional(),
});

const kubernetesProjection = z.discriminatedUnion('kind', [
  nodeProjection,
  podProjection,
  serviceProjection,
  endpointsProjection,
]);

/** An object the watcher could not project: forwarded with the error, so its workflow shows it (starter/controller/projection.ts). */
const invalidProjection = z.object({
  invalid: z.object({
    ok: z.literal(false),
    error: z.object({
      reason: z.string(),
      object: z.object({ kind: z.string(), namespace: z.string().optional(), name: z.string() }),
      field: z.string(),
      message: z.string(),
    }),
  }),
});

/** What an object's lifecycle is sent: its projection, or why there is none. */
const observedObjectProjection = z.union([kubernetesProjection, invalidProjection]);

/**
 * What a Translation's pusher is sent. Kinds and bodies are only strings here: the pusher checks the whole
 * Translation before it pushes any of it, and refuses it with the resource, field and reason (InvalidTranslation).
 */
const translationProjection = z.object({
  // Absent for a Translation larger than INLINE_RESOURCE_BYTES: sent by reference (`digest`, `count`), its pusher's
  // activities read it from the API server, so no signal, activity input or persisted context grows with it.
  resources: z.array(z.object({ kind: z.string(), parent: z.string(), body: z.string() })).optional(),
  digest: z.string().max(100).optional(),
  count: z.number().int().nonnegative().optional(),
  // The starter repeats these from the envelope (so the projection alone is the desired state); the pusher reads the envelope's.
  generation: z.number().int().nonnegative().optional(),
  finalizers: z.array(z.string()).optional(),
  deletionTimestamp: z.string().optional(),
});

const schemas = {
  nodeProjection,
  podProjection,
  serviceProjection,
  endpointsProjection,
  kubernetesProjection,
  invalidProjection,
  observedObjectProjection,
  translationProjection,
};

export const projectionSchemas = () => schemas;
