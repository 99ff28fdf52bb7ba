import pino from 'pino';
import type { Observation } from '../../../model/messages';
import type { ObjectRef } from '../../../model/naming';

/** A fake with only the verbs a test names; touching anything else fails the test with the name of what was touched. */
export function partialFake<T extends object>(name: string, verbs: Partial<T>): T {
  return new Proxy(verbs, {
    get(target, property) {
      if (property in target) return target[property as keyof typeof target];
      // Promise resolution probes `then`; answering undefined keeps `await fake` harmless.
      if (property === 'then') return undefined;
      throw new Error(`unexpected call: ${name}.${String(property)} (this test did not expect it)`);
    },
  }) as T;
}

export const silentLogger = pino({ level: 'silent' });

export function observation(overrides: Partial<Observation> & { ref?: ObjectRef } = {}): Observation {
  return {
    ref: { kind: 'Pod', namespace: 'default', name: 'web' },
    uid: 'uid-1',
    generation: 0,
    deleting: false,
    gone: false,
    finalizers: [],
    projection: { kind: 'Pod' },
    ...overrides,
  };
}
