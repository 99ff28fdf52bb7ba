import { commandWords, completionScript } from './completion';
import { stewardProgram } from './program';

const program = stewardProgram();
const commands = commandWords(program);

describe('completion scripts, from the registered commands', () => {
  it('bash: offers every command and alias first, and each command its own flags', () => {
    const script = completionScript('bash', program);
    const first = /compgen -W "([^"]*) --version --help"/.exec(script)?.[1]?.split(' ');
    expect(first).toEqual(commands.flatMap((c) => c.names));
    for (const name of [
      'up',
      'worker',
      'list',
      'get',
      'status',
      'cleanup',
      'pause',
      'resume',
      'refresh',
      'starter',
      'demo',
      'sweep',
      'adopt',
      'bundle',
      'uninstall',
      'completion',
    ])
      expect(first).toContain(name);
    for (const command of program.commands)
      expect(script).toContain(`    ${[command.name(), ...command.aliases()].join('|')}) opts="`);
    expect(script).toMatch(/list\|get\) opts="[^"]*--all-namespaces -A [^"]*--output -o /);
    expect(script).toContain(
      'list:--output|list:-o|get:--output|get:-o) COMPREPLY=($(compgen -W "wide json yaml name jsonpath="',
    );
    expect(script).toContain('complete -o default -F _steward steward');
  });

  it('offers each command only the -o formats it takes, and the values of any option with choices', () => {
    const script = completionScript('bash', program);
    const offered = (name: string) =>
      new RegExp(`\\b${name}:-o\\b[^)]*\\) COMPREPLY=\\(\\$\\(compgen -W "([^"]*)"`).exec(script)?.[1]?.split(' ');
    expect(offered('status')).toEqual(['json', 'yaml', 'jsonpath=']);
    expect(offered('version')).toEqual(['json', 'yaml', 'jsonpath=']);
    expect(offered('list')).toEqual(['wide', 'json', 'yaml', 'name', 'jsonpath=']);
    for (const command of program.commands) {
      const output = command.options.find((o) => o.long === '--output');
      if (!output) continue;
      expect([command.name(), offered(command.name())]).toEqual([command.name(), output.argChoices]);
      // What is not offered is refused: the offer and the check read one list.
      expect(() => output.parseArg?.('table', undefined)).toThrow('Allowed choices are');
    }
    expect(script).toContain('up:--temporal) COMPREPLY=($(compgen -W "dev cluster"');
  });

  it('offers the new spelling, not the deprecated one', () => {
    const worker = /\n {4}worker\) opts="([^"]*)"/.exec(completionScript('bash', program))?.[1]?.split(' ');
    expect(worker).toContain('--temporal-namespace');
    expect(worker).not.toContain('--namespace');
  });

  it('zsh: a #compdef script describing every command', () => {
    const script = completionScript('zsh', program);
    expect(script.startsWith('#compdef steward\n')).toBe(true);
    for (const name of commands.flatMap((c) => c.names)) expect(script).toContain(`    '${name}:`);
    expect(script).toContain('(list|get) compadd -- ');
  });

  it('fish: every command under __fish_use_subcommand, and -o with its values', () => {
    const script = completionScript('fish', program);
    for (const name of commands.flatMap((c) => c.names))
      expect(script).toContain(`complete -c steward -n __fish_use_subcommand -a ${name} -d `);
    expect(script).toContain(
      "complete -c steward -n '__fish_seen_subcommand_from list get' -l output -s o -x -a 'wide json yaml name jsonpath='",
    );
    expect(script).toContain(
      "complete -c steward -n '__fish_seen_subcommand_from status' -l output -s o -x -a 'json yaml jsonpath='",
    );
  });
});

describe('steward completion', () => {
  it('prints the script on stdout, and refuses an unknown shell by name', async () => {
    const run = (...args: string[]) =>
      stewardProgram()
        .exitOverride()
        .parseAsync(['completion', ...args], { from: 'user' });
    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((s) => written.push(String(s)) > 0);
    try {
      await run('bash');
    } finally {
      write.mockRestore();
    }
    expect(written.join('')).toContain('_steward()');
    await expect(run('tcsh')).rejects.toThrow('<shell> must be one of bash, zsh, fish, got "tcsh"');
  });
});
