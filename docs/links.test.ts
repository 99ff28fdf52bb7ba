import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { headingAnchors, withoutCode } from './markdown';

/**
 * The README and the docs link to each other and into the repository: every relative link must reach a file that
 * exists and, when it names a heading of a Markdown page (`#anchor`, on the page itself or another), that heading;
 * and the README stays short.
 */
const root = resolve(__dirname, '..');
const docs = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const pages = [
  'README.md',
  ...docs,
  'deploy/README.md',
  'worker/README.md',
  'model/README.md',
  'platform/README.md',
  'model/translation/README.md',
];

/** `[text](target)` and `![alt](target)`, with an optional "title"; outside fenced code blocks and inline code. */
function relativeLinks(markdown: string): { text: string; target: string }[] {
  const prose = markdown
    .replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1 *$/gm, '')
    .replace(/(`+)[^`\n][\s\S]*?\1/g, (code) => code.replace(/[[\]()]/g, ' '));
  const links = [...prose.matchAll(/\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)];
  return links
    .map((match) => ({ text: match[1] ?? '', target: match[2] ?? '' }))
    .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** The links of `page` (a path from the repository root) whose target file does not exist, relative to the page. */
function brokenLinks(
  page: string,
  markdown: string,
  exists: (path: string) => boolean = existsSync,
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): string[] {
  return relativeLinks(markdown)
    .filter(({ target }) => {
      const [pathPart = '', anchor] = target.replace(/\?[^#]*/, '').split('#');
      const path = pathPart ? resolve(root, dirname(page), decodeURIComponent(pathPart)) : resolve(root, page);
      if (pathPart && !exists(path)) return true;
      if (anchor === undefined || !path.endsWith('.md')) return false;
      return !headingAnchors(pathPart ? read(path) : markdown).has(decodeURIComponent(anchor).toLowerCase());
    })
    .map(({ text, target }) => `${page}: [${text}](${target})`);
}

/** The repository's top-level folders: a code span starting with one names a file of the repository. */
const topLevel = new Set(
  readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules' && !entry.name.startsWith('.'))
    .map((entry) => entry.name),
);

/**
 * Code spans of `page` that name a repository file that is not there: a path under one of its top-level folders, or
 * any Markdown page (relative to the root or to the page; a module may be named without its `.ts`). Patterns and
 * placeholders (`*`, `<…>`, `{…}`) and what follows `:` or `#` (a line, a symbol) are not read.
 */
function missingFiles(page: string, markdown: string, exists: (path: string) => boolean = existsSync): string[] {
  return [...withoutCode(markdown).matchAll(/`([^`\n]+)`/g)]
    .map(([, span]) => span!.trim())
    .filter((span) => !/[\s*<>{}]/.test(span))
    .map((span) => span.split(/[:#]/)[0]!)
    .filter((path) => topLevel.has(path.split('/')[0]!) || path.endsWith('.md'))
    .filter((path) =>
      [resolve(root, path), resolve(root, dirname(page), path)].every(
        (candidate) => !exists(candidate) && !exists(`${candidate}.ts`),
      ),
    )
    .map((path) => `${page}: \`${path}\``);
}

/** The manifests whose comments name repository files (the kustomize base and the chart's values, read by users). */
const commentedYaml = [
  ...readdirSync(join(root, 'deploy/manifests'))
    .filter((name) => name.endsWith('.yaml'))
    .map((name) => `deploy/manifests/${name}`),
  'deploy/helm/steward/values.yaml',
];

/**
 * Paths in the `#` comments of a YAML file that name a repository file that is not there: a path under one of its
 * top-level folders (`deploy/README.md`, `bench/results/….md`, `deploy/overlays/`), relative to the root; a module may
 * be named without its `.ts`. What follows `:` or `#` (a line, a symbol) is not read.
 */
function missingFilesInComments(yaml: string, exists: (path: string) => boolean = existsSync): string[] {
  return [...yaml.matchAll(/(?:^|\s)#(.*)$/gm)]
    .flatMap(([, comment]) => [...comment!.matchAll(/(?<![\w./-])([\w-]+(?:\/[\w.-]+)+\/?)/g)])
    .map(([, path]) => path!.replace(/[.]+$/, '').split(/[:#]/)[0]!)
    .filter((path) => topLevel.has(path.split('/')[0]!))
    .filter((path) => !exists(resolve(root, path)) && !exists(`${resolve(root, path)}.ts`));
}

describe('links in the README and the docs', () => {
  it('finds relative links, and only those', () => {
    const sample = [
      '[a](docs/a.md) [b](../b.md#anchor) ![c](img/c.svg "title")',
      '[web](https://example.com) [mail](mailto:a@example.com) [here](#section)',
      '`[code](not/a/link.md)`',
      '```',
      '[fenced](not/a/link.md)',
      '```',
    ].join('\n');
    expect(relativeLinks(sample)).toEqual([
      { text: 'a', target: 'docs/a.md' },
      { text: 'b', target: '../b.md#anchor' },
      { text: 'c', target: 'img/c.svg' },
      { text: 'here', target: '#section' },
    ]);
  });

  it('names headings as GitHub anchors them', () => {
    const page = [
      '# `steward up`',
      '## Using what you already run',
      '## Notes',
      '## Notes',
      '```',
      '# not a heading',
      '```',
    ];
    expect([...headingAnchors(page.join('\n'))]).toEqual([
      'steward-up',
      'using-what-you-already-run',
      'notes',
      'notes-1',
    ]);
  });

  it('resolves a link relative to the page, checks its anchor, and names page and link when it is broken', () => {
    const pagesThere: Record<string, string> = {
      [resolve(root, 'deploy/README.md')]: '# Deploy\n## How many workers\n',
      [resolve(root, 'docs/README.md')]: '# Docs\n',
    };
    const exists = (path: string) => path in pagesThere;
    const read = (path: string) => pagesThere[path] ?? '';
    const check = (markdown: string) => brokenLinks('docs/x.md', markdown, exists, read);
    expect(check('[ok](../deploy/README.md#how-many-workers) [ok](README.md) [ok](#here)\n## Here')).toEqual([]);
    expect(check('see [the guide](deploy/README.md)')).toEqual(['docs/x.md: [the guide](deploy/README.md)']);
    expect(check('[gone](../deploy/README.md#how-many-pods)')).toEqual([
      'docs/x.md: [gone](../deploy/README.md#how-many-pods)',
    ]);
    expect(check('[gone](#nowhere)')).toEqual(['docs/x.md: [gone](#nowhere)']);
  });

  it.each(pages)('%s exists and every relative link in it reaches a file', (page) => {
    const file = join(root, page);
    expect(relative(root, file)).toBe(page);
    expect(existsSync(file)).toBe(true);
    const markdown = readFileSync(file, 'utf8');
    if (page === 'README.md' || page === 'docs/README.md') expect(relativeLinks(markdown).length).toBeGreaterThan(5);
    expect(brokenLinks(page, markdown)).toEqual([]);
  });

  it('finds code spans naming a repository file that is not there, and only those', () => {
    const there = new Set(['docs/a.md', 'docs/b.md', 'cli/worker.ts'].map((path) => resolve(root, path)));
    const check = (markdown: string) => missingFiles('docs/x.md', markdown, (path) => there.has(path));
    expect(check('`docs/a.md` `b.md` `cli/worker` `cli/worker.ts:12` `stack.json` `docs/*.md` `npm test`')).toEqual([]);
    expect(check('see `ref/performance.md` and `cli/gone.ts#main`\n```\n`docs/fenced.md`\n```')).toEqual([
      'docs/x.md: `ref/performance.md`',
      'docs/x.md: `cli/gone.ts`',
    ]);
  });

  it.each(pages)('%s names no repository file that is not there', (page) => {
    expect(missingFiles(page, readFileSync(join(root, page), 'utf8'))).toEqual([]);
  });

  it('finds paths in YAML comments naming a repository file that is not there, and only those', () => {
    const there = new Set(
      ['deploy/README.md', 'bench/results/burst-1.md', 'deploy/overlays'].map((p) => resolve(root, p)),
    );
    const check = (yaml: string) => missingFilesInComments(yaml, (path) => there.has(path));
    const yaml = [
      '# Measured (bench/results/burst-1.md); deploy/README.md, "How many workers". Overlays in deploy/overlays/.',
      'kind: Deployment # the guide: deploy/GUIDE.md',
      'image: registry.example.com/steward:0.1.0',
      '  # bench/results/burst-0.md, midonet.org/host-id, kubernetes.endpoint.host/port',
    ].join('\n');
    expect(check(yaml)).toEqual(['deploy/GUIDE.md', 'bench/results/burst-0.md']);
  });

  it.each(commentedYaml)('%s names in its comments no repository file that is not there', (file) => {
    expect(missingFilesInComments(readFileSync(join(root, file), 'utf8'))).toEqual([]);
  });

  it('keeps README.md at 200 lines at most', () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n').length;
    expect(lines).toBeLessThanOrEqual(200);
  });
});
