import { ApplicationFailure } from '@temporalio/common';

/** Activities for the worker's own tests: one that answers and one that fails with a named type. */
export const testActivities = {
  testEcho: async ({ text }: { text: string }): Promise<string> => Promise.resolve(text),
  testFail: async (_input: Record<string, never>): Promise<never> =>
    Promise.reject(ApplicationFailure.nonRetryable('the test backend refused', 'TestFailure')),
};
