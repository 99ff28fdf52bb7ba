import { patched } from '@temporalio/workflow';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';

/**
 * Every patch the lifecycle workflows know, oldest first. Each `patched()` that answers true in a new workflow costs
 * two history events (its marker and core's `TemporalChangeVersion` upsert). So the starter starts each workflow with
 * this list in its input: a workflow started with a patch listed took that path from its first event, and asks
 * `patched()` only for the patches it was not started with (histories recorded before, and patches added after).
 *
 * One workflow per object (issue 24) retired every patch before it with the histories they kept replaying. Every change
 * that alters a history adds its patch here (or runs on a new Worker Deployment Version), and the lives recorded before
 * it keep replaying (test/replay).
 */
export const KNOWN_PATCHES = [
  // A `gone` observation is believed only once the API server confirms it (workflows/lifecycle.ts provenGone).
  'gone-proven',
] as const satisfies readonly string[];

export type PatchId = (typeof KNOWN_PATCHES)[number];

/**
 * Whether a patch is in effect, for a workflow started with `startedWith` (its input's `patches`). A workflow that
 * lists a patch this code does not know was started by a newer Steward: its workflow task fails (and is retried) so
 * that only a worker of that version runs it; an older one would take the unpatched path and break its replay.
 *
 * A listed patch whose marker the history holds anyway (a worker from before this list ran the workflow a newer
 * starter started, during a rolling update) is asked with `patched()`, which replays that marker: core refuses a
 * marker no code asks for.
 */
export function patchesOf(startedWith: readonly string[] | undefined): (id: PatchId) => boolean {
  const unknown = (startedWith ?? []).filter((id) => !(KNOWN_PATCHES as readonly string[]).includes(id));
  if (unknown.length > 0)
    throw new Error(
      `started by a newer Steward with patches this worker does not know (${unknown.join(', ')}); a worker of that version runs it`,
    );
  return (id) => (startedWith?.includes(id) === true && !markerRecorded(id)) || patched(id);
}

/**
 * Whether the history being replayed records this patch's marker: core announces every marker of a workflow task
 * before the workflow code runs it, and the SDK keeps them in its activator (private there, so read here and checked:
 * an SDK that moved it fails the workflow task rather than guess).
 */
function markerRecorded(id: string): boolean {
  const known = (getActivator() as unknown as { knownPresentPatches?: ReadonlySet<string> }).knownPresentPatches;
  if (typeof known?.has !== 'function')
    throw new Error(
      '@temporalio/workflow no longer keeps the patch markers it was told of: check workflows/patches.ts against it',
    );
  return known.has(id);
}
