import type { Command } from 'commander';
import { LIFECYCLE_KINDS } from '../model/naming';
import { UsageError } from './errors';

/**
 * `steward completion bash|zsh|fish`: a completion script written from the registered commands and their options, so
 * a new command or flag completes without an edit here. Small templates, not a completion framework: commands,
 * their flags, the values each command's options take (its own -o formats, read from the option) and --kind's.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface CommandWords {
  names: string[];
  summary: string;
  flags: { long?: string; short?: string; summary: string; values?: readonly string[] }[];
}

const summaryOf = (text: string) => text.split(/[:;(]/)[0]!.trim().slice(0, 70);

export function commandWords(program: Command): CommandWords[] {
  return program.commands.map((c) => ({
    names: [c.name(), ...c.aliases()],
    summary: summaryOf(c.description()),
    // Deprecated spellings still work but are not offered.
    flags: [
      ...c.options
        .filter((o) => !o.description.startsWith('deprecated'))
        .map((o) => ({ long: o.long, short: o.short, summary: summaryOf(o.description), values: o.argChoices })),
      { long: '--help', short: '-h', summary: 'help' },
    ],
  }));
}

// Comma-separated, so no choices commander could check: listed here.
const kindWords = LIFECYCLE_KINDS.map((k) => k.toLowerCase()).join(' ');

/** Each option of a command that takes one of a few values: `<command>:<flag>` patterns, one per spelling, and the values. */
const valuedFlags = (commands: CommandWords[]) =>
  commands.flatMap((c) =>
    c.flags.flatMap((f) =>
      f.values
        ? [
            {
              patterns: c.names.flatMap((n) => [f.long, f.short].filter(Boolean).map((flag) => `${n}:${flag!}`)),
              values: f.values.join(' '),
            },
          ]
        : [],
    ),
  );

function bash(commands: CommandWords[]): string {
  const cases = commands.map(
    (c) =>
      `    ${c.names.join('|')}) opts="${c.flags
        .flatMap((f) => [f.long, f.short])
        .filter(Boolean)
        .join(' ')}" ;;`,
  );
  return `# steward completion for bash: source <(steward completion bash)
_steward() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands.flatMap((c) => c.names).join(' ')} --version --help" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}:$prev" in
${valuedFlags(commands)
  .map((v) => `    ${v.patterns.join('|')}) COMPREPLY=($(compgen -W "${v.values}" -- "$cur")); return ;;`)
  .join('\n')}
  esac
  case "$prev" in
    --kind) COMPREPLY=($(compgen -W "${kindWords}" -- "$cur")); return ;;
  esac
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o default -F _steward steward
`;
}

const zshQuoted = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;

function zsh(commands: CommandWords[]): string {
  const described = commands.flatMap((c) =>
    c.names.map((n) => `    ${zshQuoted(`${n}:${c.summary.replace(/:/g, '\\:')}`)}`),
  );
  const cases = commands.map(
    (c) =>
      `    (${c.names.join('|')}) compadd -- ${c.flags
        .flatMap((f) => [f.long, f.short])
        .filter(Boolean)
        .join(' ')} ;;`,
  );
  return `#compdef steward
# steward completion for zsh: source <(steward completion zsh)
_steward() {
  local -a commands
  commands=(
${described.join('\n')}
  )
  if (( CURRENT == 2 )); then _describe command commands; return; fi
  case $words[2]:$words[CURRENT-1] in
${valuedFlags(commands)
  .map((v) => `    (${v.patterns.join('|')}) compadd -- ${v.values}; return ;;`)
  .join('\n')}
  esac
  case $words[CURRENT-1] in
    (--kind) compadd -- ${kindWords}; return ;;
  esac
  case $words[2] in
${cases.join('\n')}
  esac
  _files
}
compdef _steward steward
`;
}

const fishQuoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fish(commands: CommandWords[]): string {
  const lines = commands.flatMap((c) => {
    const seen = `'__fish_seen_subcommand_from ${c.names.join(' ')}'`;
    return [
      ...c.names.map((n) => `complete -c steward -n __fish_use_subcommand -a ${n} -d ${fishQuoted(c.summary)}`),
      ...c.flags.map((f) =>
        [
          `complete -c steward -n ${seen}`,
          f.long && `-l ${f.long.slice(2)}`,
          f.short && `-s ${f.short.slice(1)}`,
          f.values && `-x -a ${fishQuoted(f.values.join(' '))}`,
          f.long === '--kind' && `-x -a ${fishQuoted(kindWords)}`,
          `-d ${fishQuoted(f.summary)}`,
        ]
          .filter(Boolean)
          .join(' '),
      ),
    ];
  });
  return `# steward completion for fish: steward completion fish | source
complete -c steward -f
complete -c steward -n __fish_use_subcommand -l version -d 'print the version'
${lines.join('\n')}
`;
}

export function completionScript(shell: Shell, program: Command): string {
  const commands = commandWords(program);
  return { bash, zsh, fish }[shell](commands);
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion <shell>')
    .description(`print a completion script for ${SHELLS.join(', ')}: source <(steward completion bash)`)
    .action((shell: string, _: unknown, self: Command) => {
      const known = SHELLS.find((s) => s === shell);
      if (!known) throw new UsageError(`<shell> must be one of ${SHELLS.join(', ')}, got "${shell}"`);
      self.configureOutput().writeOut?.(completionScript(known, program));
    });
}
