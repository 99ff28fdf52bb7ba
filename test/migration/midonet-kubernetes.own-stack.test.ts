// Taking over a cluster from midonet-kubernetes (issue 11): the API server holds the Translations it wrote (its
// names, bodies, owner references, labels and finalizer; no status) and MidoNet holds their resources, created in
// its order, including its Endpoints bug. Steward starts on that: every Translation becomes Ready; what MidoNet holds
// as asked is taken over without a single write; exactly the rules the bug got wrong are replaced, once each, where
// they stood in their chains; and then a Pod and a Service are deleted as usual.
import * as k8s from '@kubernetes/client-node';
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { workflowId, type ObjectRef } from '../../model/naming';
import { sampleCluster, sampleClusterTranslations, type SampleCluster } from '../../model/translation/sample-cluster';
import type { Translation } from '../../model/translation/types';
import {
  desiredTranslations,
  formatSurvey,
  surveyTranslations,
  untilReady,
  type ListedTranslation,
  type TranslationSurvey,
} from '../../cli/adopt';
import { asResource, migratedClusterAsWritten, writeAsMidonetKubernetes } from '../support/midonet-kubernetes';
import {
  createEndpoints,
  createNode,
  createPod,
  createService,
  deletePod,
  emulatorIds,
  expectedIds,
  listTranslations,
  readyOf,
  seedEmulator,
  stateOf,
  startObjectsHarness,
  translationsOfOthers,
  waitFor,
  waitForState,
  type ObjectsHarness,
} from '../support/objects-harness';

const base = sampleCluster();
/**
 * To time a larger takeover (`STEWARD_ADOPT_EXTRA_PODS=470` gives 500 Translations): Pods beyond the sample, left
 * as Steward's own translation writes them (identical to midonet-kubernetes' for Pods, as the golden test shows).
 */
const EXTRA_PODS = Number(process.env.STEWARD_ADOPT_EXTRA_PODS ?? 0);
/** How long taking over may take: 3 minutes for the sample, more with extra Pods. */
const TAKEOVER_MS = 180_000 + EXTRA_PODS * 2_000;
const extraPods = Array.from({ length: EXTRA_PODS }, (_, i) => {
  const [nodeName, subnet] = i % 2 ? ['node2', '10.1.2'] : ['node1', '10.1.1'];
  return {
    kind: 'Pod' as const,
    metadata: { name: `extra-${i}`, namespace: 'default', uid: '', annotations: {} },
    spec: { nodeName },
    status: { phase: 'Running', podIP: `${subnet}.${10 + Math.floor(i / 2)}` },
  };
});
// The ClusterIP the embedded API server can give, and a third address for each port, listed last.
const cluster: SampleCluster = {
  ...base,
  pods: [...base.pods, ...extraPods],
  service: { ...base.service, spec: { ...base.service.spec, clusterIP: '10.0.0.20' } },
  endpoints: {
    ...base.endpoints,
    subsets: base.endpoints.subsets!.map((s) => ({ ...s, addresses: [...s.addresses!, { ip: '10.1.1.4' }] })),
  },
};
const sampleRefs: ObjectRef[] = [
  { kind: 'Service', namespace: 'default', name: 'web' },
  { kind: 'Endpoints', namespace: 'default', name: 'web' },
];

let stack: Stack;
let h: ObjectsHarness;
let core: k8s.CoreV1Api;
let custom: k8s.CustomObjectsApi;
let others: Translation[];
/** Rule IDs per chain, in chain order, as midonet-kubernetes left them. */
let chainOrder: Record<string, string[]>;
let adoptSeconds: number;
let survey: TranslationSurvey[];
let notReadyBefore: number;
/** What `steward adopt` polls: every Translation in the cluster. */
const listAll = async () => (await listTranslations({ custom })) as unknown as ListedTranslation[];

/** The state as midonet-kubernetes wrote it, for the objects Steward tests against it and the cluster's own (the `kubernetes` Service). */
const ownerOf = (t: Translation) => `${t.ownerReferences[0]!.kind}/${t.ownerReferences[0]!.name}`;
const extraTranslations = () =>
  sampleClusterTranslations({ ...cluster, pods: extraPods }).filter((t) => t.ownerReferences[0]?.kind === 'Pod');
