import { condition, sleep, workflowInfo } from '@temporalio/workflow';

/**
 * Takes another path when replayed than when it first ran, as a run does whose history lost signals (chaos seed 82)
 * or whose code changed without a patch: the replay finds a TimerStarted event it scheduled no timer for.
 */
export async function changesOnReplay(): Promise<void> {
  if (!workflowInfo().unsafe.isReplaying) await sleep('1 second');
  await condition(() => false);
}
