// The chart's README against its generator (deploy/helm/readme.ts): the committed page is what values.yaml gives now,
// and the generator describes every value or refuses.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadYaml } from '@kubernetes/client-node';
import { headingAnchors } from '../../docs/markdown';
import { chartReadme, README_FILE, valuesSection } from './readme';

const home = 'https://example.com/steward';
const schema = {
  definitions: { name: { type: 'string' } },
  properties: {
    mode: { enum: ['', 'fast'] },
    a: {
      type: 'object',
      properties: { secret: { $ref: '#/definitions/name' }, port: { type: ['integer', 'string'] } },
    },
  },
};

describe("the chart's README", () => {
  it('is what deploy/helm/readme.ts makes of values.yaml now (else run npx tsx deploy/helm/readme.ts)', () => {
    expect(readFileSync(README_FILE, 'utf8')).toBe(chartReadme());
  });

  it("has a row per value: its type from the schema, its default, its comment with the repository's files linked", () => {
    const values = [
      '# Settings; secrets come from Secrets (deploy/README.md).',
      '',
      '# One of two | <modes>.',
      "mode: ''",
      '# A block.',
      'a:',
      '  # The Secret, as `docs/x.md` says.',
      '  secret: s',
      '  # A port.',
      '  port: 80',
    ].join('\n');
    expect(valuesSection(values, schema, home).split('\n')).toEqual([
      'Settings; secrets come from Secrets ([deploy/README.md](https://example.com/steward/blob/main/deploy/README.md)).',
      '',
      '| key | type | default | description |',
      '|---|---|---|---|',
      '| `mode` | "", "fast" | `""` | One of two \\| &lt;modes>. |',
      '| `a` | object | | A block. |',
      '| `a.secret` | string | `"s"` | The Secret, as `docs/x.md` says. |',
      '| `a.port` | integer, string | `80` | A port. |',
    ]);
  });

  it("links into the repository at the chart's home, each to a file there and a heading that page has", () => {
    const { home: chartHome } = loadYaml<{ home: string }>(
      readFileSync(join(__dirname, 'steward', 'Chart.yaml'), 'utf8'),
    );
    const root = join(__dirname, '..', '..');
    const page = readFileSync(README_FILE, 'utf8');
    const links = [...page.matchAll(/\]\((https:[^)\s]+)\)/g)].map(([, url]) => url!);
    const broken = links.filter((url) => {
      const [path = '', anchor] = url.replace(`${chartHome}/blob/main/`, '').split('#');
      if (!url.startsWith(`${chartHome}/blob/main/`) || !existsSync(join(root, path))) return true;
      return anchor !== undefined && !headingAnchors(readFileSync(join(root, path), 'utf8')).has(anchor);
    });
    expect(links.length).toBeGreaterThan(5);
    expect(broken).toEqual([]);
  });

  it('refuses a value with no comment, a comment apart from its key, and a key the schema lacks', () => {
    expect(() => valuesSection('# Intro.\n\na:\n  # A port.\n  port: 1\n  secret: s\n', schema, home)).toThrow(
      'values.yaml: a.secret has no comment above it',
    );
    expect(() => valuesSection('# Intro.\n\n# Apart.\n\n# Mode.\nmode: x\n', schema, home)).toThrow(
      'values.yaml:4: a comment must sit right above the key it describes',
    );
    expect(() => valuesSection('# Intro.\n\n# Other.\nother: 1\n', schema, home)).toThrow(
      'values.schema.json has no other',
    );
  });
});
