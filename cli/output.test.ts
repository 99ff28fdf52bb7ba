import { age, colorState, listing, serialize, terminalOf } from './output';

describe('terminalOf', () => {
  it.each<[string, boolean | undefined, NodeJS.ProcessEnv, { color: boolean }]>([
    ['a terminal: colour', true, {}, { color: true }],
    ['a terminal with NO_COLOR: no colour', true, { NO_COLOR: '1' }, { color: false }],
    ['an empty NO_COLOR does not count (no-color.org)', true, { NO_COLOR: '' }, { color: true }],
    ['a pipe: plain', undefined, {}, { color: false }],
  ])('%s', (_, isTTY, env, expected) => expect(terminalOf({ isTTY }, env)).toEqual(expected));
});

describe('listing', () => {
  const header = ['KIND', 'NAMESPACE', 'NAME', 'STATE'];
  const rows = [
    ['Node', '', 'node-1', 'ready'],
    ['Pod', 'default', 'nginx', 'stuck'],
  ];

  it('is aligned columns without colour, piped or under NO_COLOR, as kubectl prints', () => {
    expect(listing(header, rows, terminalOf({ isTTY: undefined }, {}))).toBe(
      [
        'KIND   NAMESPACE   NAME     STATE',
        'Node               node-1   ready',
        'Pod    default     nginx    stuck',
        '',
      ].join('\n'),
    );
  });

  it('leaves the header row out with --no-headers', () => {
    expect(listing(header, rows, { color: false, headers: false })).toBe(
      ['Node               node-1   ready', 'Pod    default     nginx    stuck', ''].join('\n'),
    );
  });

  it('colours the header and the styled column without shifting the columns', () => {
    const out = listing(header, rows, { color: true }, { 3: colorState });
    expect(out).toContain('\u001b[1mKIND\u001b[0m   ');
    expect(out).toContain('node-1   \u001b[32mready\u001b[0m');
    expect(out).toContain('nginx    \u001b[31mstuck\u001b[0m');
    // eslint-disable-next-line no-control-regex
    expect(out.replace(/\u001b\[\d+m/g, '')).toBe(listing(header, rows, { color: false }));
  });
});

describe('colorState', () => {
  it("colours a nested state (the peer-pod machine's) by its innermost name", () => {
    expect(colorState('own.tracking')).toBe('\u001b[32mown.tracking\u001b[0m');
    expect(colorState('tracked.tracking')).toBe('\u001b[32mtracked.tracking\u001b[0m');
    expect(colorState('own.creatingVm')).toBe('own.creatingVm');
  });
});

describe('serialize', () => {
  it('writes JSON and YAML, and nothing for the text formats', () => {
    expect(serialize({ items: [{ kind: 'Pod' }] }, 'json')).toBe(
      '{\n  "items": [\n    {\n      "kind": "Pod"\n    }\n  ]\n}\n',
    );
    expect(serialize({ items: [{ kind: 'Pod' }] }, 'yaml')).toBe('items:\n  - kind: Pod\n');
    expect(serialize({}, 'wide')).toBeUndefined();
    expect(serialize({}, undefined)).toBeUndefined();
  });
});

describe('age', () => {
  const now = new Date('2026-01-10T00:00:00Z');
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  it.each([
    [5, '5s'],
    [119, '119s'],
    [150, '2m30s'],
    [300, '5m'],
    [45 * 60, '45m'],
    [5 * 3600 + 30 * 60, '5h30m'],
    [30 * 3600, '30h'],
    [3 * 86400 + 5 * 3600, '3d5h'],
    [20 * 86400, '20d'],
    [-3, '0s'],
  ])('%ss ago is %s, as kubectl shows it', (seconds, shown) => expect(age(ago(seconds), now)).toBe(shown));
});
