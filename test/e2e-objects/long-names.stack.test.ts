// Names at Kubernetes' limits (issue 10): a Node of 200 characters and a Pod of 253 make Translation names longer
// than the API server accepts. They are cut to 253 characters ending in the SHA-1 of the whole name (every name
// midonet-kubernetes could write is unchanged), so such objects get their Translations Ready instead of a 422
// retried every minute for ever.
import { DEFAULT_TENANT, MAX_TRANSLATION_NAME } from '../../model/translation/ids';
import { sampleCluster } from '../../model/translation/sample-cluster';
import {
  createNode,
  createPod,
  objectsHarnessForFile,
  podTranslationNames,
  waitForReady,
} from '../support/objects-harness';

const cluster = sampleCluster();
const label = (c: string) => c.repeat(60);

const h = objectsHarnessForFile({ hosts: cluster.hosts, identity: 'e2e-long-names' });

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

  const names = podTranslationNames(pod, node, DEFAULT_TENANT);
  expect(names.filter((t) => t.name.length > MAX_TRANSLATION_NAME)).toEqual([]);
  expect(names.some((t) => t.name.length === MAX_TRANSLATION_NAME)).toBe(true);

  await createNode(h, node);
  await createPod(h, pod);
  await waitForReady(h, 'the long-named Node and Pod Translations', names);
});
