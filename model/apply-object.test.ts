import { applyObjectSteps, type ApplyObjectCalls } from './apply-object';
import { sampleCluster } from './translation/sample-cluster';

const cluster = sampleCluster();
const node = cluster.nodes[0]!;
const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
const podRef = { kind: 'Pod' as const, namespace: pod.metadata.namespace, name: pod.metadata.name };

/** The calls, with the Node there and its Translations Ready or not. */
function calls(nodeTranslationsReady: boolean): ApplyObjectCalls {
  const calls: ApplyObjectCalls = {
    readObject: () =>
      Promise.resolve({ found: true, uid: 'node-uid', generation: 1, deleting: false, finalizers: [], object: node }),
    translationsReady: ({ translations }) =>
      Promise.resolve({
        ready: nodeTranslationsReady,
        notReady: nodeTranslationsReady ? [] : translations.map((t) => `${t.namespace}/${t.name}`),
      }),
    applyTranslations: () => Promise.resolve({ applied: [], written: [], stale: [], terminating: [] }),
    addReferrer: () => Promise.resolve({}),
    removeReferrer: () => Promise.resolve({}),
  };
  return calls;
}

describe("an object's apply", () => {
  it("waits for its dependency's Translations on its own timer: the dependency tells only when it changes", async () => {
    const result = await applyObjectSteps(calls(false), { ref: podRef, uid: 'pod-uid', projection: pod });
    expect(result).toMatchObject({
      outcome: 'wait',
      reason: expect.stringMatching(/^waiting for Node .*'s Translations to be pushed: /) as string,
      dependency: { kind: 'Node', name: node.metadata.name },
    });
    expect(result).not.toHaveProperty('notified');
    await expect(
      applyObjectSteps(calls(true), { ref: podRef, uid: 'pod-uid', projection: pod }),
    ).resolves.toMatchObject({ outcome: 'applied' });
  });
});
