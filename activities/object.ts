// An object's whole sync and finalization, as its own workflow runs them (one workflow per object, DESIGN.md §2):
// translate and apply its Translations, push each one's MidoNet resources, and write each one's status, in one call
// (one local activity, one marker in the history); on its deletion, delete what each pushed and let each go. The
// Translations keep their record of what is in MidoNet in `status.childResources`, written by the push itself: the
// workflow carries only the names of the first few, for its UI page.
import { ApplicationFailure } from '@temporalio/common';
import type { ApplyObjectInput, ApplyObjectResult } from '../model/apply-object';
import type { WrittenTranslation } from '../model/kubernetes-calls';
import type { ResourceRef } from '../model/messages';
import { needsHosts } from '../model/translation/node-annotator';
import { parseObjectRef, workflowId, type ObjectRef } from '../model/naming';
import { Reason, TRANSLATION_FINALIZER } from '../model/vocabulary';
import type { KubernetesActivities } from './kubernetes';
import { rememberingWrites } from './kubernetes/objects';
import type { AnnotateNodeResult } from './kubernetes/node-annotations';
import type { MidonetActivities } from './midonet';
import { NAMED_RESOURCES, type PushActivities } from './midonet/push';
import { settlesLater } from '../model/fence';

/**
 * The apply's result, how many resources are in MidoNet after the push (absent: nothing was pushed) and the first
 * `NAMED_RESOURCES` of them.
 */
export type SyncObjectResult = ApplyObjectResult & { pushed?: number; resources?: ResourceRef[] };

export interface FinalizeObjectInput {
  ref: ObjectRef;
  uid: string;
  /** The dependency it registered on as a referrer: removed from it once its Translations are gone. */
  dependency?: ObjectRef;
  /**
   * `delete`: what the Translations pushed is deleted, in reverse order; `force` (an operator's cleanup) deletes it
   * skipping what MidoNet refuses; `orphan` leaves it in MidoNet. Each way the Translations are let go and deleted.
   */
  mode: 'delete' | 'force' | 'orphan';
}

export interface FinalizeObjectResult {
  finalized: number;
  /** Nothing was done: a lost push attempt's writes may land until then (its Translation's fence). */
  unsettledUntil?: string;
  /** Nothing was done: the API server holds the object, not being deleted (its deletion was claimed falsely). */
  live?: true;
}

type KubernetesCalls = Pick<
  KubernetesActivities,
  | 'writeNodeAnnotations'
  | 'applyObject'
  | 'recordTranslationStatus'
  | 'releaseFinalizer'
  | 'listOwnedTranslations'
  | 'removeTranslation'
  | 'removeReferrer'
  | 'recordObjectEvent'
  | 'readObject'
>;

export interface ObjectActivityDeps {
  kubernetes: KubernetesCalls;
  midonet: PushActivities & Pick<MidonetActivities, 'midonetListHosts'>;
  /** midonet-kubernetes' node annotator: fill a Node's missing midonet.org annotations (STEWARD_NODE_ANNOTATOR). */
  nodeAnnotator: boolean;
}

/** The node annotator's answer: `off` when it is switched off (the Node is translated as it is). */
export type AnnotateNodeOutcome = AnnotateNodeResult | { outcome: 'off' };

const translationRef = (key: string): ObjectRef => parseObjectRef('Translation', key);

/** The object as the owner its Translations' label names (a Node, Pod, Service or Endpoints). */
const ownerOf = (ref: ObjectRef, uid: string) => ({
  owner: { ...(ref as ObjectRef<'Node' | 'Pod' | 'Service' | 'Endpoints'>), uid },
});

/** Read from and written to the API server: the workflow carries neither the resources nor the record. */
const byReference = (ref: ObjectRef, uid: string) => ({
  resources: [],
  reference: { ref, uid, readResources: true, readRecord: true },
});

/** A failure a later push of a sibling can cure: a parent or referenced object that sibling makes. */
const waitsForSibling = (error: unknown): error is ApplicationFailure =>
  error instanceof ApplicationFailure && error.type === 'MidonetDependencyMissing';

/** Pushes one Translation, which reports on it (activities/midonet/push.ts): Ready and Synced, or why not. */
async function pushOne(
  { midonet }: ObjectActivityDeps,
  { key, uid }: WrittenTranslation,
): Promise<{ count: number; named: ResourceRef[] }> {
  const ref = translationRef(key);
  const { count, named = [] } = await midonet.pushTranslation({
    owner: workflowId(ref),
    previous: [],
    ...byReference(ref, uid),
  });
  return { count, named };
}

