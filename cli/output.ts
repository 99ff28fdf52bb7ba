import { dumpYaml } from '@kubernetes/client-node';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { jsonPath } from './jsonpath';

/**
 * How the commands print, as kubectl does: `-o json|yaml|jsonpath=<template>` for scripts on every command that
 * prints, `-o name` and
 * `-o wide` where there is a list, `--no-headers` where there is a table. Tables are aligned columns whether a person
 * or a pipe reads them, as kubectl's; colour and bold headers only at a terminal (NO_COLOR honoured).
 */

/** A format a command may print in; `jsonpath` is given with its template, `jsonpath=<template>`. */
export type OutputWord = 'json' | 'yaml' | 'name' | 'wide' | 'jsonpath';
export type OutputFormat = Exclude<OutputWord, 'jsonpath'> | `jsonpath=${string}`;

const JSONPATH = 'jsonpath=';

/**
 * `-o/--output` of a command that prints in `formats`: commander refuses any other, and a jsonpath template that does
 * not parse, before the command does anything (a usage error); help and completion offer the option's choices, so what
 * is offered is what the command takes.
 */
export function outputOption(formats: readonly OutputWord[], description = 'output format'): Option {
  const choices: string[] = formats.map((f) => (f === 'jsonpath' ? JSONPATH : f));
  // Not commander's own check of the choices: a jsonpath template follows its word.
  return new Option('-o, --output <format>', `${description} (default: text for a person)`)
    .choices(choices)
    .argParser((value) => {
      if (choices.includes(JSONPATH) && value.startsWith(JSONPATH) && value.length > JSONPATH.length) {
        try {
          jsonPath(value.slice(JSONPATH.length));
        } catch (error) {
          throw new InvalidArgumentError(`jsonpath: ${(error as Error).message}.`);
        }
        return value;
      }
      if (value !== JSONPATH && choices.includes(value)) return value;
      const shown = choices.map((c) => (c === JSONPATH ? `${JSONPATH}<template>` : c));
      throw new InvalidArgumentError(`Allowed choices are ${shown.join(', ')}.`);
    });
}

/** The `-o` commander took: one of the command's formats (outputOption). */
export const outputOf = (options: Record<string, unknown>) => options.output as OutputFormat | undefined;

/** `-o json`, `-o yaml` or `-o jsonpath=<template>`; undefined for the command's own text. */
export function serialize(value: unknown, format: OutputFormat | undefined): string | undefined {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return dumpYaml(value);
  // No newline added, as kubectl adds none: the template says where lines end.
  if (format?.startsWith(JSONPATH)) return jsonPath(format.slice(JSONPATH.length))(value);
  return undefined;
}

export interface Terminal {
  /** ANSI colour and styles: a terminal, and NO_COLOR unset (https://no-color.org: any non-empty value). */
  color: boolean;
  /** The header row of a table; `--no-headers` leaves it out. */
  headers?: boolean;
}

export function terminalOf(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Terminal {
  return { color: stream.isTTY === true && !env.NO_COLOR };
}

/** `--no-headers`, as kubectl spells it, for a command that prints a table. */
export const addNoHeaders = (command: Command) =>
  command.option('--no-headers', 'print tables without their header row');

const ansi = (code: number) => (text: string) => `\u001b[${code}m${text}\u001b[0m`;
const [bold, red, green, yellow] = [ansi(1), ansi(31), ansi(32), ansi(33)];

/** A state's colour: green when done well, red when a person is needed, yellow when a person stopped it. */
export function colorState(state: string): string {
  // A nested state (the peer-pod machine's `own.tracking`) is coloured by its innermost name.
  if (['ready', 'synced', 'tracking'].includes(state.split('.').at(-1) ?? state)) return green(state);
  if (['stuck', 'givingUp', 'invalid'].includes(state)) return red(state);
  if (state === 'paused') return yellow(state);
  return state;
}

/**
 * Rows under a header, aligned (the header bold when coloured). `styles` colours a column's cells; widths are counted
 * before styling, so colour does not shift the columns.
 */
export function listing(
  header: string[],
  rows: string[][],
  terminal: Terminal,
  styles: Record<number, (cell: string) => string> = {},
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (row: string[], style: (cell: string, i: number) => string) =>
    `${row
      .map((cell, i) =>
        i === row.length - 1 ? style(cell, i) : style(cell, i) + ' '.repeat((widths[i] ?? 0) - cell.length),
      )
      .join('   ')}\n`;
  const plain = (cell: string) => cell;
  return (
    (terminal.headers === false ? '' : line(header, (cell) => (terminal.color ? bold(cell) : cell))) +
    rows.map((row) => line(row, (cell, i) => (terminal.color ? (styles[i] ?? plain)(cell) : cell))).join('')
  );
}

/** An age as kubectl shows it: the two largest units while they say something, one unit after. */
export function age(since: Date, now: Date = new Date()): string {
  const s = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000));
  const [m, h, d] = [Math.floor(s / 60), Math.floor(s / 3600), Math.floor(s / 86400)];
  const two = (big: number, bigUnit: string, small: number, smallUnit: string) =>
    `${big}${bigUnit}${small ? `${small}${smallUnit}` : ''}`;
  if (s < 120) return `${s}s`;
  if (m < 10) return two(m, 'm', s % 60, 's');
  if (h < 3) return `${m}m`;
  if (h < 8) return two(h, 'h', m % 60, 'm');
  if (h < 48) return `${h}h`;
  if (d < 8) return two(d, 'd', h % 24, 'h');
  return `${d}d`;
}
