import { stewardProgram } from './program';

/** `steward` (bin/steward.cjs runs this file): the commands of program.ts, an error as one line on stderr, exit 1. */
stewardProgram()
  .parseAsync(process.argv)
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
