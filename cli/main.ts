import { flushTracing } from '../platform/tracing';
import { runCommandLine } from './errors';
import { stewardProgram } from './program';

/** `steward` (bin/steward.cjs runs this file): the commands of program.ts, a failure as errors.ts writes it. */
void runCommandLine(stewardProgram(), process.argv).then(async (exitCode) => {
  process.exitCode = exitCode;
  if (exitCode === 0) return;
  // The failed command's spans too: exiting skips its release. Exiting, since a failed command may hold connections.
  await flushTracing().catch(() => undefined);
  process.exit(exitCode);
});
