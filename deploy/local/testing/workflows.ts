import { condition, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type * as activities from './activities';

/** Workflows that exercise the embedded Temporal server in the stack's own tests. */
const { greet } = proxyActivities<typeof activities>({ startToCloseTimeout: '10 seconds' });

export async function greetOnce(name: string): Promise<string> {
  return greet(name);
}

export const proceed = defineSignal('proceed');

/** Waits for `proceed`, then runs one activity: a workflow that must survive a server restart while it waits. */
export async function greetAfterSignal(name: string): Promise<string> {
  let allowed = false;
  setHandler(proceed, () => {
    allowed = true;
  });
  await condition(() => allowed);
  return greet(name);
}
