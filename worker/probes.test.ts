import { livenessProblems, readinessProblems } from './probes';

const reachable = () => Promise.resolve();
const unreachable = (what: string) => () => Promise.reject(new Error(`${what} did not answer within 2000 ms`));

describe("the worker's probes", () => {
  it.each([
    ['a polling worker is alive', 'RUNNING', []],
    ['a starting worker (still waiting for Temporal) is alive', 'INITIALIZED', []],
    ['a draining worker is alive (a restart would cut its graceful stop short)', 'DRAINING', []],
    ['a failed worker is dead', 'FAILED', ['worker is FAILED']],
    ['a stopped worker is dead', 'STOPPED', ['worker is STOPPED']],
  ] as const)('%s', (_what, state, expected) => {
    expect(livenessProblems(state)).toEqual(expected);
  });

  it('is ready when it polls and every check answers', async () => {
    expect(await readinessProblems('RUNNING', [reachable, reachable])).toEqual([]);
  });

  it('is not ready, but still alive, while Temporal does not answer', async () => {
    expect(await readinessProblems('RUNNING', [unreachable('Temporal at 127.0.0.1:7233'), reachable])).toEqual([
      'Temporal at 127.0.0.1:7233 did not answer within 2000 ms',
    ]);
    expect(livenessProblems('RUNNING')).toEqual([]);
  });

  it('is not ready while it does not poll, and says every problem in order', async () => {
    expect(
      await readinessProblems('INITIALIZED', [unreachable('Temporal at 127.0.0.1:7233'), unreachable('Kubernetes')]),
    ).toEqual([
      'worker is INITIALIZED',
      'Temporal at 127.0.0.1:7233 did not answer within 2000 ms',
      'Kubernetes did not answer within 2000 ms',
    ]);
  });
});