/**
 * Pushes every Translation, in order. One that waits for what a sibling makes (a Node's address routes need the
 * router port of its main Translation) is tried again after the others, as long as a round makes progress. When a
 * round makes none, the rest wait for what MidoNet lacks (`unpushed`, the first one's failure): everything else is
 * pushed then. Any other failure is thrown at once.
 */
async function pushAll(
  deps: ObjectActivityDeps,
  written: WrittenTranslation[],
): Promise<{ pushed: number; resources: ResourceRef[]; unpushed?: ApplicationFailure }> {
  let pushed = 0;
  const resources: ResourceRef[] = [];
  let waiting = written;
  for (;;) {
    const failed: { translation: WrittenTranslation; error: ApplicationFailure }[] = [];
    for (const translation of waiting) {
      try {
        const { count, named } = await pushOne(deps, translation);
        pushed += count;
        resources.push(...named.slice(0, NAMED_RESOURCES - resources.length));
      } catch (error) {
        if (!waitsForSibling(error)) throw error;
        failed.push({ translation, error });
      }
    }
    if (failed.length === 0) return { pushed, resources };
    if (failed.length === waiting.length) return { pushed, resources, unpushed: failed[0]!.error };
    waiting = failed.map((f) => f.translation);
  }
}

/**
 * The object waits for its dependency (a Pod's Node gone, its bridge with it): what its Translations pushed may be gone
 * too, so none of them says Ready, nor claims its resources synced, until it is pushed again. One being deleted needs
 * no dependency (stale, its finalization cut short by a lost worker, or deleted by hand): it is finalized now, or at a
 * later try while a lost attempt's writes may still land. Left to the dependency's return, its finalizer held it for
 * as long as the dependency stayed away (chaos seed 52: a Pod whose Node was deleted for good).
 */
async function whileWaiting(deps: ObjectActivityDeps, { ref, uid }: ApplyObjectInput, reason: string) {
  const { kubernetes } = deps;
  const owned = await kubernetes.listOwnedTranslations(ownerOf(ref, uid));
  const waiting = { status: 'False' as const, reason: Reason.WaitingForDependency, message: reason };
  for (const translation of owned.filter((t) => t.deleting && !settlesLater(t.unsettledUntil, Date.now())))
    await finalizeOne(deps, translation, 'delete');
  for (const { key, uid: translationUid, generation } of owned.filter((t) => !t.deleting))
    await kubernetes.recordTranslationStatus({
      ref: translationRef(key),
      uid: translationUid,
      generation,
      ready: waiting,
      synced: waiting,
      unverified: true,
    });
}

/**
 * A deletion the guard against mass deletion holds, on the Translation itself: what it pushed stays in MidoNet
 * (Ready), the deletion asked is not done (Synced), and a Warning Event says how to go on.
 */
async function tellHeld(kubernetes: KubernetesCalls, ref: ObjectRef, uid: string, generation: number, message: string) {
  const held = { reason: Reason.MassDeletionHeld, message };
  await kubernetes
    .recordTranslationStatus({
      ref,
      uid,
      generation,
      ready: { status: 'True', ...held },
      synced: { status: 'False', ...held },
      event: { type: 'Warning', ...held },
    })
    // Telling is informative: the refusal itself is what the workflow shows.
    .catch(() => undefined);
}

/** Deletes what one Translation pushed (unless orphaned), then lets it go and deletes it. */
async function finalizeOne(
  { kubernetes, midonet }: ObjectActivityDeps,
  { key, uid, generation }: Pick<WrittenTranslation, 'key' | 'uid' | 'generation'>,
  mode: FinalizeObjectInput['mode'],
): Promise<void> {
  const ref = translationRef(key);
  if (mode !== 'orphan') {
    try {
      await midonet.deleteTranslation({
        owner: workflowId(ref),
        force: mode === 'force',
        ...byReference(ref, uid),
      });
    } catch (error) {
      // Held: its finalizer stays, and the workflow waits in `stuck` for the operator's go-ahead.
      if (error instanceof ApplicationFailure && error.type === Reason.MassDeletionHeld)
        await tellHeld(kubernetes, ref, uid, generation, error.message);
      // Gone already (its finalizer removed by hand): its record went with it, nothing more can be done here.
      if (!(error instanceof ApplicationFailure && error.type === 'TranslationGone')) throw error;
    }
  }
  const release = await kubernetes.releaseFinalizer({ ref, uid, finalizer: TRANSLATION_FINALIZER });
  // One being deleted already (by the garbage collector, its owner gone) went with the release: no delete to send.
  if (release.released ? !release.deleting : release.reason === 'FinalizerAbsent')
    await kubernetes.removeTranslation({ ref, uid });
}

