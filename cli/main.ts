import { flushTracing } from '../platform/tracing';
import { stewardProgram } from './program';

/** `steward` (bin/steward.cjs runs this file): the commands of program.ts, an error as one line on stderr, exit 1. */
stewardProgram()
  .parseAsync(process.argv)
  .catch(async (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    // The failed command's spans too: exiting skips its release.
    await flushTracing().catch(() => undefined);
    process.exit(1);
  });
