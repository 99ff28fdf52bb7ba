import { applyObjectSteps, type ApplyObjectCalls } from './apply-object';
import { sampleCluster } from './translation/sample-cluster';

const cluster = sampleCluster();
const node = cluster.nodes[0]!;
const pod = cluster.pods.find((p) => p.spec.nodeName === node.metadata.name)!;
const podRef = { kind: 'Pod' as const, namespace: pod.metadata.namespace, name: pod.metadata.name };

/** The calls, with the Node there and its Translations Ready or not. */
function calls(nodeTranslationsReady: boolean): ApplyObjectCalls {
  const calls: ApplyObjectCalls = {
    translationsReady: ({ translations }) =>
      Promise.resolve({
        ready: nodeTranslationsReady,
        notReady: nodeTranslationsReady ? [] : translations.map((t) => `${t.namespace}/${t.name}`),
      }),
    applyTranslations: () => Promise.resolve({ applied: [], written: [], stale: [], terminating: [] }),
    addReferrer: () => Promise.resolve({ found: true, object: node }),
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

  it('translates with the dependency its registration answered, and names it when its own translation fails', async () => {
    const registered: unknown[] = [];
    const counting = {
      ...calls(true),
      addReferrer: (input: unknown) => (registered.push(input), calls(true).addReferrer(input as never)),
    };
    const badMac = { ...pod, metadata: { ...pod.metadata, annotations: { 'midonet.org/mac-address': 'not-a-mac' } } };
    const result = await applyObjectSteps(counting, { ref: podRef, uid: 'pod-uid', projection: badMac });
    // Registered already: the finalization removes its back-reference, which it can only do knowing the dependency.
    expect(result).toMatchObject({ outcome: 'invalid', dependency: { kind: 'Node', name: node.metadata.name } });
    expect(registered).toEqual([{ dependency: { kind: 'Node', name: node.metadata.name }, referrer: podRef }]);
  });

  it('waits, unregistered, for a dependency missing or being deleted', async () => {
    for (const answer of [{ found: false }, { found: true, deleting: true as const, object: node }])
      await expect(
        applyObjectSteps(
          { ...calls(true), addReferrer: () => Promise.resolve(answer) },
          { ref: podRef, uid: 'pod-uid', projection: pod },
        ),
      ).resolves.toMatchObject({ outcome: 'wait', reason: `Node ${node.metadata.name} does not exist (yet)` });
  });
});
