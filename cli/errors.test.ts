import { runCommandLine } from './errors';
import { stewardProgram } from './program';

/** `steward <args…>` in this process: what it wrote on stderr and its exit code; stdout dropped. */
async function steward(...args: string[]): Promise<{ stderr: string; code: number }> {
  let stderr = '';
  const program = stewardProgram();
  for (const command of [program, ...program.commands]) command.configureOutput({ writeOut: () => undefined });
  const code = await runCommandLine(program, args, (text) => (stderr += text), { from: 'user' });
  return { stderr, code };
}

describe('a failure, whatever the command: "error: <command>: <why>" on stderr', () => {
  it.each<[string, string[], RegExp, number]>([
    [
      'a bad flag value is a usage error',
      ['list', '-o', 'table'],
      /^error: list: option '-o, --output <format>' argument 'table' is invalid\. Allowed choices are wide, json, yaml, name, jsonpath=<template>\.\n$/,
      2,
    ],
    [
      'an unknown option, refused by commander, is named with the command',
      ['status', '--bogus'],
      /^error: status: unknown option '--bogus'\n$/,
      2,
    ],
    [
      'a jsonpath template that does not parse is refused before the command runs',
      ['status', 'pod/x', '-o', 'jsonpath={.items'],
      /^error: status: option '-o, --output <format>' argument 'jsonpath=\{\.items' is invalid\. jsonpath: unclosed "\{" at 0 of \{\.items\.\n$/,
      2,
    ],
    [
      'a jsonpath with no template',
      ['list', '-o', 'jsonpath='],
      /^error: list: .*Allowed choices are .*jsonpath=<template>\.\n$/,
      2,
    ],
    ['a missing argument', ['completion'], /^error: completion: missing required argument 'shell'\n$/, 2],
    ['an unknown command', ['frobnicate'], /^error: steward: unknown command 'frobnicate'\n$/, 2],
    [
      'a bad setting, named by flag and variable, is a usage error',
      ['setup', '--address', 'nowhere'],
      /^error: setup: invalid configuration:\n {2}--address \/ TEMPORAL_ADDRESS: must be host:port, got "nowhere"\n$/,
      2,
    ],
    [
      'flags that contradict each other',
      ['up', '--workers', '2', '--no-steward'],
      /^error: up: --workers and --starters run Steward, which --no-steward leaves out\n$/,
      2,
    ],
    [
      'a command that could not do its work exits 1',
      ['demo', '--stack', '/nonexistent/stack.json'],
      /^error: demo: --stack \/nonexistent\/stack\.json: no such file; /,
      1,
    ],
  ])('%s', async (_sentence, args, stderr, code) => {
    const result = await steward(...args);
    expect(result.stderr).toMatch(stderr);
    expect(result.code).toBe(code);
  });

  it('is no failure to ask for help or the version', async () => {
    expect(await steward('--version')).toEqual({ stderr: '', code: 0 });
    expect(await steward('list', '--help')).toEqual({ stderr: '', code: 0 });
  });
});
