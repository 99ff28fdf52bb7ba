// Burst: N Pods on M Nodes created at once (10 API calls in flight), a Service with 2 ports and its Endpoints
// rewritten to the latest Pods' addresses as the Pods come (every tenth of them), until all converged; then every
// Pod, the Endpoints and the Service deleted at once, until all is gone.
import * as k8s from '@kubernetes/client-node';
import { createPod, createService } from '../../test/support/objects-harness';
import type { PodProjection } from '../../model/translation/types';
import { projected, type ObjectsScenario, type PhaseContext, type PhaseResult } from '../objects';
import { deleteAllPods, inParallel } from '../support';

/** Pod `i` on Node `i mod M`, addressed in that Node's /16. */
export function podAt(
  ctx: Pick<PhaseContext, 'namespace' | 'nodes'>,
  name: string,
  i: number,
  annotations: Record<string, string> = {},
): PodProjection {
  const n = i % ctx.nodes.length;
  const k = Math.floor(i / ctx.nodes.length);
  return {
    kind: 'Pod',
    metadata: { name, namespace: ctx.namespace, uid: '', annotations },
    spec: { nodeName: ctx.nodes[n]!.metadata.name },
    status: { phase: 'Running', podIP: `10.${n + 1}.${Math.floor(k / 250)}.${(k % 250) + 2}` },
  };
}

/** The Service every scenario uses: two named ports, no selector (the bench writes its Endpoints). */
export async function createWebService(ctx: PhaseContext): Promise<void> {
  const service = await createService(ctx, {
    kind: 'Service',
    metadata: { name: 'web', namespace: ctx.namespace, uid: '' },
    spec: {
      type: 'ClusterIP',
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'https', protocol: 'TCP', port: 443 },
      ],
    },
  });
  ctx.model.write(undefined, projected('Service', service));
}

/** Sets the Endpoints `web` to these addresses (created on first use). */
export async function writeEndpoints(
  ctx: PhaseContext,
  ips: string[],
): Promise<{ added: Set<string>; removed: Set<string> }> {
  const { namespace } = ctx;
  const body = {
    metadata: { name: 'web' },
    subsets: ips.length
      ? [
          {
            addresses: ips.map((ip) => ({ ip })),
            ports: [
              { name: 'http', protocol: 'TCP', port: 8080 },
              { name: 'https', protocol: 'TCP', port: 8443 },
            ],
          },
        ]
      : [],
  };
  const before = ctx.model.get('Endpoints', namespace, 'web');
  const written = before
    ? await ctx.core.patchNamespacedEndpoints(
        { name: 'web', namespace, body },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      )
    : await ctx.core.createNamespacedEndpoints({ namespace, body });
  return ctx.model.write(before, projected('Endpoints', written));
}

export async function writePod(
  ctx: PhaseContext,
  pod: PodProjection,
): Promise<{ added: Set<string>; removed: Set<string> }> {
  return ctx.model.write(undefined, projected('Pod', await createPod(ctx, pod)));
}

/** The burst's timing rows, as a summary across runs finds them (bench/profiles.ts). */
export const BURST_TIMINGS = {
  created: 'create → converged (s)',
  createRate: 'create → converged (Pods/s)',
  deleted: 'delete → converged (s)',
  deleteRate: 'delete → converged (Pods/s)',
} as const;

export function burst({ pods, nodes }: { pods: number; nodes: number }): ObjectsScenario {
  return {
    name: 'burst',
    title: `burst: ${pods} Pods on ${nodes} Nodes created, then deleted, at once (Service with 2 ports, Endpoints churned)`,
    nodes,
    async run(ctx): Promise<PhaseResult> {
      const all = Array.from({ length: pods }, (_, i) => podAt(ctx, `p-${String(i).padStart(5, '0')}`, i));
      const step = Math.max(1, Math.ceil(pods / 10));
      let made = 0;
      // One Endpoints write at a time, in the order the Pods came.
      let endpoints = Promise.resolve();
      const times = await ctx.measured(async (mark) => {
        const t0 = Date.now();
        await createWebService(ctx);
        await inParallel(all, 10, async (pod) => {
          await writePod(ctx, pod);
          if (++made % step !== 0) return;
          const ips = all.slice(Math.max(0, made - 10), made).map((p) => p.status.podIP!);
          endpoints = endpoints.then(() => writeEndpoints(ctx, ips).then(() => undefined));
          await endpoints;
        });
        const created = Date.now();
        await ctx.converged('every Pod, the Service and its Endpoints pushed');
        const ready = Date.now();
        mark('create → converged');
        await ctx.atPeak();
        const deleting = Date.now();
        await deleteAllPods(ctx.core, ctx.namespace);
        for (const pod of all) ctx.model.write(ctx.model.get('Pod', ctx.namespace, pod.metadata.name), undefined);
        await ctx.core.deleteNamespacedEndpoints({ name: 'web', namespace: ctx.namespace });
        ctx.model.write(ctx.model.get('Endpoints', ctx.namespace, 'web'), undefined);
        await ctx.core.deleteNamespacedService({ name: 'web', namespace: ctx.namespace });
        ctx.model.write(ctx.model.get('Service', ctx.namespace, 'web'), undefined);
        const deleted = Date.now();
        await ctx.converged('everything gone');
        return { t0, created, ready, deleting, deleted, gone: Date.now() };
      });
      const s = (ms: number) => ms / 1000;
      return {
        timings: [
          ['create: API calls (s)', s(times.created - times.t0)],
          [BURST_TIMINGS.created, s(times.ready - times.t0)],
          [BURST_TIMINGS.createRate, pods / s(times.ready - times.t0), 1],
          // From the first delete call, as the create is timed from the first create call: the API server deletes a
          // collection's Pods one by one, and both sides start on them while it does.
          ['delete: API calls (s)', s(times.deleted - times.deleting)],
          [BURST_TIMINGS.deleted, s(times.gone - times.deleting)],
          [BURST_TIMINGS.deleteRate, pods / s(times.gone - times.deleting), 1],
        ],
        per: { count: pods, unit: 'Pod' },
      };
    },
  };
}
