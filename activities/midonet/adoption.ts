// Taking over what another controller left in MidoNet (issue 11): a resource this Translation has no record of
// may already be there. What it finds decides, the same way in the pusher and in `steward adopt --dry-run`.
import type { BackendResource } from '../../model/translation/types';
import type { FieldDiff } from './compare';

/** What a push does with a resource it finds in MidoNet (or not) before writing anything. */
export type Finding =
  /** Not in MidoNet: created. */
  | 'missing'
  /** There with exactly the body asked for: taken over without any write. */
  | 'identical'
  /** There with another body, and this Translation's to fix: replaced (or updated in place where MidoNet can). */
  | 'corrected'
  /** There with another body, and possibly someone else's: refused (`ResourceConflict`), left as it is. */
  | 'conflict';

export interface Claim {
  /** This Translation recorded it as pushed (its workflow's record, or its `status.childResources`). */
  recorded: boolean;
  /** Steward's own translation wrote this Translation, so the resource's ID is the one Steward derives for it. */
  translated: boolean;
  /** Another Translation records it. */
  recordedByOther: boolean;
  /** MidoNet can update it in place (PUT): a new body is an update, not a conflict. */
  updatable: boolean;
}

export function classify(observation: { exists: boolean; upToDate?: boolean }, claim: Claim): Finding {
  if (!observation.exists) return 'missing';
  if (observation.upToDate) return 'identical';
  if (claim.recorded || claim.updatable) return 'corrected';
  return claim.translated && !claim.recordedByOther ? 'corrected' : 'conflict';
}

/** Why a resource `conflict`s, in words an operator can act on. */
export function conflictReason(claim: Claim): string {
  return claim.recordedByOther
    ? 'another Translation records it'
    : "it was not pushed by this Translation, whose resources Steward's translation did not write, so its ID is not known to be this Translation's";
}

const ENDPOINTS_BUG_FIELDS = new Set([
  'natTargets[0].addressFrom',
  'natTargets[0].addressTo',
  'natTargets[0].portFrom',
  'natTargets[0].portTo',
  'nwSrcAddress',
]);

/**
 * A known cause of a difference, when there is one: midonet-kubernetes stored `&ep`, the address of its loop
 * variable (pkg/converter/endpoints/converter.go, Go before 1.22), so every endpoint of a Service port got the rules
 * of that port's last endpoint, under its own name and IDs.
 */
export function knownCause(
  translationName: string,
  resource: BackendResource,
  diff: readonly FieldDiff[],
): string | undefined {
  const endpointsRule = translationName.startsWith('endpoints-port.') && resource.kind === 'Rule';
  if (endpointsRule && diff.length > 0 && diff.every((d) => ENDPOINTS_BUG_FIELDS.has(d.field))) {
    return "midonet-kubernetes' Endpoints bug: every endpoint of a Service port got that port's last address (its converter kept a pointer to the loop variable)";
  }
  return undefined;
}

/** `natTargets[0].addressFrom: 10.0.0.3 → 10.0.0.1` for each field, as MidoNet had it and as it is now asked for. */
export const describeDiff = (diff: readonly FieldDiff[]) =>
  diff.map((d) => `${d.field}: ${JSON.stringify(d.observed)} → ${JSON.stringify(d.desired)}`).join(', ');
