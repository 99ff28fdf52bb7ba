// The guard against mass deletion as every MidoNet deletion of the worker asks it (model/deletion-guard.ts): from
// the worker's watch of the Translation CRD, so a deletion costs no request while nothing is held.
import { ApplicationFailure } from '@temporalio/common';
import { heldMessage, type GuardState } from '../model/deletion-guard';
import { Reason } from '../model/vocabulary';

export interface DeletionGuard {
  /** Refuses (MassDeletionHeld, not retried) while the guard holds; `what` is who deletes, for the message. */
  check(what: string): Promise<void>;
}

export interface GuardSource {
  state(): GuardState;
  synced(): boolean;
  /** The CRD read now. */
  read(): Promise<GuardState>;
}

const SYNC_WAIT_MS = 10_000;

export function createDeletionGuard(
  source: GuardSource,
  sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
) {
  return {
    async check(what: string): Promise<void> {
      // Deleting before the watch has seen the CRD could delete through a hold: wait for it, as a push waits for its index.
      for (let waited = 0; !source.synced(); waited += 200) {
        if (waited >= SYNC_WAIT_MS)
          throw ApplicationFailure.retryable(
            `${what}: the worker's watch of the Translation CRD has not listed it yet, so whether deletions are held is not known`,
            'DeletionGuardUnknown',
          );
        await sleep(200);
      }
      if (!source.state().held) return;
      // The watch may lag behind a go-ahead just given (the operator's confirm wakes the held lifecycles at once).
      const state = await source.read();
      if (state.held && state.trip)
        throw ApplicationFailure.nonRetryable(`${what}: ${heldMessage(state.trip)}`, Reason.MassDeletionHeld);
    },
  } satisfies DeletionGuard;
}
