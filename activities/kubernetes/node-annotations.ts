// The node annotator's write (model/translation/node-annotator.ts decides): the missing midonet.org annotations of a
// Node in one merge patch, conditional on the resourceVersion it was planned from, so a value someone set meanwhile
// is never overwritten; and the Normal Event midonet-kubernetes records for it.
import * as k8s from '@kubernetes/client-node';
import type { ObjectRef } from '../../model/naming';
import {
  annotatedMessage,
  NODE_ANNOTATED_REASON,
  planNodeAnnotations,
  type NodeAnnotationPlan,
} from '../../model/translation/node-annotator';
import type { createEventRecorder } from './events';
import { type KubeObject, type Objects, update } from './objects';

export interface AnnotateNodeInput {
  ref: ObjectRef;
  /** The incarnation its lifecycle serves: another one under the name is left alone. */
  uid: string;
  /** MidoNet's hosts (id and name), when a host ID is missing. */
  hosts: { id: string; name: string }[];
}

/** The plan carried out: `annotate` means written now; `gone` that the incarnation is not there any more. */
export type AnnotateNodeResult = NodeAnnotationPlan | { outcome: 'gone' };

export function createNodeAnnotations(objects: Objects, recordEvent: ReturnType<typeof createEventRecorder>) {
  async function writeNodeAnnotations({ ref, uid, hosts }: AnnotateNodeInput): Promise<AnnotateNodeResult> {
    const result = await update<{ plan: AnnotateNodeResult; node?: KubeObject }>(objects.accessor(ref), (current) => {
      if (!current || current.metadata.uid !== uid || current.metadata.deletionTimestamp)
        return { done: { plan: { outcome: 'gone' } } };
      const plan = planNodeAnnotations(current, hosts);
      if (plan.outcome !== 'annotate') return { done: { plan } };
      return {
        patch: { metadata: { resourceVersion: current.metadata.resourceVersion, annotations: plan.annotations } },
        strategy: k8s.PatchStrategy.MergePatch,
        then: (node) => ({ plan, node }),
      };
    });
    const { plan, node } = result;
    if (plan.outcome === 'annotate' && node)
      await recordEvent(ref, node, {
        type: 'Normal',
        reason: NODE_ANNOTATED_REASON,
        message: annotatedMessage(plan.annotations),
      });
    return plan;
  }
  return { writeNodeAnnotations };
}
