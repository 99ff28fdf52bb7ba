import { CommanderError, type Command, type ParseOptions } from 'commander';
import { ConfigError } from '../platform/settings';

/**
 * How every command fails, in one place: `error: <command>: <why>` on stderr (any further lines detail the why), exit
 * 1. A usage error (an unknown option, a missing argument, a bad flag value or setting) exits 2, as getopt's tools
 * do, so a script tells "called wrong" from "did not work"; commander would exit 1 for those too. Commands throw, and
 * never print an error themselves: the command's name is added here, so a message does not begin with it.
 */

/** The command was called wrong: its arguments, flags or settings; exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const FAILED = 1;
const USAGE = 2;

/** Commander's exits that are answers, not failures: --help and --version. */
const ANSWERED = new Set(['commander.helpDisplayed', 'commander.version']);

/** What `command`'s failure prints (nothing when commander already showed the help) and its exit code. */
export function failure(error: unknown, command: string): { text: string; exitCode: number } {
  if (error instanceof CommanderError) {
    if (ANSWERED.has(error.code)) return { text: '', exitCode: 0 };
    // No command given: commander has written the help on stderr.
    if (error.code === 'commander.help') return { text: '', exitCode: USAGE };
    return { text: `error: ${command}: ${error.message.replace(/^error: /, '')}\n`, exitCode: USAGE };
  }
  const why = error instanceof Error ? error.message : String(error);
  const usage = error instanceof UsageError || error instanceof ConfigError;
  return { text: `error: ${command}: ${why}\n`, exitCode: usage ? USAGE : FAILED };
}

/** Runs the command line; a failure is written as `failure` says, and the exit code returned. */
export async function runCommandLine(
  program: Command,
  argv: readonly string[],
  writeErr: (text: string) => void = (text) => process.stderr.write(text),
  options?: ParseOptions,
): Promise<number> {
  let running = program.name();
  program.hook('preSubcommand', (_, subcommand) => {
    running = subcommand.name();
  });
  for (const command of [program, ...program.commands])
    command.exitOverride().configureOutput({ outputError: () => undefined });
  try {
    await program.parseAsync(argv, options);
    return 0;
  } catch (error) {
    const { text, exitCode } = failure(error, running);
    writeErr(text);
    return exitCode;
  }
}
