// The diagnosis of a run that did not converge (a chaos run, a failover case): what the workflows of the objects the
// violations name say about themselves, since a test's log keeps only its error.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { sleep } from '../../deploy/local/process';
import { stateQuery } from '../../model/messages';
import { LIFECYCLE_KINDS, workflowId, type LifecycleKind } from '../../model/naming';
import type { Snapshot, Violation } from './invariants';

/**
 * One line per workflow of an object a violation names (a Pod's peer-pod workflow too, and the Translations it owns or
 * the detail names): its machine state, incarnation, last error and what it holds, or how it ended.
 */
export async function workflowStates(client: Client, snapshot: Snapshot, violations: Violation[]): Promise<string[]> {
  const liveUid = (id: string) => {
    const [kind, a, b] = id.split('/');
    const items =
      {
        node: snapshot.nodes,
        pod: snapshot.pods,
        peerpod: snapshot.pods,
        service: snapshot.services,
        endpoints: snapshot.endpoints,
        translation: snapshot.translations,
      }[kind ?? ''] ?? [];
    const found = (items as { metadata?: { name?: string; namespace?: string; uid?: string } }[]).find((o) =>
      b ? o.metadata?.namespace === a && o.metadata?.name === b : o.metadata?.name === a,
    );
    return found ? `live uid ${found.metadata?.uid}` : 'no live object';
  };
  const ids = new Set<string>();
  for (const v of violations) {
    const [kind = '', ref = ''] = v.object.split(' ');
    const [namespace, name] = ref.includes('/') ? ref.split('/') : [undefined, ref];
    if (!LIFECYCLE_KINDS.includes(kind as LifecycleKind) || !name) continue;
    ids.add(workflowId({ kind: kind as LifecycleKind, ...(namespace ? { namespace } : {}), name }));
    if (kind === 'Pod') ids.add(workflowId({ kind: 'PeerPod', namespace: namespace!, name }));
    const translation = /Translation (\S+)\/(\S+?):/.exec(v.detail);
    if (translation) ids.add(workflowId({ kind: 'Translation', namespace: translation[1]!, name: translation[2]! }));
    // And what its Translations' pushers say: a missing resource is usually one of them stuck or refused.
    for (const t of snapshot.translations) {
      const owner = t.metadata.ownerReferences?.[0];
      if (owner?.kind === kind && owner.name === name && (kind === 'Node' || t.metadata.namespace === namespace))
        ids.add(workflowId({ kind: 'Translation', namespace: t.metadata.namespace, name: t.metadata.name }));
    }
  }
  const lines: string[] = [];
  for (const id of ids) {
    const handle = client.workflow.getHandle(id);
    const answer = await Promise.race([
      (async () => {
        const { status } = await handle.describe();
        if (status.name !== 'RUNNING') return `${status.name.toLowerCase()} (${liveUid(id)})`;
        const view = await handle.query(stateQuery);
        const held = view.resources.map((r) => `${r.kind} ${r.id} ${r.state}`).join('; ');
        const signals = await observedInRun(handle);
        return `${view.state}, incarnation ${view.uid ?? '?'} (${liveUid(id)})${view.lastError ? `, last error ${view.lastError.reason}: ${view.lastError.message.slice(0, 200)}` : ''}${held ? `; holds ${held.slice(0, 300)}` : ''}; this run observed: ${signals || 'nothing'}`;
      })(),
      sleep(10_000).then(() => 'no answer in 10 s'),
    ]).catch((error: Error) => `? ${error.message.slice(0, 120)}`);
    lines.push(`workflow ${id}: ${answer}`);
  }
  return lines;
}

/**
 * The observations the workflow's current run was signalled (its last 8), as `<kind>/<name> <uid> <deleting|gone>`:
 * whether the starter delivered a deletion the workflow shows no sign of.
 */
async function observedInRun(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const seen: string[] = [];
  for (const event of history.events ?? []) {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== 'observed') continue;
    // The signal's arguments are the Observations, one payload each.
    const observations = (signal.input?.payloads ?? []).map((p) =>
      defaultPayloadConverter.fromPayload<{
        ref: { kind: string; name: string };
        uid: string;
        deleting: boolean;
        gone: boolean;
        projection?: { source?: string };
      }>(p),
    );
    for (const o of observations)
      seen.push(
        `${o.projection?.source ?? o.ref.kind}/${o.ref.name} ${o.uid.slice(0, 8)}${o.gone ? ' gone' : o.deleting ? ' deleting' : ''}`,
      );
  }
  return seen.slice(-8).join(', ');
}
