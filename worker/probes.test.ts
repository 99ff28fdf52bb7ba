import { livenessProblems, readinessProblems } from './probes';

const reachable = () => Promise.resolve();
const unreachable = () => Promise.reject(new Error('Temporal at 127.0.0.1:7233 did not answer within 2000 ms'));

describe("the worker's probes", () => {
  it.each([
    ['a polling worker is alive', 'RUNNING', []],
    ['a starting worker is alive', 'INITIALIZED', []],
    ['a draining worker is alive (a restart would cut its graceful stop short)', 'DRAINING', []],
    ['a failed worker is dead', 'FAILED', ['worker is FAILED']],
    ['a stopped worker is dead', 'STOPPED', ['worker is STOPPED']],
  ] as const)('%s', (_what, state, expected) => {
    expect(livenessProblems(state)).toEqual(expected);
  });

  it('is ready when it polls and Temporal answers', async () => {
    expect(await readinessProblems('RUNNING', reachable)).toEqual([]);
  });

  it('is not ready, but still alive, while Temporal does not answer', async () => {
    expect(await readinessProblems('RUNNING', unreachable)).toEqual([
      'Temporal at 127.0.0.1:7233 did not answer within 2000 ms',
    ]);
    expect(livenessProblems('RUNNING')).toEqual([]);
  });

  it('is not ready while it does not poll, and says both problems', async () => {
    expect(await readinessProblems('DRAINING', unreachable)).toEqual([
      'worker is DRAINING',
      'Temporal at 127.0.0.1:7233 did not answer within 2000 ms',
    ]);
  });
});
