import type * as DevStack from '../deploy/local';

/**
 * The embedded development stack (deploy/local: dev servers, the MidoNet emulator), loaded only when `steward up` or
 * `steward demo` runs, so every other command works without it: the container image leaves it out. A require rather
 * than `import()`: tsx's CommonJS hook, which bin/steward.cjs installs, compiles what `require` loads, not `import()`.
 */
export function loadDevStack(): typeof DevStack {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on use; see above
    return require('../deploy/local') as typeof DevStack;
  } catch (error) {
    // Only the stack itself being absent: a module missing inside it is a broken checkout, reported as it is.
    if (
      (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
      (error as Error).message.startsWith("Cannot find module '../deploy/local'")
    ) {
      throw new Error(
        'the embedded development stack (deploy/local) is not in this installation (the container image leaves it out): run this command from a checkout of the repository',
      );
    }
    throw error;
  }
}
