// `steward uninstall` on a cluster Steward ran: the Node carries the referrers annotation and finalizer for its Pods,
// the Service for its Endpoints. With Steward stopped and uninstalled, both are deleted at once instead of hanging in
// Terminating, and the Translations stay exactly as midonet-kubernetes needs them. Its own stack: uninstall reads
// every object of the cluster and the pollers of the task queue, which other files' workers would share.
import * as k8s from '@kubernetes/client-node';
import { REFERRERS_ANNOTATION, REFERRERS_FINALIZER, TRANSLATION_FINALIZER } from '../model/vocabulary';
import { sampleCluster, sampleClusterTranslations } from '../model/translation/sample-cluster';
import {
  createEndpoints,
  createNode,
  createPod,
  createService,
  listTranslations,
  objectsHarnessForFile,
  readyOf,
  referrersOf,
  translationsOfOthers,
  waitFor,
} from '../test/support/objects-harness';
import { uninstall } from './uninstall';
import { POLLER_WINDOW_MS } from './pollers';
import type { UninstallReport } from './uninstall-plan';

const base = sampleCluster();
// The embedded API server allocates ClusterIPs from 10.0.0.0/24.
const service = { ...base.service, spec: { ...base.service.spec, clusterIP: '10.0.0.20' } };
const h = objectsHarnessForFile({ hosts: base.hosts, identity: 'uninstall' });
/** The flags a user gives: where Temporal and the cluster are, and the starter's Lease (the harness names it so). */
const flags = (more: Record<string, boolean> = {}) => ({
  address: h.info.temporal.address,
  temporalNamespace: h.info.temporal.namespace,
  kubeconfig: h.info.kubernetes.kubeconfig,
  leaseName: 'steward-uninstall',
  ...more,
});
/** What midonet-kubernetes reads of a Translation: its finalizers, labels and owner references. */
const asMidonetKubernetesReadsThem = async () =>
  (await listTranslations(h)).map(({ metadata }) => {
    const { namespace, name, finalizers, labels, ownerReferences } = metadata as k8s.V1ObjectMeta;
    return { namespace, name, finalizers, labels, ownerReferences };
  });
const marksOf = ({ metadata }: { metadata?: k8s.V1ObjectMeta }) => ({
  annotation: metadata?.annotations?.[REFERRERS_ANNOTATION] !== undefined,
  finalizers: metadata?.finalizers ?? [],
});
const node1 = () => h.core.readNode({ name: 'node1' });
const web = () => h.core.readNamespacedService({ namespace: 'default', name: 'web' });
const gone = (read: () => Promise<unknown>) =>
  read().then(
    () => false,
    (error: unknown) => error instanceof k8s.ApiException && error.code === 404,
  );

let translationsBefore: Awaited<ReturnType<typeof asMidonetKubernetesReadsThem>>;
beforeAll(async () => {
  for (const node of base.nodes) await createNode(h, node);
  for (const pod of base.pods) await createPod(h, pod);
  await createService(h, service);
  await createEndpoints(h, base.endpoints);
  await waitFor('node1 to list its Pods', async () => (await referrersOf(h, 'node1')).length === 2, 120_000);
  await waitFor('the Service to list its Endpoints', async () => marksOf(await web()).annotation, 120_000);
  // Every Translation written and pushed (the API server's own Service and Endpoints give some too): the back-references
  // are there before the last of them.
  const written =
    sampleClusterTranslations({ ...base, service }).length +
    (
      await translationsOfOthers(h, [
        { kind: 'Service', namespace: 'default', name: 'web' },
        { kind: 'Endpoints', namespace: 'default', name: 'web' },
      ])
    ).length;
  await waitFor(
    `the ${written} Translations Ready`,
    async () => {
      const live = await listTranslations(h);
      return live.length === written && live.every(readyOf);
    },
    120_000,
  );
  translationsBefore = await asMidonetKubernetesReadsThem();
}, 240_000);

describe('steward uninstall', () => {
  it('refuses while a worker polls the task queue and a starter holds its Lease, and changes nothing', async () => {
    await expect(uninstall(flags())).rejects.toThrow(
      /refused, Steward still runs:[\s\S]*worker \S+ polled task queue steward[\s\S]*starter \S+ holds Lease kube-system\/steward-uninstall[\s\S]*scale deploy steward-worker steward-starter --replicas=0/,
    );
    expect(marksOf(await node1())).toEqual({ annotation: true, finalizers: [REFERRERS_FINALIZER] });
  });

  it(
    'lists in a dry run, once Steward is stopped, what it would take back: the Nodes and the Service, nothing more',
    async () => {
      await h.starter.stop();
      await Promise.all(h.workers.map((worker) => worker.shutdown()));
      // Temporal lists a stopped worker's last poll for a while: the dry run says so until it is old enough.
      const report = await waitFor(
        'the dry run to see no worker',
        async () => {
          const r = await uninstall(flags({ dryRun: true }));
          return r.wouldRefuse ? undefined : r;
        },
        POLLER_WINDOW_MS + 60_000,
        5_000,
      );
      expect(
        report.changes.map(({ kind, namespace, name, annotations, finalizers }) => ({
          kind,
          namespace,
          name,
          annotations,
          finalizers,
        })),
      ).toEqual([
        { kind: 'Node', name: 'node1', annotations: [REFERRERS_ANNOTATION], finalizers: [REFERRERS_FINALIZER] },
        { kind: 'Node', name: 'node2', annotations: [REFERRERS_ANNOTATION], finalizers: [REFERRERS_FINALIZER] },
        {
          kind: 'Service',
          namespace: 'default',
          name: 'web',
          annotations: [REFERRERS_ANNOTATION],
          finalizers: [REFERRERS_FINALIZER],
        },
      ]);
      expect(marksOf(await node1())).toEqual({ annotation: true, finalizers: [REFERRERS_FINALIZER] });
    },
    POLLER_WINDOW_MS + 90_000,
  );

  it("takes them back, deletes the stopped starter's Lease, and leaves every Translation as midonet-kubernetes wrote it", async () => {
    const report: UninstallReport = await uninstall(flags());
    expect(report).toMatchObject({ dryRun: false, lease: 'kube-system/steward-uninstall' });
    expect(report.kept.translations).toBe(translationsBefore.length);
    expect(marksOf(await node1())).toEqual({ annotation: false, finalizers: [] });
    expect(marksOf(await web())).toEqual({ annotation: false, finalizers: [] });
    expect(await asMidonetKubernetesReadsThem()).toEqual(translationsBefore);
    expect(translationsBefore.every((t) => t.finalizers?.includes(TRANSLATION_FINALIZER))).toBe(true);
    // Run again, there is nothing left to take back.
    expect((await uninstall(flags())).changes).toEqual([]);
  });

  it('then a Node with Pods and a Service with Endpoints are deleted at once, not left Terminating', async () => {
    await h.core.deleteNode({ name: 'node1' });
    await h.core.deleteNamespacedService({ namespace: 'default', name: 'web' });
    await waitFor('node1 and the Service gone', async () => (await gone(node1)) && (await gone(web)), 15_000);
  });
});
