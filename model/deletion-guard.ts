/**
 * The guard against mass deletion (issue 41): when the Translation CRD is being deleted, or a wave of Translations
 * is, Steward deletes nothing in MidoNet until an operator says go on. Its state lives on the CRD it guards, as two
 * annotations: the hold the starter writes when a wave trips it, and the operator's go-ahead (`steward cleanup
 * --confirm-mass-deletion`). A CRD being deleted holds by its own `deletionTimestamp`: nothing needs writing first.
 * Pure: the starter, the workers and the CLI all read the guard through `guardState`.
 */
import { z } from 'zod';
import { TRANSLATION_API } from './naming';

/** The CustomResourceDefinition whose deletion deletes every Translation. */
export const TRANSLATION_CRD = `${TRANSLATION_API.plural}.${TRANSLATION_API.group}`;
/** On the CRD: the wave of deletions that tripped the guard (JSON, `waveHold`), written by the leading starter. */
export const HOLD_ANNOTATION = 'steward.dev/mass-deletion-hold';
/** On the CRD: the operator's go-ahead for one hold (JSON, `goAheadSchema`), written by `steward cleanup`. */
export const GO_AHEAD_ANNOTATION = 'steward.dev/mass-deletion-go-ahead';

const time = z.iso.datetime();

export const waveHoldSchema = z.object({
  /** When it tripped: names this hold (a go-ahead is for one hold). */
  since: time,
  /** Translations deleted within the window, and all there were, when it tripped. */
  deleting: z.number().int().min(0),
  total: z.number().int().min(0),
  windowSeconds: z.number().int().min(1),
});
export type WaveHold = z.infer<typeof waveHoldSchema>;

export const goAheadSchema = z.object({
  /** The `since` of the hold it lets go. */
  since: time,
  /** Who said so, as the API server authenticated them (or as they said, when it cannot tell). */
  by: z.string().min(1),
  reason: z.string().min(1),
  at: time,
});
export type GoAhead = z.infer<typeof goAheadSchema>;

/** What tripped the guard. */
export type Trip =
  | { cause: 'CrdDeleted'; since: string }
  | ({ cause: 'WaveOfDeletions' } & WaveHold)
  /** A hold annotation that does not read: held all the same (never guess a go). */
  | { cause: 'Unreadable'; since: string; problem: string };

export interface GuardState {
  /** MidoNet deletions of Translations' resources wait. */
  held: boolean;
  /** The last trip, held or let go. */
  trip?: Trip;
  /** The last go-ahead given (for this trip or an earlier one). */
  goAhead?: GoAhead;
}

interface CrdMetadata {
  deletionTimestamp?: Date | string;
  annotations?: Record<string, string>;
}

const parsed = <T>(schema: z.ZodType<T>, text: string | undefined) => {
  if (text === undefined) return undefined;
  try {
    return schema.safeParse(JSON.parse(text));
  } catch (error) {
    return { success: false as const, error: new Error((error as Error).message) };
  }
};

const iso = (t: Date | string) => (typeof t === 'string' ? new Date(t) : t).toISOString();

/** The guard as the CRD's metadata says it: no CRD (absent metadata) holds nothing, as nothing can be deleted. */
export function guardState(metadata: CrdMetadata | undefined): GuardState {
  const annotations = metadata?.annotations ?? {};
  const hold = parsed(waveHoldSchema, annotations[HOLD_ANNOTATION]);
  const go = parsed(goAheadSchema, annotations[GO_AHEAD_ANNOTATION]);
  const goAhead = go?.success ? go.data : undefined;
  const trip: Trip | undefined = metadata?.deletionTimestamp
    ? { cause: 'CrdDeleted', since: iso(metadata.deletionTimestamp) }
    : hold?.success
      ? { cause: 'WaveOfDeletions', ...hold.data }
      : hold
        ? { cause: 'Unreadable', since: '', problem: `${HOLD_ANNOTATION}: ${hold.error.message}` }
        : undefined;
  const held = trip !== undefined && goAhead?.since !== trip.since;
  return { held, ...(trip ? { trip } : {}), ...(goAhead ? { goAhead } : {}) };
}

/** What tripped it, in words. */
export function describeTrip(trip: Trip): string {
  switch (trip.cause) {
    case 'CrdDeleted':
      return `the CustomResourceDefinition ${TRANSLATION_CRD} is being deleted (since ${trip.since}), and every Translation with it`;
    case 'WaveOfDeletions':
      return `${trip.deleting} of ${trip.total} Translations were deleted within ${trip.windowSeconds} s (at ${trip.since})`;
    case 'Unreadable':
      return `the hold on ${TRANSLATION_CRD} does not read (${trip.problem})`;
  }
}

export const CONFIRM_COMMAND = 'steward cleanup --confirm-mass-deletion --reason "..."';

/** Why a deletion waits, and how to go on: the refusal's message, the Event's and `steward status`'. */
export const heldMessage = (trip: Trip) =>
  `MidoNet deletions are held: ${describeTrip(trip)}. Nothing is deleted in MidoNet and the finalizers stay until an operator confirms with ${CONFIRM_COMMAND}`;

/** When a wave of deletions trips the guard: settings of the starter, validated at the edge. */
export const waveSettingsSchema = z.object({
  /** More than this share of all Translations deleted within the window trips it. */
  share: z.number().gt(0, 'must be more than 0').max(1, 'must be at most 1'),
  /** ... and at least this many: a small cluster deleting a few Translations is not a mass deletion. */
  minDeletions: z.number().int().min(1, 'must be at least 1'),
  windowSeconds: z.number().int().min(1, 'must be at least 1'),
});
export type WaveSettings = z.infer<typeof waveSettingsSchema>;
export const DEFAULT_WAVE: WaveSettings = { share: 0.5, minDeletions: 10, windowSeconds: 60 };

export interface WaveInput {
  /** The deletion timestamps of the Translations being deleted (ms since the epoch). */
  deletions: readonly number[];
  /** Every Translation known, those being deleted included. */
  total: number;
  now: number;
  /** Deletions before this (the last go-ahead) belong to a wave already let go. */
  after?: number;
}

/**
 * Whether the deletions within the window trip the guard: more than `share` of all Translations, and at least
 * `minDeletions`. Pods and Nodes deleted a few at a time never do; a namespace, a whole list or the CRD does.
 */
export function waveOf({ deletions, total, now, after }: WaveInput, settings: WaveSettings) {
  const from = Math.max(now - settings.windowSeconds * 1000, after ?? -Infinity);
  const deleting = deletions.filter((t) => t >= from && t <= now).length;
  const tripped = deleting >= settings.minDeletions && deleting > settings.share * total;
  return { tripped, deleting, total };
}
