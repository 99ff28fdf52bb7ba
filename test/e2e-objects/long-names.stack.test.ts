// Names at Kubernetes' limits (issue 10): a Node of 200 characters and a Pod of 253 make Translation names longer
// than the API server accepts. They are cut to 253 characters ending in the SHA-1 of the whole name (every name
// midonet-kubernetes could write is unchanged), so such objects get their Translations Ready instead of a 422
// retried every minute for ever.
import { startPrivateStack } from '../../deploy/local/jest/stack-info';
import type { Stack } from '../../deploy/local';
import { translateWithDependency } from '../../model/translation/dependency';
import { DEFAULT_TENANT, MAX_TRANSLATION_NAME } from '../../model/translation/ids';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createNode,
  createPod,
  isReady,
  startObjectsHarness,
  waitFor,
  type ObjectsHarness,
} from '../support/objects-harness';

const cluster = sampleCluster();
const label = (c: string) => c.repeat(60);

let stack: Stack;
let h: ObjectsHarness;
beforeAll(async () => {
  stack = await startPrivateStack();
  h = await startObjectsHarness(stack.info, { hosts: cluster.hosts, identity: 'e2e-long-names' });
});
afterAll(async () => {
  await h?.stop();
  await stack?.stop();
});

it('a 200-character Node and a 253-character Pod on it get their Translations, with names cut to fit, Ready', async () => {
  const sample = cluster.nodes[0]!;
  const nodeName = `${label('n')}.${label('o')}.${label('d')}.long-node-e2e-xyz`;
  const node = { ...sample, metadata: { ...sample.metadata, name: nodeName } };
  const samplePod = cluster.pods.find((p) => p.spec.nodeName === sample.metadata.name)!;
  const podName = `${label('p')}.${label('o')}.${label('d')}.${label('s')}.long-pod1`;
  const pod = {
    ...samplePod,
    metadata: { ...samplePod.metadata, name: podName },
    spec: { ...samplePod.spec, nodeName },
  };
  expect([nodeName.length, podName.length]).toEqual([200, 253]);

  const translated = translateWithDependency(pod, node, DEFAULT_TENANT);
  if (translated.outcome !== 'translated')
    throw new Error(`the long-named Pod does not translate: ${JSON.stringify(translated)}`);
  const names = [...translated.dependencyTranslations, ...translated.translations].map(({ namespace, name }) => ({
    namespace,
    name,
  }));
  expect(names.filter((t) => t.name.length > MAX_TRANSLATION_NAME)).toEqual([]);
  expect(names.some((t) => t.name.length === MAX_TRANSLATION_NAME)).toBe(true);

  await createNode(h, node);
  await createPod(h, pod);
  await waitFor('the long-named Node and Pod Translations Ready', async () =>
    (await Promise.all(names.map((t) => isReady(h, t.namespace, t.name)))).every(Boolean),
  );
});
