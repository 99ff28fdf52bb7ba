// How far a push of a Translation got, as its workflow learns it when the push fails: the activity's heartbeat and its
// failure carry it (activities/midonet/push.ts), the workflow turns it into what each resource's record now says.
// Without it, a resource a failed push had made stayed `pending` in the record, and the next push, a new activity,
// took it for someone else's and never deleted it (chaos seed 108: two hand-written Translations' bridges and chains
// left in MidoNet after their deletion).
import { z } from 'zod';
import { identifyIfJson, type BackendResource, type PushedResource } from './model';

/**
 * Indices into the resources the push was given. Not exported: the SDK deep-freezes what the workflows' preloaded
 * modules export (this one comes with machines/translation.ts), and a zod schema writes into itself when first used
 * (model/message-schemas.ts); parseProgress hands it out.
 */
const pushProgressSchema = z.object({
  /** Resources before this index were pushed: made, updated, adopted, or found made by someone else. */
  done: z.number().int().nonnegative(),
  /** Of those, the ones found in MidoNet as asked and made by someone else. */
  foreign: z.array(z.number().int().nonnegative()),
  /** The push was writing the resource at `done` when it stopped: that one may be in MidoNet. */
  writing: z.boolean(),
  /**
   * A retry: the attempts before it may have written any resource from `done` on (their last heartbeat can lag behind
   * their writes, and this attempt may fail before it reaches them). Absent for a first attempt.
   */
  resumed: z.boolean().optional(),
  /**
   * The generation of the resources the push read (a Translation sent by reference): the indices name that
   * generation's resources only. Absent for resources the workflow gave, which do not change between attempts.
   */
  generation: z.number().int().nonnegative().optional(),
});
export type PushProgress = z.infer<typeof pushProgressSchema>;

/** A failure's details carry the progress under this key, beside the backend's own details. */
export const PUSH_PROGRESS = 'pushProgress';

/** A heartbeat's details as a push's progress, or undefined when they are not one. */
export function parseProgress(value: unknown): PushProgress | undefined {
  const parsed = pushProgressSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The progress among a failure's details, or undefined. */
export function progressIn(details: readonly unknown[] | undefined): PushProgress | undefined {
  for (const detail of details ?? []) {
    const progress = parseProgress((detail as Record<string, unknown> | null)?.[PUSH_PROGRESS]);
    if (progress) return progress;
  }
  return undefined;
}

/** What a failed push did, by resource key. */
export interface PushOutcome {
  /** Made, updated or adopted by it: this Translation's, though the push as a whole did not report. */
  made: string[];
  /** Found as asked and made by someone else: never deleted by this Translation. */
  foreign: string[];
  /** Maybe written: the one being written, or, for a push lost with its worker or retried, all from `done` on. */
  maybe: string[];
}

/**
 * The outcome of a failed push of `resources`. `lost`: the push stopped without saying where (its heartbeat timed out,
 * its worker went): the heartbeat the server kept may lag behind what it wrote, so everything from there on may be in
 * MidoNet. So for a retry (`resumed`): what the attempts before it wrote past `done` is unknown to it (chaos seed 136:
 * a retry failing on its first delete said nothing of the chain its first attempt had made, which was then dropped
 * from the record and left in MidoNet when the Translation went).
 */
export function outcomeOf(
  resources: BackendResource[],
  progress: PushProgress | undefined,
  lost: boolean,
): PushOutcome {
  const keys = resources.map((r) => identifyIfJson(r)?.key);
  const done = Math.min(progress?.done ?? 0, keys.length);
  const foreign = new Set(progress?.foreign ?? []);
  const until = lost || progress?.resumed ? keys.length : progress?.writing ? done + 1 : done;
  const outcome: PushOutcome = { made: [], foreign: [], maybe: [] };
  keys.slice(0, until).forEach((key, i) => {
    if (key === undefined) return;
    if (i >= done) outcome.maybe.push(key);
    else (foreign.has(i) ? outcome.foreign : outcome.made).push(key);
  });
  return outcome;
}

/**
 * The record after a failed push: what it made is this Translation's (`unverified`: not vouched for until a push
 * reports), what it found someone else's is `foreign`, what it may have written stays `pending` and is marked `tried`
 * (a later push finding it as asked takes it as its own); what no push ever tried is dropped (found later, it is
 * judged as found).
 */
export function afterFailedPush(record: PushedResource[], outcome: PushOutcome): PushedResource[] {
  const made = new Set(outcome.made);
  const foreign = new Set(outcome.foreign);
  const maybe = new Set(outcome.maybe);
  return record.flatMap((entry): PushedResource[] => {
    if (entry.state !== 'pending') return [entry];
    // The body the push asked for is the latest one asked.
    const { kind, parent, key, id, alsoAsked } = entry;
    const asked = { kind, parent, key, id, body: alsoAsked?.at(-1) ?? entry.body };
    if (made.has(entry.key)) return [{ ...asked, state: 'unverified' }];
    if (foreign.has(entry.key)) return [{ ...asked, state: 'foreign' }];
    if (maybe.has(entry.key)) return [{ ...entry, tried: true }];
    return entry.tried ? [entry] : [];
  });
}