const leftBehind = () => [
  ...migratedClusterAsWritten.map((t) => ({ ...t, resources: t.resources.map(asResource) })),
  ...[...extraTranslations(), ...others].map((t) => ({ ...t, owner: ownerOf(t) })),
];

async function rulesByChain(): Promise<Record<string, string[]>> {
  const rules = ((await h.admin.dump()).Rule ?? []) as { id: string; chainId: string; position: number }[];
  const out: Record<string, string[]> = {};
  for (const r of [...rules].sort((a, b) => a.position - b.position)) (out[r.chainId] ??= []).push(r.id);
  return out;
}

/** Writes to MidoNet resources per kind and method (a login is a POST too, and not one). */
async function writes(admin = h.admin): Promise<Record<string, Record<string, number>>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [kind, methods] of Object.entries((await admin.counters()).byKind)) {
    const written = Object.entries(methods).filter(([method]) => method !== 'GET');
    if (kind !== 'Login' && written.length) out[kind] = Object.fromEntries(written);
  }
  return out;
}

async function eventsOn(name: string, reason: string): Promise<k8s.CoreV1Event[]> {
  return (
    await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${name},reason=${reason}`,
    })
  ).items;
}

/** The rules midonet-kubernetes' Endpoints bug got wrong: their Translations and IDs. */
function buggyRules(): { translation: string; id: string }[] {
  const right = new Map(
    sampleClusterTranslations(cluster).flatMap((t) => t.resources.map((r) => [`${t.name} ${r.body}`, true])),
  );
  return migratedClusterAsWritten.flatMap((t) =>
    t.resources
      .map(asResource)
      .filter((r) => !right.has(`${t.name} ${r.body}`))
      .map((r) => ({ translation: t.name, id: (JSON.parse(r.body) as { id: string }).id })),
  );
}

beforeAll(async () => {
  stack = await startPrivateStack();
  const kubeConfig = new k8s.KubeConfig();
  kubeConfig.loadFromFile(stack.info.kubernetes.kubeconfig);
  core = kubeConfig.makeApiClient(k8s.CoreV1Api);
  custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const { admin, midonet } = await seedEmulator(stack.info, base.hosts);

  // The cluster as midonet-kubernetes ran it: the objects, its Translations of them, and MidoNet in the order it pushed.
  for (const node of cluster.nodes) await createNode({ core }, node);
  for (const pod of cluster.pods) await createPod({ core }, pod);
  await createService({ core }, cluster.service);
  await createEndpoints({ core }, cluster.endpoints);
  others = await translationsOfOthers({ core }, sampleRefs);
  for (const t of leftBehind()) {
    await writeAsMidonetKubernetes({ core, custom }, t);
    for (const resource of t.resources) await midonet.ensure(resource);
  }
  await admin.resetCounters();

  // What `steward adopt --dry-run` reports before Steward starts; kept for the assertions and shown in the log.
  survey = await surveyTranslations(
    await listAll(),
    (await desiredTranslations(core, 'midonetkube')).translations,
    midonet,
  );
  console.log(`steward adopt --dry-run, on the cluster midonet-kubernetes left:\n${formatSurvey(survey, true)}`);
  expect(await writes(admin)).toEqual({});
  notReadyBefore = (await untilReady(listAll, 0)).notReady.length;

  const started = Date.now();
  h = await startObjectsHarness(stack.info, {
    hosts: base.hosts,
    identity: 'migration',
    keepEmulator: true,
    resyncMs: 30_000,
    globalsTimeoutMs: TAKEOVER_MS,
  });
  chainOrder = await rulesByChain();
  // Every object's workflow has applied its Translations (Steward's own resources over midonet-kubernetes'), and
  // every Translation is Ready at the generation it has now.
  for (const node of cluster.nodes)
    await waitForState(h, { kind: 'Node', name: node.metadata.name }, 'ready', TAKEOVER_MS);
  for (const pod of cluster.pods)
    await waitForState(h, { kind: 'Pod', namespace: 'default', name: pod.metadata.name }, 'ready', TAKEOVER_MS);
  for (const ref of sampleRefs) await waitForState(h, ref, 'ready', TAKEOVER_MS);
  const names = leftBehind().length;
  await waitFor(
    `all ${names} Translations Ready at their generation`,
    async () => {
      const live = await listTranslations(h);
      return (
        live.length === names &&
        live.every(
          (t) => readyOf(t) && t.status?.conditions?.every((c) => c.observedGeneration === t.metadata.generation),
        )
      );
    },
    TAKEOVER_MS,
  );
  adoptSeconds = (Date.now() - started) / 1000;
  // The closing note's figure (and a reader's): how long taking over took, start of the worker included.
  const { byMethod } = await h.admin.counters();
  console.log(
    `took over ${names} Translations left by midonet-kubernetes in ${adoptSeconds.toFixed(1)} s; MidoNet requests by method: ${JSON.stringify(byMethod)}`,
  );
}, 2 * TAKEOVER_MS);
afterAll(async () => {
  await h?.stop();
  await stack?.stop();
});

describe('taking over from midonet-kubernetes', () => {
  it('`steward adopt --dry-run` tells beforehand, without a write: every resource identical but the 8 rules it will correct, for the Endpoints bug, in the 4 Translations it rewrites', () => {
    const findings = survey.flatMap((s) => s.findings.map((f) => ({ ...f, translation: s.name.split('/')[1]! })));
    const wrong = buggyRules();
    expect(
      findings
        .filter((f) => f.finding === 'corrected')
        .map((f) => [f.translation, f.key])
        .sort(),
    ).toEqual(wrong.map((w) => [w.translation, `Rule:${w.id}`]).sort());
    expect(
      findings
        .filter((f) => f.finding === 'corrected')
        .every((f) => f.reason?.startsWith("midonet-kubernetes' Endpoints bug")),
    ).toBe(true);
    expect(findings.filter((f) => f.finding !== 'corrected').every((f) => f.finding === 'identical')).toBe(true);
    expect(
      survey
        .filter((s) => s.translation === 'rewritten')
        .map((s) => s.name.split('/')[1])
        .sort(),
    ).toEqual([...new Set(wrong.map((w) => w.translation))].sort());
    expect(survey.filter((s) => s.translation !== 'rewritten').every((s) => s.translation === 'kept')).toBe(true);
  });

  it("keeps every Translation midonet-kubernetes wrote under its name: Steward's translation writes none more and deletes none", async () => {
    const live = (await listTranslations(h)).map((t) => `${t.metadata.namespace}/${t.metadata.name}`).sort();
    expect(live).toEqual(
      leftBehind()
        .map((t) => `${t.namespace}/${t.name}`)
        .sort(),
    );
  });

  it('`steward adopt` waits for the takeover: no Translation was Ready before Steward started, every one is now', async () => {
    expect(notReadyBefore).toBe(leftBehind().length);
    const { live, notReady } = await untilReady(listAll, 10_000);
    expect(notReady.map((t) => t.metadata.name)).toEqual([]);
    expect(live).toHaveLength(leftBehind().length);
  });

  it('writes nothing for what MidoNet holds as asked, and replaces exactly the rules the Endpoints bug got wrong, once each', async () => {
    const wrong = buggyRules();
    // 2 ports × 2 of 3 addresses with another endpoint's rules, DNAT and SNAT each.
    expect(wrong).toHaveLength(8);
    expect(await writes()).toEqual({ Rule: { DELETE: wrong.length, POST: wrong.length } });
    // What MidoNet holds now is what Steward's translation asks for, every resource.
    for (const resource of sampleClusterTranslations(cluster).flatMap((t) => t.resources)) {
      const seen = await h.midonet.observe(resource);
      expect({ resource: resource.body, ...seen }).toMatchObject({
        resource: resource.body,
        exists: true,
        upToDate: true,
      });
    }
    expect(await emulatorIds(h)).toEqual(expectedIds([...sampleClusterTranslations(cluster), ...others], base.hosts));
  });

  it('keeps every chain in the order midonet-kubernetes left it: a replaced rule goes back where it stood', async () => {
    expect(await rulesByChain()).toEqual(chainOrder);
  });

  it('says what it took over and what it corrected, naming the fields and the cause, once per rule', async () => {
    for (const { translation, id } of buggyRules()) {
      const corrected = (await eventsOn(translation, 'Corrected')).filter((e) => e.message?.includes(id));
      expect(corrected).toHaveLength(1);
      expect(corrected[0]).toMatchObject({
        type: 'Normal',
        count: 1,
        message: expect.stringContaining("midonet-kubernetes' Endpoints bug") as unknown,
      });
      expect(corrected[0]!.message).toMatch(
        /natTargets\[0\]\.addressFrom: "10\.1\.1\.4" → "10\.1\.[12]\.5"|nwSrcAddress: "10\.1\.1\.4" → "10\.1\.[12]\.5"/,
      );
    }
    const correctedElsewhere = await Promise.all(
      migratedClusterAsWritten
        .filter((t) => !buggyRules().some((b) => b.translation === t.name))
        .map(async (t) => (await eventsOn(t.name, 'Corrected')).length),
    );
    expect(correctedElsewhere.every((n) => n === 0)).toBe(true);
    const adopted = await eventsOn('node.4.node1', 'Adopted');
    expect(adopted[0]?.message).toMatch(
      /^\d+ resources found in MidoNet exactly as this Translation asks, taken over without a write/,
    );
  });

  it("loses nothing with its owner's workflow (terminated by hand): the record is in status.childResources, the successor pushes nothing again, refuses nothing", async () => {
    const name = buggyRules()[0]!.translation;
    const owner = { kind: 'Endpoints' as const, namespace: 'default', name: 'web' };
    const id = workflowId(owner);
    await h.admin.resetCounters();
    await h.client.workflow.getHandle(id).terminate('the workflow is lost');
    // The starter's next re-list finds the Endpoints without a running workflow and starts one.
    const successor = await waitFor(`a new ${id}`, async () => {
      const run = await h.client.workflow.getHandle(id).describe();
      return run.status.name === 'RUNNING' ? run : undefined;
    });
    await waitFor(`${id} ready`, async () => (await stateOf(h, owner)).state === 'ready');
    const history = await h.client.workflow.getHandle(id, successor.runId).fetchHistory();
    const localActivities = (history.events ?? []).flatMap((e) =>
      Object.values(e.markerRecordedEventAttributes?.details ?? {})
        .flatMap((p) => p.payloads ?? [])
        .flatMap((p) => /"activity_type"\s*:\s*"(\w+)"/.exec(Buffer.from(p.data ?? []).toString())?.[1] ?? []),
    );
    expect(localActivities).toContain('syncObject');
    expect(await writes()).toEqual({});
    const translation = (await listTranslations(h)).find((t) => t.metadata.name === name);
    expect(translation && readyOf(translation)).toBe(true);
  });

  it('then deletes a Pod and a Service as usual: their Translations go, and what they pushed with them', async () => {
    await deletePod(h, 'default', 'web-1');
    await core.deleteNamespacedService({ namespace: 'default', name: 'web' });
    const remaining = [
      ...sampleClusterTranslations({
        ...cluster,
        pods: cluster.pods.filter((p) => p.metadata.name !== 'web-1'),
      }).filter((t) => !t.ownerReferences.some((o) => o.kind === 'Service' || o.kind === 'Endpoints')),
      ...others,
    ];
    const wanted = remaining.map((t) => `${t.namespace}/${t.name}`).sort();
    await waitFor(
      'the Pod and the Service cleaned up',
      async () =>
        JSON.stringify((await listTranslations(h)).map((t) => `${t.metadata.namespace}/${t.metadata.name}`).sort()) ===
        JSON.stringify(wanted),
      120_000,
    ).catch(() => undefined);
    expect((await listTranslations(h)).map((t) => `${t.metadata.namespace}/${t.metadata.name}`).sort()).toEqual(wanted);
    await waitFor(
      'MidoNet to hold only what remains',
      async () => JSON.stringify(await emulatorIds(h)) === JSON.stringify(expectedIds(remaining, base.hosts)),
      60_000,
    ).catch(() => undefined);
    expect(await emulatorIds(h)).toEqual(expectedIds(remaining, base.hosts));
  });
});
