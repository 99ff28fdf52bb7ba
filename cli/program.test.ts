import { stewardProgram } from './program';

describe('steward --help', () => {
  it('lists every command once, under the heading of what a person comes to do', () => {
    const help = stewardProgram().helpInformation();
    const groups: Record<string, string[]> = Object.fromEntries(
      help
        .split('\n\n')
        .filter((block) => /^[A-Z][a-z]+:\n/.test(block))
        .map((block) => {
          const [heading, ...lines] = block.split('\n');
          const names = lines.filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/[\s|]/)[0]!);
          return [heading!, names];
        }),
    );
    expect(groups).toEqual({
      'Options:': ['--version', '-h,'],
      'Operate:': ['worker', 'starter', 'setup', 'cleanup', 'pause', 'resume', 'refresh', 'sweep'],
      'Inspect:': ['list', 'status', 'version', 'check', 'completion', 'help'],
      'Migrate:': ['adopt', 'uninstall'],
      'Develop:': ['up', 'demo', 'bundle'],
    });
  });
});
