// midonet-kubernetes' node annotator (its `nodeannotator` controller, on by default), as a step of the Node's own
// lifecycle: the three annotations the Node's translation reads, filled from MidoNet and the Node itself. Pure: the
// activity reads the Node and MidoNet's hosts, this decides, the activity writes.
import { ANNOTATIONS } from './model';

/** The reason of the Normal Event midonet-kubernetes records on a Node it annotated: kept, so alerts and tools match. */
export const NODE_ANNOTATED_REASON = 'MidoNetHostIDAnnotated';

/** The three annotations, in the order midonet-kubernetes' handler keeps them. */
const ANNOTATED = [ANNOTATIONS.hostId, ANNOTATIONS.tunnelZoneId, ANNOTATIONS.tunnelEndpointIP] as const;

/**
 * Which of the three a Node lacks. midonet-kubernetes fills a key that is absent; an empty host ID or tunnel endpoint
 * IP is as good as absent (the translation cannot use it), while an empty tunnel zone ID means the default zone, the
 * value the annotator itself writes. A value someone set is never replaced.
 */
export function missingNodeAnnotations(annotations: Record<string, string> | undefined): string[] {
  return ANNOTATED.filter((key) => {
    const value = annotations?.[key];
    return value === undefined || (value === '' && key !== ANNOTATIONS.tunnelZoneId);
  });
}

export interface AnnotatedNode {
  metadata: { name: string; annotations?: Record<string, string> };
  status?: { addresses?: { type: string; address: string }[] };
}

export type NodeAnnotationPlan =
  | { outcome: 'complete' }
  | { outcome: 'annotate'; annotations: Record<string, string> }
  | { outcome: 'wait'; reason: string };

/** Whether the plan needs MidoNet's hosts (only the host ID comes from there). */
export const needsHosts = (node: AnnotatedNode) =>
  missingNodeAnnotations(node.metadata.annotations).includes(ANNOTATIONS.hostId);

/**
 * What to write on `node`: the host whose name is the Node's name (midonet-kubernetes' host resolver, over `GET
 * /hosts`), the Node's first InternalIP, and `""` (the default tunnel zone). All missing ones in one patch, as
 * midonet-kubernetes' handler writes them, or none while one cannot be had yet: a Node half annotated would be
 * translated without its host.
 */
export function planNodeAnnotations(node: AnnotatedNode, hosts: { id: string; name: string }[]): NodeAnnotationPlan {
  const missing = missingNodeAnnotations(node.metadata.annotations);
  if (missing.length === 0) return { outcome: 'complete' };
  const { name } = node.metadata;
  const annotations: Record<string, string> = {};
  for (const key of missing) {
    if (key === ANNOTATIONS.tunnelZoneId) annotations[key] = '';
    else if (key === ANNOTATIONS.tunnelEndpointIP) {
      const internal = node.status?.addresses?.find((a) => a.type === 'InternalIP' && a.address !== '');
      if (!internal)
        return { outcome: 'wait', reason: `Node ${name} has no InternalIP address yet for its tunnel endpoint` };
      annotations[key] = internal.address;
    } else {
      const host = hosts.find((h) => h.name === name);
      if (!host)
        return {
          outcome: 'wait',
          reason: `MidoNet has no host named ${name} yet: its MidoNet agent registers it when it starts on the Node`,
        };
      annotations[key] = host.id;
    }
  }
  return { outcome: 'annotate', annotations };
}

/** The Event's message as midonet-kubernetes words it (`Annotated %v` of a Go map: keys sorted, `map[k:v k:v]`). */
export function annotatedMessage(annotations: Record<string, string>): string {
  const entries = Object.keys(annotations)
    .sort()
    .map((key) => `${key}:${annotations[key]}`);
  return `Annotated map[${entries.join(' ')}]`;
}