export function createObjectActivities(deps: ObjectActivityDeps) {
  const { kubernetes } = deps;
  /**
   * Translate, apply, push, report. Applied Translations that are being deleted (by hand, or by the garbage collector
   * of an incarnation gone before) are finalized first, then applied again.
   */
  async function sync(input: ApplyObjectInput): Promise<SyncObjectResult> {
    let result = await kubernetes.applyObject(input);
    if (result.outcome === 'applied' && result.terminating.length > 0) {
      const terminating = new Set(result.terminating);
      for (const t of result.written.filter((w) => terminating.has(w.key))) await finalizeOne(deps, t, 'delete');
      result = await kubernetes.applyObject(input);
    }
    if (result.outcome === 'wait') {
      await whileWaiting(deps, input, result.reason);
      // What it waits for, on the object itself: `kubectl describe pod` says why it has no network yet (once a wait).
      const { ref, uid, waitingFor } = input;
      const wait = { type: 'Normal' as const, reason: Reason.WaitingForDependency, message: result.reason };
      if (result.reason !== waitingFor) await kubernetes.recordObjectEvent({ ref, uid, ...wait });
    }
    if (result.outcome !== 'applied' || result.terminating.length > 0) return result;
    const { pushed, resources, unpushed } = await pushAll(deps, result.written);
    // Made before broken: what is no longer wanted goes once what replaces it is there, or once all that can be is.
    // What waits for what MidoNet lacks may wait for good (an Endpoints port that no port of its Service names, as in
    // midonet-kubernetes), and must not keep the stale ones in MidoNet and their finalizers held meanwhile (chaos
    // seed 144: the old endpoints' rules stayed, their Translations Terminating).
    for (const t of result.stale) await finalizeOne(deps, t, 'delete');
    if (unpushed) throw unpushed;
    return { ...result, pushed, resources };
  }

  /**
   * Every Translation of the object (found by its UID label), last first, then its back-reference. When a push attempt
   * lost with its worker may still have writes landing for longer than a local activity should wait, nothing is done
   * yet: the answer says until when, and the workflow waits with a timer.
   */
  async function finalize({ ref, uid, dependency, mode }: FinalizeObjectInput): Promise<FinalizeObjectResult> {
    // Its deletion is proven by the API server, whoever said it (a forged observation, issue 43): an operator's
    // cleanup acts on a live object on purpose.
    if (mode === 'delete') {
      const read = await kubernetes.readObject({ ref });
      if (read.found && read.uid === uid && !read.deleting) return { finalized: 0, live: true };
    }
    const owned = await kubernetes.listOwnedTranslations(ownerOf(ref, uid));
    const until = owned.map((t) => t.unsettledUntil ?? '').reduce((a, b) => (a > b ? a : b), '');
    if (mode !== 'orphan' && settlesLater(until, Date.now())) return { finalized: 0, unsettledUntil: until };
    for (const translation of [...owned].reverse()) await finalizeOne(deps, translation, mode);
    if (dependency && mode === 'delete') await kubernetes.removeReferrer({ dependency, referrer: ref });
    return { finalized: owned.length };
  }

  /** The missing midonet.org annotations of a Node, as midonet-kubernetes' annotator fills them (MidoNet read only for a host ID). */
  async function annotateNode({ ref, uid }: { ref: ObjectRef; uid: string }): Promise<AnnotateNodeOutcome> {
    if (!deps.nodeAnnotator) return { outcome: 'off' };
    const read = await kubernetes.readObject({ ref });
    if (!read.found || read.uid !== uid || read.deleting) return { outcome: 'gone' };
    const hosts = needsHosts(read.object) ? (await deps.midonet.midonetListHosts({})).hosts : [];
    return kubernetes.writeNodeAnnotations({ ref, uid, hosts: hosts.map(({ id, name }) => ({ id, name })) });
  }

  // Each Translation is read once per call (its apply or the list), then worked on from what each write answers.
  return {
    annotateNode,
    syncObject: (input: ApplyObjectInput) => rememberingWrites(() => sync(input)),
    finalizeObject: (input: FinalizeObjectInput) => rememberingWrites(() => finalize(input)),
  };
}

export type ObjectActivities = ReturnType<typeof createObjectActivities>;
