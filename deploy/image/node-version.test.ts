import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PHASES } from '../local/jest/lanes';
import { repoRoot } from '../local/paths';
import { IMAGE_NODE_VERSION } from './build';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');
const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
const imageMajor = Number(IMAGE_NODE_VERSION.split('.')[0]);
/** The majors the Dockerfile's stages start from. */
const dockerfileNodeMajors = () =>
  [...read('deploy/image/Dockerfile').matchAll(/^FROM\s+node:(\d+)\b/gm)].map((m) => Number(m[1]));

/** The Markdown files a reader meets: the READMEs of the top and of each room, and docs/. */
const markdown = [
  'README.md',
  ...readdirSync(repoRoot, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules')
    .flatMap((e) =>
      readdirSync(join(repoRoot, e.name))
        .filter((f) => f === 'README.md')
        .map((f) => `${e.name}/${f}`),
    ),
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('the Node versions', () => {
  it("are the image's for the unit tests: npm run image's, the Dockerfile's every stage, the unit lane of npm test", () => {
    expect(dockerfileNodeMajors()).toEqual([imageMajor, imageMajor]);
    expect(
      PHASES.flat()
        .filter((lane) => lane.imageNode)
        .map((lane) => lane.name),
    ).toEqual(['unit']);
  });

  it("are said once: the README gives package.json's engines, no other page names a Node of its own but the image's", () => {
    expect(engines).toMatch(/^>=\d+\.\d+\.\d+$/);
    const minimum = engines.slice(2).replace(/\.0$/, '');
    expect(read('README.md')).toContain(`Node ≥ ${minimum} (package.json's \`engines\``);
    const named = markdown.flatMap((file) =>
      [...read(file).matchAll(/\bNode(?:\.js)? (?:≥ )?(\d+)/g)].map((m) => ({ file, major: Number(m[1]) })),
    );
    const checkout = Number(minimum.split('.')[0]);
    expect(named.filter(({ major }) => major !== checkout && major !== imageMajor)).toEqual([]);
    expect(named.filter(({ file, major }) => major === checkout && file !== 'README.md')).toEqual([]);
  });
});
