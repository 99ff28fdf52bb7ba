import { ApplicationFailure } from '@temporalio/common';
import type { GuardState } from '../model/deletion-guard';
import { createDeletionGuard } from './deletion-guard';

const held: GuardState = { held: true, trip: { cause: 'CrdDeleted', since: '2025-01-01T00:00:00.000Z' } };
const free: GuardState = { held: false };
const noWait = () => Promise.resolve();

describe('a deletion asks the guard against mass deletion', () => {
  it('goes on while the watch sees nothing held, without a read', async () => {
    const read = jest.fn<Promise<GuardState>, []>();
    await createDeletionGuard({ state: () => free, synced: () => true, read }, noWait).check('pod/default/web');
    expect(read).not.toHaveBeenCalled();
  });

  it('is refused, not retried, while the CRD read now still holds, with how to go on', async () => {
    const guard = createDeletionGuard({ state: () => held, synced: () => true, read: () => Promise.resolve(held) });
    const refusal = await guard.check('translation/default/web').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApplicationFailure);
    expect(refusal).toMatchObject({ type: 'MassDeletionHeld', nonRetryable: true });
    expect((refusal as Error).message).toMatch(
      /^translation\/default\/web: MidoNet deletions are held: .*confirm-mass-deletion/,
    );
  });

  it('goes on when the watch lags behind a go-ahead the CRD already has', async () => {
    const guard = createDeletionGuard({ state: () => held, synced: () => true, read: () => Promise.resolve(free) });
    await expect(guard.check('pod/default/web')).resolves.toBeUndefined();
  });

  it('waits for the watch to list the CRD, and fails retryably when it does not', async () => {
    const guard = createDeletionGuard(
      { state: () => free, synced: () => false, read: () => Promise.resolve(free) },
      noWait,
    );
    await expect(guard.check('pod/default/web')).rejects.toMatchObject({
      type: 'DeletionGuardUnknown',
      nonRetryable: false,
    });
  });
});
