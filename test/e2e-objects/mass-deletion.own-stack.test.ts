// The guard against mass deletion (issue 41), end to end: on a stack where a Node and five Pods are pushed, the
// Translation CRD is deleted, as `kubectl delete -f midonet-kube.yaml` would. Every Translation gets a deletion
// timestamp and its finalizer asks for its MidoNet resources to go; the guard holds them all: MidoNet keeps
// everything, the Translations stay Terminating, and the lifecycles wait in `stuck` saying why. Then the operator's
// `steward cleanup --confirm-mass-deletion` lets the deletions go on as they always did.
import * as k8s from '@kubernetes/client-node';
import { runOperatorCommand } from '../support/pusher-harness';
import { TRANSLATION_CRD } from '../../model/deletion-guard';
import type { ObjectRef } from '../../model/naming';
import { sampleCluster } from '../../model/translation/sample-cluster';
import { Reason } from '../../model/vocabulary';
import {
  createNode,
  createPod,
  emulatorIds,
  eventsAbout,
  listTranslations,
  objectsHarnessForFile,
  stateOf,
  waitFor,
  waitForState,
} from '../support/objects-harness';

const base = sampleCluster();
const node = base.nodes[0]!;
const pods = Array.from({ length: 5 }, (_, i) => ({
  ...base.pods[0]!,
  metadata: { ...base.pods[0]!.metadata, name: `held-${i}`, uid: '', annotations: {} },
  status: { phase: 'Running', podIP: `10.1.1.${20 + i}` },
}));
const podRef = (name: string): ObjectRef => ({ kind: 'Pod', namespace: 'default', name });

const h = objectsHarnessForFile({ hosts: base.hosts, identity: 'mass-deletion' });

/** Runs `steward <args…>` in this process against the stack; resolves what it printed. */
function steward(...args: string[]): Promise<string> {
  const { temporal, kubernetes } = h.info;
  const stack = ['--address', temporal.address, '--temporal-namespace', temporal.namespace];
  return runOperatorCommand([...args, ...stack, '--kubeconfig', kubernetes.kubeconfig]);
}

/** How many of each kind MidoNet holds. */
const counts = async () =>
  Object.fromEntries(Object.entries(await emulatorIds(h)).map(([kind, ids]) => [kind, ids.length]));

it('holds every MidoNet deletion while the Translation CRD is deleted, and lets them go on the operator’s word', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(h.info.kubernetes.kubeconfig);
  const crds = kc.makeApiClient(k8s.ApiextensionsV1Api);
  await createNode(h, node);
  await waitForState(h, { kind: 'Node', name: node.metadata.name }, 'ready');
  for (const pod of pods) await createPod(h, pod);
  for (const pod of pods) await waitForState(h, podRef(pod.metadata.name), 'ready');
  const before = await counts();
  expect(before).toMatchObject({ Bridge: 1, Chain: expect.any(Number) as number });
  expect(before.Port).toBeGreaterThanOrEqual(8);

  // What `kubectl delete -f midonet-kube.yaml` does to Steward.
  await crds.deleteCustomResourceDefinition({ name: TRANSLATION_CRD });
  // Longer than the old behaviour took to empty MidoNet (seconds here, 45 s on `npm start`): nothing goes.
  await new Promise((resolve) => setTimeout(resolve, 30_000));
  expect(await counts()).toEqual(before);

  // Held, and said so: every Pod waits in stuck with the reason; the Translations stay, Terminating, with it.
  for (const pod of pods) {
    const view = await waitForState(h, podRef(pod.metadata.name), 'stuck');
    expect(view.lastError?.reason).toBe(Reason.MassDeletionHeld);
  }
  const terminating = await listTranslations(h);
  expect(terminating.length).toBeGreaterThan(pods.length);
  const held = terminating.find((t) => t.metadata.name.includes('held-0'));
  expect(held?.metadata.deletionTimestamp).toBeDefined();
  expect(held?.status?.conditions?.find((c) => c.type === 'Synced')).toMatchObject({
    status: 'False',
    reason: Reason.MassDeletionHeld,
  });
  const warnings = await eventsAbout(h, 'Pod', 'held-0');
  expect(warnings.some((e) => e.type === 'Warning' && e.reason === Reason.MassDeletionHeld)).toBe(true);
  expect(await steward('status')).toMatch(/mass-deletion guard: HELD: the CustomResourceDefinition/);

  // The operator's word, recorded on the CRD with who and why; the held lifecycles are woken at once.
  expect(await steward('cleanup', '--confirm-mass-deletion', '--reason', 'leaving MidoNet')).toMatch(
    /mass deletion confirmed by .+: MidoNet deletions go on; [1-9]\d* held lifecycles woken/,
  );
  expect(await steward('status')).toMatch(/not held: .* let go \(last go-ahead by .+: leaving MidoNet\)/);
  const retried = await stateOf(h, podRef('held-0'));
  expect(retried.actions.at(-1)).toMatchObject({ action: 'cleanup', mode: 'retry' });

  // As before the guard: every deletion goes through, the finalizers are released, and the CRD goes.
  await waitFor(
    'MidoNet emptied of the Node and Pods',
    async () => {
      const now = await counts();
      return !now.Bridge && !now.Chain && !now.Port;
    },
    180_000,
  );
  await waitFor(
    'the Translations and their CRD gone',
    () =>
      crds.readCustomResourceDefinition({ name: TRANSLATION_CRD }).then(
        () => false,
        (error: { code?: number }) => error.code === 404,
      ),
    180_000,
  );
}, 600_000);
