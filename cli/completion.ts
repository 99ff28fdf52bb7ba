import type { Command } from 'commander';
import { LIFECYCLE_KINDS } from '../model/naming';
import { UsageError } from './errors';
import { OUTPUT_FORMATS } from './output';

/**
 * `steward completion bash|zsh|fish`: a completion script written from the registered commands and their options, so
 * a new command or flag completes without an edit here. Small templates, not a completion framework: commands,
 * their flags, and the values of -o and --kind.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface CommandWords {
  names: string[];
  summary: string;
  flags: { long?: string; short?: string; summary: string }[];
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
        .map((o) => ({ long: o.long, short: o.short, summary: summaryOf(o.description) })),
      { long: '--help', short: '-h', summary: 'help' },
    ],
  }));
}

const valueWords = { output: OUTPUT_FORMATS.join(' '), kind: LIFECYCLE_KINDS.map((k) => k.toLowerCase()).join(' ') };

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
  case "$prev" in
    -o|--output) COMPREPLY=($(compgen -W "${valueWords.output}" -- "$cur")); return ;;
    --kind) COMPREPLY=($(compgen -W "${valueWords.kind}" -- "$cur")); return ;;
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
  case $words[CURRENT-1] in
    (-o|--output) compadd -- ${valueWords.output}; return ;;
    (--kind) compadd -- ${valueWords.kind}; return ;;
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
          f.long === '--output' && `-x -a ${fishQuoted(valueWords.output)}`,
          f.long === '--kind' && `-x -a ${fishQuoted(valueWords.kind)}`,
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
