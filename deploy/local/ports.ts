import { existsSync, readFileSync, statSync } from 'node:fs';

/**
 * Runs `start`, which picks its ports with `freePort` and starts a server logging to `logFile`, again when the server
 * could not bind one of them (what this attempt wrote to the log says so): a free port is only free when picked, and
 * another process (another stack starting, a server of the previous one still closing) may take it meanwhile.
 */
export async function retryWhenPortTaken<T>(logFile: string, start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const logged = existsSync(logFile) ? statSync(logFile).size : 0;
    try {
      return await start();
    } catch (error) {
      // Node and Go say "address already in use", Python "Address already in use".
      const taken =
        existsSync(logFile) && /address already in use/i.test(readFileSync(logFile).subarray(logged).toString('utf8'));
      if (!taken || attempt >= attempts) throw error;
    }
  }
}
